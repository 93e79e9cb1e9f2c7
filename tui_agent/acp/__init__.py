"""``tui-agent acp``: the agent as an Agent Client Protocol agent, for editors (Zed,
JetBrains, Neovim, ...) that host it over stdio.

A third front end beside ``ui`` and ``headless``: it builds its runs through
:mod:`tui_agent.wiring` like them, renders the core's events as ``session/update``
notifications (:mod:`.updates`), and answers the gate through the editor's
``session/request_permission`` (:mod:`.gate`). Nothing below the front ends knows ACP.
"""
