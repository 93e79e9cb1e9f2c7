from tui_agent.cli import entry

entry()
