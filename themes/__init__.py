"""tui-agent's bundled themes; installed as the package ``tui_agent.themes``."""
