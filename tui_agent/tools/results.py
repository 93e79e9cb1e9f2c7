"""An MCP tool result as text: for the model, and for display.

Text blocks are kept; images, audio, links and binary resources are summarised;
``structuredContent`` is rendered as YAML (compact, and easy for a model to read), once:
the text blocks that repeat it are left out, or, where the text already holds every value
of the structure (a file read's one field), the text alone is kept;
a failed call's structured error is turned into one line with its code and
whether it is worth retrying. Everything passes :func:`clean`, so no escape
sequence or control character from a server reaches a terminal or the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.tools.spec import Media
from tui_agent.tools.text import clean

RAW_LIMIT = 2_000
"""Characters of the raw result shown when it has neither text nor structured content."""
CHARS_PER_TOKEN = 4


MAX_MEDIA = 4
"""Images (or sounds) of one result handed to the model."""
MAX_MEDIA_BYTES = 5 * 1024 * 1024
"""The largest image handed to the model (decoded); a larger one is only named."""
_BASE64 = re.compile(r"[A-Za-z0-9+/]{256,}={0,2}")
"""A long run of base64 with no space in it (text with spaces or lines is text)."""


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    is_error: bool
    value: Any = None
    """The structured content (unwrapped, cleaned) when the server sent it: what a
    code-mode script gets instead of the text."""
    media: tuple[Media, ...] = ()
    """The images and sounds among the blocks (each also named in ``text``)."""


def render(result: Any) -> Rendered:
    """``result`` is an ``mcp.types.CallToolResult`` (duck-typed: the module is heavy)."""
    is_error = bool(getattr(result, "is_error", False))
    structured = getattr(result, "structured_content", None)
    blocks: Sequence[Any] = getattr(result, "content", None) or ()
    texts = [b.text for b in blocks if getattr(b, "type", None) == "text"]
    others = [summary for b in blocks if (summary := describe_block(b))]
    if is_error:
        message = structured_error(structured) if isinstance(structured, Mapping) else None
        body = message or "\n".join(texts) or (to_yaml(structured) if structured else "")
        parts = [body or "the tool reported an error without saying what", *others]
        return Rendered(clean("\n".join(parts)), True)
    parts = []
    value = None
    media = tuple(m for b in blocks if (m := media_of(b)) is not None)[:MAX_MEDIA]
    if structured is not None:
        structured = _scrubbed(structured)
    if structured is not None and _only_names(structured, others):
        # A structured copy of the blocks, nothing more (server-filesystem's media read).
        value = _unwrap(_cleaned(structured))
        parts.extend(texts)
    elif structured is not None and texts and _told_by(texts, structured):
        # The text already says all the structure holds (its one text field, say: a file
        # read): one copy, the text, as the server wrote it.
        value = _unwrap(_cleaned(structured))
        parts.extend(texts)
    elif structured is not None:
        value = _unwrap(_cleaned(structured))
        shown = value if isinstance(value, str) else to_yaml(value)
        parts.append(shown)
        # Servers repeat the structured value as text for older clients: keep only
        # text that says something more.
        repeated = {shown.strip(), str(value).strip(),
                    *(clean(leaf).strip() for leaf in _leaves(structured)
                      if isinstance(leaf, str))}
        parts.extend(t for t in texts if not _is_json(t) and clean(t).strip() not in repeated)
        others = [o for o in others if o not in shown]  # blocks the structure named already
    else:
        parts.extend(texts)
    parts.extend(others)
    if not parts:
        return Rendered(clean(raw_json(result)), False, value, media)
    return Rendered(clean("\n".join(parts)), False, value, media)


def media_of(block: Any) -> Media | None:
    """An image or sound block (or an embedded image resource) small enough for a model."""
    kind = getattr(block, "type", None)
    if kind in ("image", "audio"):
        data, mime = getattr(block, "data", "") or "", getattr(block, "mime_type", "") or ""
    elif kind == "resource":
        res = getattr(block, "resource", None)
        data, mime = getattr(res, "blob", "") or "", getattr(res, "mime_type", "") or ""
        kind = "image" if mime.startswith("image/") else None
    else:
        return None
    return as_media(kind, mime, data) if kind is not None else None


def as_media(kind: str, mime: str, data: Any) -> Media | None:
    """``data`` (base64) as a :class:`Media` of ``kind``, if small enough for a model."""
    if not data or not isinstance(data, str) or len(data) * 3 // 4 > MAX_MEDIA_BYTES \
            or "/" not in mime:
        return None
    return Media(kind, clean(mime), data)


def media_name(kind: str, mime: Any, data: Any) -> str:
    """``[image: image/png, 1.2 KB]``: what stands for an image or a sound in text."""
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return f"[{kind}: {mime}, {_size(size)}]"


def _scrubbed(value: Any) -> Any:
    """``value`` with image and sound blocks, and any long run of base64, replaced by a
    line that names them (structured content may repeat the blocks, data and all)."""
    if isinstance(value, Mapping):
        if value.get("type") in ("image", "audio") and isinstance(value.get("data"), str):
            return media_name(value["type"], value.get("mimeType") or value.get("mime_type"),
                              value["data"])
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrubbed(v) for v in value]
    if isinstance(value, str) and len(value) >= 256 and _BASE64.fullmatch(value):
        return f"[binary data, {_size(len(value) * 3 // 4)}]"
    return value


def _told_by(texts: list[str], structured: Any) -> bool:
    """Every leaf of ``structured`` is a string found in the text blocks (so showing the
    structure too would repeat them)."""
    leaves = list(_leaves(structured))
    said = "\n".join(texts)
    return bool(leaves) and all(isinstance(leaf, str) and leaf.strip() in said
                                for leaf in leaves)


def _only_names(structured: Any, names: list[str]) -> bool:
    """Every leaf of ``structured`` is one of the block summaries ``names``."""
    leaves = list(_leaves(structured))
    return bool(names) and bool(leaves) and all(
        isinstance(leaf, str) and leaf in names for leaf in leaves)


def _leaves(value: Any) -> Any:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _unwrap(structured: Any) -> Any:
    """Servers wrap a primitive return value as ``{"result": value}``."""
    if isinstance(structured, Mapping) and list(structured) == ["result"]:
        return structured["result"]
    return structured


def _cleaned(value: Any) -> Any:
    """``value`` with every string in it cleaned, keys included."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, Mapping):
        return {clean(str(k)): _cleaned(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cleaned(v) for v in value]
    return value


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{\"" and not stripped[0].isdigit():
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


def describe_block(block: Any) -> str | None:
    """A one-line stand-in for a block that is not plain text; None for text."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return None
    if kind in ("image", "audio"):
        return media_name(kind, getattr(block, "mime_type", "?"), getattr(block, "data", ""))
    if kind == "resource_link":
        name = getattr(block, "name", "") or ""
        return f"[resource link: {name} <{getattr(block, 'uri', '')}>]"
    if kind == "resource":
        res = getattr(block, "resource", None)
        uri, mime = getattr(res, "uri", ""), getattr(res, "mime_type", None) or "?"
        text = getattr(res, "text", None)
        if isinstance(text, str):
            return f"[resource {uri} ({mime})]\n{text}"
        blob = getattr(res, "blob", "") or ""
        return f"[resource {uri} ({mime}), {_size(len(blob) * 3 // 4)} of binary data]"
    return f"[{kind or 'unknown'} content]"


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024**2 else \
        f"{n / 1024**2:.1f} MB"


_CODE_KEYS = ("code", "errorCode", "statusCode")
_RETRY_KEYS = ("retriable", "retryable")


def structured_error(data: Mapping[str, Any]) -> str | None:
    """The message of a structured error, with a compact suffix, e.g.
    ``upstream timed out (code=E_TIMEOUT retriable=false)``; None if there is none."""
    error = data.get("error")
    nested = error if isinstance(error, Mapping) else {}
    message = None
    for candidate in (data.get("message"), error, nested.get("message"), data.get("detail")):
        if isinstance(candidate, str) and candidate.strip():
            message = candidate.strip()
            break
    if message is None:
        return None
    extras = []
    for keys, name, convert in ((_CODE_KEYS, "code", _scalar), (_RETRY_KEYS, "retriable", _flag)):
        value = next((src[k] for src in (data, nested) for k in keys if k in src), None)
        shown = convert(value) if value is not None else None
        if shown is not None:
            extras.append(f"{name}={shown}")
    return f"{message} ({' '.join(extras)})" if extras else message


def _scalar(value: Any) -> str | None:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _flag(value: Any) -> str | None:
    """``true``/``false`` from a bool, a string (``"yes"``, ``"False"``) or a number."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return "true" if value else "false"
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "yes", "1", "y"):
            return "true"
        if lowered in ("false", "no", "0", "n"):
            return "false"
    return None


def raw_json(result: Any, limit: int = RAW_LIMIT) -> str:
    dump = getattr(result, "model_dump", None)
    data = dump(by_alias=True, exclude_none=True, mode="json") if dump else result
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters in all)"


