"""``python -m tui_agent``: the same as the ``tui-agent`` command."""

import os

try:
    from tui_agent.cli import entry
except KeyboardInterrupt:  # Ctrl-C while the command itself loads: an interrupt, no traceback
    os.write(2, b"\ntui-agent: interrupted\n")  # said as at any other moment of a run
    os._exit(130)

entry()
