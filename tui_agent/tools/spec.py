"""The tool vocabulary every layer above shares: a tool as offered (:class:`ToolSpec`),
what a call gave back (:class:`ToolOutcome`), where calls go (:class:`ToolSource`), and
the digest of a definition a person approved (:func:`fingerprint`).

It lives at the tools layer so that the MCP hub can speak it without knowing that a
chat loop exists; the loop (``core``) and code mode import it from here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui_agent.builtin.asking import ASK_META
from tui_agent.config.printable import clean


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
    """Digest of the definition (see :func:`fingerprint`); empty
    for tools that cannot change under the user, such as local functions."""
    output_schema: dict[str, Any] | None = None
    """The JSON Schema of the tool's structured result, when it declares one."""
    hints: tuple[str, ...] = ()
    """What the server says of the tool (its annotations): ``read-only``, ``destructive``,
    ``non-destructive``, ``idempotent``, ``open-world``. Hints from an untrusted server:
    shown to a person, never a reason to run anything without asking (approving a
    script ahead is the person's answer, and leaves a tool not marked read-only or
    non-destructive asking)."""
    asks: str = ""
    """The server's own reason for asking before every call of the tool (its ``_meta``
    says so, see :func:`asks_of`), or empty. No ``auto`` rule, "always allow", approved
    script or skill turns such a call into one that runs unasked."""

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass(frozen=True, slots=True)
class Media:
    """An image or a sound a tool gave back (base64), for a model that takes it."""

    kind: str
    """``image`` or ``audio``."""
    mime: str
    data: str


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a tool call gave back: the text the model reads, and whether it failed."""

    text: str
    is_error: bool = False
    value: Any = None
    """Structured content, when the tool gave some: what a code-mode script receives
    (it gets ``text`` otherwise)."""
    media: tuple[Media, ...] = ()
    """Images and sounds, which ``text`` only names: a model that takes images gets
    them as image parts, never as base64 text."""


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


def hints_of(annotations: Any) -> tuple[str, ...]:
    """The hints of MCP ``ToolAnnotations`` (duck-typed), in a fixed order. A destructive
    hint counts only on a tool that is not read-only, as the spec says; ``non-destructive``
    is a ``destructiveHint`` of false said outright (the spec's default, for a tool that
    is not read-only, is true: one that says nothing may be destructive)."""
    if annotations is None:
        return ()
    read_only = getattr(annotations, "read_only_hint", None) is True
    found = []
    if read_only:
        found.append("read-only")
    elif getattr(annotations, "destructive_hint", None) is True:
        found.append("destructive")
    elif getattr(annotations, "destructive_hint", None) is False:
        found.append("non-destructive")
    if getattr(annotations, "idempotent_hint", None) is True and not read_only:
        found.append("idempotent")
    if getattr(annotations, "open_world_hint", None) is True:
        found.append("open-world")
    return tuple(found)


ASKS_MOST = 120
"""The longest reason a server may give for always asking: it is one line of the
question."""


def asks_of(meta: Any) -> str:
    """Why the server wants every call of the tool asked (the tool's ``_meta`` under
    :data:`~tui_agent.builtin.asking.ASK_META`: its sentence, cleaned to one short line,
    or a plain one for ``true``); empty when it does not. Any server may say it: it can
    only make the gate ask more."""
    said = meta.get(ASK_META) if isinstance(meta, dict) else None
    if isinstance(said, str) and (line := " ".join(clean(said).split())):
        return line if len(line) <= ASKS_MOST else line[:ASKS_MOST - 1] + "…"
    return "the server asks before every call of this tool" if said else ""


def fingerprint(name: str, description: str | None, input_schema: Any) -> str:
    """A digest of what a person approved: the tool's name, description and input schema.

    If a server later changes any of them (a "rug pull"), the digest changes and a
    tool that was allowed asks again."""
    canonical = json.dumps([name, description or "", input_schema], sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]
