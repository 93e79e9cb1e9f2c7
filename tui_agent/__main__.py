"""``python -m tui_agent``: the same as the ``tui-agent`` command."""

from tui_agent.cli import entry

entry()
