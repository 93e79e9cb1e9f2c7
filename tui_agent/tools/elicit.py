"""Elicitation: a server asks the person for something, in the middle of a call. Form mode
sends a flat JSON schema (strings with a format or length, numbers and integers with bounds,
booleans, single- and multi-select enums, titled or not, with defaults); URL mode sends a
link to open out of band (a payment, a third-party login).

This module turns the request into plain values a front end can show (:class:`Form`,
:class:`UrlAsk`), checks what the person entered (:func:`problems`), fills the schema's
defaults (:func:`defaults`, as SEP-1034 describes), and answers the server
(:func:`elicitation_handler`). Everything the server sent is untrusted text: cleaned here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from mcp.client.session import ElicitationFnT

Kind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
Value = str | int | float | bool | list[str] | None
Action = Literal["accept", "decline", "cancel"]
FORMATS = ("email", "uri", "date", "date-time")
MAX_FIELDS = 50
MAX_TEXT = 2_000
"""Longest message, title or description shown (the rest is cut)."""


class FormError(ValueError):
    """A schema this client cannot show as a form (nested objects, say)."""


@dataclass(frozen=True)
class Field:
    """One input of a form."""

    name: str
    kind: Kind
    title: str
    description: str = ""
    required: bool = False
    default: Value = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    """``(value, label)`` of a ``choice`` or ``choices`` field."""


@dataclass(frozen=True)
class Form:
    server: str
    message: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class UrlAsk:
    server: str
    message: str
    url: str


@dataclass(frozen=True)
class Answer:
    action: Action
    content: dict[str, Value] = field(default_factory=dict)


Ask = Callable[[Form | UrlAsk], Awaitable[Answer]]
"""The front end's way of asking the person (a modal, a terminal prompt, a policy)."""


def parse_form(server: str, message: str, schema: dict[str, Any]) -> Form:
    """The form of a ``requestedSchema``. Raises :class:`FormError` naming what it cannot
    show."""
    if schema.get("type", "object") != "object" or not isinstance(
            schema.get("properties", {}), dict):
        raise FormError("the requested schema is not an object with properties")
    required = set(schema.get("required") or [])
    fields = [_field(str(name), spec if isinstance(spec, dict) else {}, str(name) in required)
              for name, spec in list(schema.get("properties", {}).items())[:MAX_FIELDS + 1]]
    if len(fields) > MAX_FIELDS:
        raise FormError(f"the form has more than {MAX_FIELDS} fields")
    return Form(clean(server), _text(message), tuple(fields))


def _field(name: str, spec: dict[str, Any], required: bool) -> Field:
    kind_of = spec.get("type")
    common: dict[str, Any] = {"name": name, "title": _text(spec.get("title") or name)[:200],
                                  "description": _text(spec.get("description") or ""),
                                  "required": required}
    options = _options(spec)
    if kind_of == "array":
        items = spec.get("items")
        choices = _options(items if isinstance(items, dict) else {})
        if not choices:
            raise FormError(f"field {name!r}: an array must list its choices (items.enum)")
        default = spec.get("default")
        return Field(**common, kind="choices", options=choices,
                     default=[str(v) for v in default] if isinstance(default, list) else None,
                     minimum=_number(spec.get("minItems")), maximum=_number(spec.get("maxItems")))
    if options:
        default = spec.get("default")
        return Field(**common, kind="choice", options=options,
                     default=str(default) if default is not None else None)
    if kind_of in ("number", "integer"):
        default = spec.get("default")
        return Field(**common, kind=kind_of, minimum=_number(spec.get("minimum")),
                     maximum=_number(spec.get("maximum")),
                     default=default if isinstance(default, int | float) and
                     not isinstance(default, bool) else None)
    if kind_of == "boolean":
        default = spec.get("default")
        return Field(**common, kind="boolean",
                     default=default if isinstance(default, bool) else None)
    if kind_of == "string":
        fmt = spec.get("format")
        default = spec.get("default")
        return Field(**common, kind="string", format=fmt if fmt in FORMATS else None,
                     min_length=_count(spec.get("minLength")),
                     max_length=_count(spec.get("maxLength")),
                     default=default if isinstance(default, str) else None)
    raise FormError(f"field {name!r} has a type this client cannot show ({kind_of!r})")


