"""In-process tool sources: :class:`NoTools` (a plain chat) and :class:`LocalTools`
(Python functions served as tools, for tests, built-ins and the offline demo)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tui_agent.tools.spec import ToolOutcome, ToolSpec


class NoTools:
    """A source with nothing in it: a plain chat."""

    def specs(self) -> Sequence[ToolSpec]:
        return ()

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(f"no tool named {spec.name}", is_error=True)


ToolFunction = Callable[..., Any | Awaitable[Any]]


class LocalTools:
    """Python functions served as tools of one pseudo-server (``local`` by default)."""

    def __init__(self, server: str = "local") -> None:
        self.server = server
        self._specs: dict[str, ToolSpec] = {}
        self._functions: dict[str, ToolFunction] = {}

    def add(self, fn: ToolFunction, *, name: str | None = None, description: str = "",
            parameters: dict[str, Any] | None = None, timeout: float | None = None) -> ToolSpec:
        tool = name or fn.__name__
        spec = ToolSpec(name=f"{self.server}__{tool}", server=self.server, tool=tool,
                        description=description or inspect.getdoc(fn) or "",
                        parameters=parameters or {"type": "object", "properties": {}},
                        timeout=timeout)
        self._specs[spec.name] = spec
        self._functions[spec.name] = fn
        return spec

    def specs(self) -> Sequence[ToolSpec]:
        return tuple(self._specs.values())

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        result = self._functions[spec.name](**arguments)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ToolOutcome):
            return result
        if isinstance(result, (dict, list)):
            return ToolOutcome(json.dumps(result, ensure_ascii=False), value=result)
        return ToolOutcome(result if isinstance(result, str) else repr(result))
