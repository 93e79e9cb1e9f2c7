"""The Textual front end: it renders the core's events and answers its gate, and never
talks to litellm or MCP itself (it goes through :mod:`tui_agent.wiring.runtime`).

Heavy modules load lazily: importing this package costs nothing.
"""
