"""The first-party MCP server (``tui-agent tools serve``, the server ``local``): file,
search and shell tools, their sandbox and the checkpoints that ``/rewind`` restores. It
imports the MCP SDK and :mod:`tui_agent.config` only, and runs like any stdio server:
through the hub, the gate and the rules, with nothing of its own in the core."""