def _options(spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A select's ``(value, label)``: ``enum`` (with the legacy ``enumNames``), or
    ``oneOf`` / ``anyOf`` of ``{const, title}``."""
    if isinstance(spec.get("enum"), list):
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and \
            len(names) == len(values) else values
        return tuple((v, _text(lab)[:200]) for v, lab in zip(values, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        listed = spec.get(key)
        if isinstance(listed, list) and listed and all(
                isinstance(o, dict) and "const" in o for o in listed):
            return tuple((str(o["const"]), _text(str(o.get("title") or o["const"]))[:200])
                         for o in listed)
    return ()


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _text(text: Any) -> str:
    return clean(str(text))[:MAX_TEXT]


def defaults(form: Form) -> dict[str, Value]:
    """Every field's default, where the schema gives one (SEP-1034)."""
    return {f.name: f.default for f in form.fields if f.default is not None}


def read(f: Field, text: str) -> Value:
    """What the person typed into a text input, as the field's type (None: left empty).
    Raises ValueError with a message for the person."""
    text = text.strip()
    if not text:
        return None
    if f.kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number, please") from None
    if f.kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise ValueError("a number, please") from None
        if not math.isfinite(number):
            raise ValueError("a number, please")
        return int(number) if number.is_integer() and "." not in text else number
    if f.kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1", "on"):
            return True
        if text.lower() in ("n", "no", "false", "0", "off"):
            return False
        raise ValueError("yes or no, please")
    if f.kind == "choices":
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def problems(form: Form, content: dict[str, Value]) -> dict[str, str]:
    """Field name -> what is wrong with its value (empty when the form may be sent)."""
    wrong: dict[str, str] = {}
    for f in form.fields:
        value = content.get(f.name)
        if value is None or value == [] or value == "":
            if f.required:
                wrong[f.name] = "required"
            continue
        problem = _problem(f, value)
        if problem:
            wrong[f.name] = problem
    return wrong


def _problem(f: Field, value: Value) -> str | None:
    if f.kind == "string":
        if not isinstance(value, str):
            return "text, please"
        if f.min_length is not None and len(value) < f.min_length:
            return f"at least {f.min_length} characters"
        if f.max_length is not None and len(value) > f.max_length:
            return f"at most {f.max_length} characters"
        return _format_problem(f.format, value)
    if f.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "a number, please"
        if f.kind == "integer" and not float(value).is_integer():
            return "a whole number, please"
        if f.minimum is not None and value < f.minimum:
            return f"at least {f.minimum:g}"
        if f.maximum is not None and value > f.maximum:
            return f"at most {f.maximum:g}"
        return None
    if f.kind == "boolean":
        return None if isinstance(value, bool) else "yes or no, please"
    allowed = {v for v, _ in f.options}
    if f.kind == "choice":
        return None if value in allowed else "one of the choices, please"
    if not isinstance(value, list) or any(v not in allowed for v in value):
        return "only the choices listed, please"
    if f.minimum is not None and len(value) < f.minimum:
        return f"at least {f.minimum:g} choices"
    if f.maximum is not None and len(value) > f.maximum:
        return f"at most {f.maximum:g} choices"
    return None


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _format_problem(fmt: str | None, value: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(value):
        return "an email address, please"
    if fmt == "uri" and not (urlsplit(value).scheme and urlsplit(value).netloc):
        return "a full URL, please (https://...)"
    if fmt == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return "a date, please (YYYY-MM-DD)"
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return "a date and time, please (YYYY-MM-DDTHH:MM:SS)"
    return None


def safe_url(url: str) -> str | None:
    """``url`` if it is one a browser may be sent to (http or https, a host, no
    credentials or controls), else None."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc \
            or clean(url) != url or any(c.isspace() for c in url.strip()):
        return None
    return url.strip()


def elicitation_handler(server: str, ask: Ask) -> ElicitationFnT:
    """The SDK's elicitation callback for ``server``: the request becomes a :class:`Form`
    or :class:`UrlAsk` for ``ask``; what is accepted is checked against the schema again."""
    async def handle(context: Any, params: Any) -> Any:
        from mcp import types  # here, not at the start: the server spawns before the SDK loads

        if getattr(params, "mode", "form") == "url":
            url = safe_url(params.url)
            if url is None:
                return types.ErrorData(code=types.INVALID_PARAMS,
                                       message="the URL is not an http(s) link")
            answer = await ask(UrlAsk(clean(server), _text(params.message), url))
            return types.ElicitResult(action=answer.action)
        try:
            form = parse_form(server, params.message, params.requested_schema)
        except FormError as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
        answer = await ask(form)
        if answer.action != "accept":
            return types.ElicitResult(action=answer.action)
        content: dict[str, Value] = {k: v for k, v in answer.content.items() if v is not None}
        if problems(form, content):
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=content)

    return handle
