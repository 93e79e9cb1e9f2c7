"""Hooks in Claude Code's format: the user's commands run at the loop's events
(:mod:`~tui_agent.core.hooks.runner`), as processes (:mod:`~tui_agent.core.hooks.process`),
their answers read and combined (:mod:`~tui_agent.core.hooks.answers`). The config they
come from is :mod:`tui_agent.custom.hooks`'s."""

from tui_agent.core.hooks.answers import HookAnswer as HookAnswer
from tui_agent.core.hooks.answers import HookResult as HookResult
from tui_agent.core.hooks.runner import PERMISSION_MODES as PERMISSION_MODES
from tui_agent.core.hooks.runner import Hooks as Hooks
from tui_agent.core.hooks.runner import SessionFacts as SessionFacts
