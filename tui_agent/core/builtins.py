"""The tool source the loop reads: the servers' tools (the hub, or none) with the tools
tui-agent itself answers (today ``skill``) beside them. The model sees no difference:
each is a :class:`~tui_agent.tools.spec.ToolSpec` and every call passes the same gate.
Everything else the inner source offers (``instructions``, ``prepare``, ...) is passed
through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_agent.core.skills.tool import BUILTIN_SERVER, SKILL_SPEC, SkillTool
from tui_agent.tools.spec import ToolOutcome, ToolSource, ToolSpec


class WithBuiltins:
    """``inner``'s tools, and ``skill`` while there is a skill to load."""

    def __init__(self, inner: ToolSource, skills: SkillTool) -> None:
        self.inner = inner
        self.skills = skills

    def specs(self) -> Sequence[ToolSpec]:
        specs = tuple(self.inner.specs())
        return (*specs, SKILL_SPEC) if self.skills.catalog.offered() else specs

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        if spec.server == BUILTIN_SERVER:
            return await self.skills.call(arguments)
        return await self.inner.call(spec, arguments)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copying): never look for it in itself
            raise AttributeError(name)
        return getattr(self.inner, name)
