"""tui-agent on a plain terminal or a pipe: ``tui-agent run`` (one turn, or the
line-mode chat), and the commands that print and exit (``servers``, ``stubs``,
``sessions``, ``export``). Runs are built by :mod:`tui_agent.wiring`; nothing here
imports the chat app.
"""
