"""Files and images the user puts into a message: ``@path`` references in the prompt,
``/image PATH`` (and ``run --image``), a pasted image path.

A text file goes into the message as a ``<file path="...">`` block after the words the
user typed (cut past :data:`TEXT_CAP`, with a note saying so); an image goes as an image
part, named in a ``<image path="..."/>`` tag. Anything that cannot be attached (missing,
a directory, larger than :data:`MOST`, binary, unreadable, an image for a model that
reads none) is an :class:`AttachError` naming the file and why, and the message is not
sent. Pure Python: the TUI and the headless run share it.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MOST = 20 * 1024 * 1024
"""The largest file attached at all (OpenAI's limit for one image)."""
TEXT_CAP = 100_000
"""Bytes of a text file that go into the message; the rest is cut, with a note."""
IMAGE_TYPES = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg",
               b"GIF87a": "image/gif", b"GIF89a": "image/gif"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
NO_VISION = ("{model} does not read images (as far as litellm knows; set [model] vision = "
             "true if it does): {name} was not sent")


class AttachError(ValueError):
    """A file that cannot go into the message: the text says which and why."""


@dataclass(frozen=True)
class Attachment:
    """One file for the next message: its text block, or an image's data."""

    shown: str
    """The path as the user wrote it (or relative to the project)."""
    size: int
    kind: str = "text"
    """``text`` or ``image``."""
    text: str = ""
    mime: str = ""
    data: bytes = b""
    cut: bool = False

    def chip(self) -> str:
        """``file src/app.py · 12.3 KB`` as the transcript shows it."""
        return chip(self.kind, self.shown, self.size, self.cut)

    def block(self) -> str:
        if self.kind == "image":
            return f'<image path="{_attr(self.shown)}" size="{human_size(self.size)}"/>'
        note = f' note="cut: the first {human_size(TEXT_CAP)} of {human_size(self.size)}"' \
            if self.cut else ""
        return (f'<file path="{_attr(self.shown)}" size="{human_size(self.size)}"{note}>\n'
                f"{self.text}{'' if self.text.endswith(chr(10)) else chr(10)}</file>")


def chip(kind: str, shown: str, size: int | None, cut: bool = False) -> str:
    """``file src/app.py · 12.3 KB``, ``image cat.png · 80.2 KB``."""
    bits = [f"{kind if kind == 'image' else 'file'} {shown}"]
    if size is not None:
        bits.append(human_size(size))
    if cut:
        bits.append(f"cut to the first {human_size(TEXT_CAP)}")
    return " · ".join(bits)


def human_size(size: int) -> str:
    """``812 B``, ``12.3 KB``, ``4.0 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def image_type(head: bytes) -> str | None:
    """The MIME type of an image the models read (PNG, JPEG, GIF, WebP), from its bytes."""
    for magic, mime in IMAGE_TYPES.items():
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_attachment(path: Path, shown: str, *, image_only: bool = False) -> Attachment:
    """The file at ``path`` as an attachment; :class:`AttachError` when it cannot be one.
    Never opens what is not a regular file (a FIFO would block)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise AttachError(f"{shown}: no such file") from None
    except OSError as exc:
        raise AttachError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise AttachError(f"{shown} is a directory: name a file in it (after @, the picker "
                          "lists them)")
    if not stat.S_ISREG(info.st_mode):
        raise AttachError(f"{shown} is not a regular file")
    if info.st_size > MOST:
        raise AttachError(f"{shown} is {human_size(info.st_size)}: the largest file "
                          f"tui-agent attaches is {human_size(MOST)}")
    try:
        with path.open("rb") as handle:
            data = handle.read(MOST + 1)
    except PermissionError:
        raise AttachError(f"{shown}: cannot read it (permission denied)") from None
    except OSError as exc:
        raise AttachError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    mime = image_type(data[:16])
    if mime is not None:
        return Attachment(shown, len(data), "image", mime=mime, data=data)
    if image_only:
        raise AttachError(f"{shown} is not an image the models read (PNG, JPEG, GIF, WebP)")
    cut = len(data) > TEXT_CAP
    try:
        text = _decode(data[:TEXT_CAP], cut)
    except UnicodeDecodeError:
        raise AttachError(f"{shown} is a binary file: only text files and images (PNG, JPEG, "
                          "GIF, WebP) can be attached") from None
    return Attachment(shown, len(data), text=text, cut=cut)


def _decode(head: bytes, cut: bool) -> str:
    """UTF-8 text (a NUL byte near the start means binary); a character cut in two at
    the end of a cut file is dropped."""
    if b"\0" in head[:8192]:
        raise UnicodeDecodeError("utf-8", head, 0, 1, "a NUL byte")
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError:
        if not cut:
            raise
        for back in (1, 2, 3):
            try:
                return head[:-back].decode("utf-8")
            except UnicodeDecodeError:
                continue
        raise


# -- references in the prompt ---------------------------------------------------------

_REFERENCE = re.compile(r'(?<!\S)@(@?)(?:"([^"\n]+)"|("[^"]*"?)|(\S+))')
"""``@path``, ``@"a name"``, ``@@`` (a plain ``@``); the third group is a quote that cannot
be a name: empty, or not closed on its line."""
_TRAILING = ",.;:!?)]}'\""
_PATHLIKE = re.compile(r"[/\\~]|\.[A-Za-z0-9]{1,8}$")


@dataclass(frozen=True)
class Prepared:
    """A prompt with its references read: the words as typed, and the files."""

    text: str
    attachments: tuple[Attachment, ...] = ()

    @property
    def images(self) -> tuple[Attachment, ...]:
        return tuple(a for a in self.attachments if a.kind == "image")


def references(text: str, root: Path) -> list[tuple[str, Path]]:
    """The ``@path`` references in ``text``, as ``(shown, path)``; ``@"a b.txt"`` for a
    name with spaces, ``@@`` for a plain ``@``. A word after ``@`` that is not a file and
    does not look like a path (``@alice``) is left as text; one that looks like a path
    but is not there, and a quote that cannot hold a name (``@""``, or not closed on its
    line), are an :class:`AttachError`."""
    found: list[tuple[str, Path]] = []
    for match in _REFERENCE.finditer(text):
        escaped, quoted, unclosed, word = match.groups()
        if escaped:
            continue
        if unclosed:
            raise AttachError(_not_a_name(unclosed))
        if quoted:
            found.append((quoted, _resolve(quoted, root)))
            continue
        shown = word
        while not _there(_resolve(shown, root)) and shown[-1:] in _TRAILING and len(shown) > 1:
            shown = shown[:-1]
        path = _resolve(shown, root)
        if _there(path) or _PATHLIKE.search(shown):
            found.append((shown, path))
    return _unique(found)


def _not_a_name(quote: str) -> str:
    """Why ``@"...`` (``quote``, from its opening quote) names no file."""
    if quote == '""':
        return '@"" names no file: put the file\'s name between the quotes'
    first = quote.split("\n", 1)[0]
    shown = first if len(first) <= 40 else first[:39] + "…"
    return (f"@{shown}: the quoted name is not closed on its line (a file name cannot hold "
            'a line break): end it with " on the same line, or write @@ for a plain @')


def _there(path: Path) -> bool:
    """Whether anything is at ``path`` (a name too long for the system is not)."""
    try:
        return path.exists() or path.is_symlink()
    except (OSError, ValueError):
        return False


def _unique(found: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """Each file once, where it is first named."""
    kept: dict[Path, str] = {}
    for shown, path in found:
        kept.setdefault(path, shown)
    return [(shown, path) for path, shown in kept.items()]


def _resolve(shown: str, root: Path) -> Path:
    path = Path(os.path.expanduser(shown))
    return path if path.is_absolute() else root / path


def unescape(text: str) -> str:
    """``@@name`` is sent as ``@name``."""
    return re.sub(r"(?<!\S)@@", "@", text)


def prepare(text: str, root: Path, extra: list[Attachment] | None = None) -> Prepared:
    """Read every file ``text`` references (relative to ``root``), with the ``extra``
    attachments (``/image``); the first that cannot be attached raises
    :class:`AttachError`, so nothing is sent."""
    attachments = list(extra or ())
    for shown, path in references(text, root):
        attachments.append(read_attachment(path, shown))
    return Prepared(unescape(text), tuple(attachments))


def refuse_images(prepared: Prepared, model: str, reads_images: bool) -> None:
    """:class:`AttachError` when the message holds an image and the model reads none."""
    if prepared.images and not reads_images:
        names = ", ".join(a.shown for a in prepared.images)
        raise AttachError(NO_VISION.format(model=model or "this model", name=names))


def content(prepared: Prepared, before: tuple[str, ...] = ()) -> str | list[dict[str, Any]]:
    """The user message's content: ``before`` (resource blocks), the words, each file's
    block; with images, a list of parts (the text, then each image)."""
    text = "\n\n".join([*before, prepared.text, *(a.block() for a in prepared.attachments)])
    if not prepared.images:
        return text
    return [{"type": "text", "text": text}, *(
        {"type": "image_url", "image_url": {
            "url": f"data:{a.mime};base64,{base64.b64encode(a.data).decode('ascii')}"}}
        for a in prepared.images)]


_BLOCK = re.compile(r'\n\n<(file|image) path="([^"]*)" size="([^"]*)"(?: note="[^"]*")?'
                    r'(?:/>|>\n.*?\n</file>)(?=\n\n<(?:file|image) |\Z)', re.DOTALL)


def split_message(text: str) -> tuple[str, list[str]]:
    """A saved user message's words and its attachments' chips (``file a.py · 1.2 KB``)."""
    chips: list[str] = []

    def take(match: re.Match[str]) -> str:
        kind, shown, size = match.groups()
        chips.append(chip(kind, shown.replace("&quot;", '"').replace("&amp;", "&"), None)
                     + f" · {size}")
        return ""

    return _BLOCK.sub(take, text), chips


def pasted_image(text: str, root: Path) -> Path | None:
    """The image file a paste names (a path dropped on the terminal: quoted, with escaped
    spaces, or a ``file://`` URL), or None when the paste is anything else."""
    candidate = text.strip()
    if "\n" in candidate or not candidate:
        return None
    if candidate[:1] == candidate[-1:] and candidate[:1] in "'\"" and len(candidate) > 1:
        candidate = candidate[1:-1]
    if candidate.startswith("file://"):
        from urllib.parse import unquote, urlparse

        candidate = unquote(urlparse(candidate).path)
    candidate = re.sub(r"\\(.)", r"\1", candidate)
    if not candidate.lower().endswith(IMAGE_SUFFIXES):
        return None
    path = _resolve(candidate, root)
    try:
        return path if path.is_file() else None
    except (OSError, ValueError):
        return None
