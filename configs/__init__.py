"""Example configs; installed as the package ``tui_agent.configs``."""
