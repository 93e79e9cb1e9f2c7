"""What the chat loop needs from a source of tools, and an in-process source.

The MCP hub implements :class:`ToolSource` for real servers; :class:`LocalTools`
serves plain Python functions (tests, built-ins, the offline demo).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it (``name``) and as its server knows it (``server``, ``tool``)."""

    name: str
    server: str
    tool: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object",
                                                                "properties": {}})
    timeout: float | None = None
    fingerprint: str = ""
    """Digest of the definition (see :func:`tui_agent.core.approval.fingerprint`); empty
    for tools that cannot change under the user, such as local functions."""
    output_schema: dict[str, Any] | None = None
    """The JSON Schema of the tool's structured result, when it declares one."""

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call gave back: the text the model reads, and whether it failed."""

    text: str
    is_error: bool = False
    value: Any = None
    """Structured content, when the tool gave some: what a code-mode script receives
    (it gets ``text`` otherwise)."""


class ToolSource(Protocol):
    """Where the loop gets tools from and sends calls to."""

    def specs(self) -> Sequence[ToolSpec]:
        """The tools on offer now."""
        ...

    async def call(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call. Exceptions are reported to the model as a failed call."""
        ...


class Preparing(Protocol):
    """A source that may need a moment before a turn (servers still starting); it
    yields notes for the user while it gets ready."""

    def prepare(self) -> AsyncIterator[str]: ...


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