# YAML: a small emitter for JSON-shaped values. Strings that could read as something
# else (numbers, booleans, keys, comments) are written as JSON strings, which YAML
# reads back unchanged.
_PLAIN = re.compile(r"[A-Za-z_./][A-Za-z0-9 _./@+()-]*")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _scalar_yaml(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED and text == text.strip():
        return text
    return json.dumps(text, ensure_ascii=False)


def to_yaml(value: Any, indent: int = 0) -> str:
    return "\n".join(_yaml_lines(value, indent))


def _yaml_lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        lines = []
        for key, item in value.items():
            lines.extend(_entry(pad + _scalar_yaml(key) + ":", item, indent))
        return lines
    if isinstance(value, list | tuple):
        if not value:
            return [pad + "[]"]
        lines = []
        for item in value:
            sub = _yaml_lines(item, indent + 2)
            lines.append(pad + "- " + sub[0].lstrip())
            lines.extend(sub[1:])
        return lines
    if isinstance(value, str) and "\n" in value:
        return [pad + "|-", *(pad + "  " + ln for ln in value.split("\n"))]
    return [pad + _scalar_yaml(value)]


def _entry(head: str, item: Any, indent: int) -> list[str]:
    if isinstance(item, Mapping | list | tuple) and item:
        return [head, *_yaml_lines(item, indent + 2)]
    if isinstance(item, str) and "\n" in item:
        return [head + " |-", *(" " * (indent + 2) + ln for ln in item.split("\n"))]
    return [head + " " + _yaml_lines(item, 0)[0]]


def cap(text: str, max_tokens: int, saved: Path | None = None) -> str:
    """``text`` cut to about ``max_tokens`` tokens, with a note that says so and where
    the whole of it was kept."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    where = f" The full result is in {saved}." if saved else ""
    return (text[:limit] + f"\n\n[output cut: the first {limit:,} of {len(text):,} characters "
            f"(about {max_tokens:,} tokens) are shown.{where}]")
