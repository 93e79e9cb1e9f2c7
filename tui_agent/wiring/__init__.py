"""The composition root: :mod:`.build` turns settings into the running parts, and
:mod:`.runtime` holds them for a front end that stays open (the chat app).

Front ends (``tui_agent.ui``, ``tui_agent.headless``) build through here and nothing
below imports it: core, code mode, tools and config never know which front end runs.
"""
