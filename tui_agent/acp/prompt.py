"""A ``session/prompt``'s content blocks as the user message the core takes: text (with
its ``@path`` references read, as the app reads them), resource links to files, embedded
resources (the editor's selection or buffer), and images.

Files are read through the editor's ``fs/read_text_file`` when it offers it, so an unsaved
buffer is what the model sees; else from the disk, relative to the session's directory.
An image (a block, an embedded image, a link to an image file) for a model that reads none
is refused as the app and ``run`` refuse it, naming the model and ``[model] vision``: the
editor offers images to every session (the capability is the agent's, before any model is
picked), so the check is per prompt, against the session's model of the moment.

A file a prompt names (an ``@`` path, a file link) is read silently only inside the
session's folders (its ``cwd``, the editor's additional directories and ``[agent] roots``),
its path resolved first (``..`` and symlinks): any other file is asked about through the
editor's permission request, as a tool call is, and read only on a yes. A prompt is text
a model may have suggested or a page may have planted (``/etc/shadow``, ``../../.ssh``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from tui_agent.core.attachments import (
    AttachError,
    Attachment,
    Prepared,
    read_attachment,
    references,
    refuse_images,
    unescape,
)

ReadText = Callable[[Path], Awaitable[str]]
"""The editor's ``fs/read_text_file`` for one session."""
ReadsImages = Callable[[], Awaitable[bool]]
"""Whether the session's model reads images (asked only of a prompt that holds one)."""
MayRead = Callable[[Path], Awaitable[bool]]
"""Whether a file outside the session's folders may be read (the editor is asked)."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


async def prepared(blocks: Sequence[Any], root: Path, read: ReadText | None,
                   model: str, reads_images: ReadsImages,
                   outside: MayRead | None = None,
                   folders: Sequence[Path] = ()) -> Prepared:
    """``blocks`` read for ``model``: the words and the files (``content()`` makes them the
    user message); :class:`AttachError` names the first that cannot go, or the images when
    the model reads none. A slash command's other blocks are read so before it runs, so one
    that cannot go stops the command before it has done anything. A file outside
    ``root`` and ``folders`` is read only if ``outside`` says yes (without it, never)."""
    inside = [root, *folders]

    async def file(path: Path, shown: str) -> Attachment:
        await _allowed(path, shown, inside, outside)
        return await _file(path, shown, read)

    words: list[str] = []
    files: list[Attachment] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            for shown, path in references(block.text, root):
                files.append(await file(path, shown))
            words.append(unescape(block.text))
        elif isinstance(block, ResourceContentBlock):
            linked = _local(block.uri)
            if linked is None:
                words.append(f"[{block.name}]({block.uri})")
            else:
                files.append(await file(linked, _shown(linked, root)))
        elif isinstance(block, EmbeddedResourceContentBlock):
            files.append(_embedded(block.resource, root))
        elif isinstance(block, ImageContentBlock):
            files.append(_image(block))
        else:
            raise AttachError(f"a {getattr(block, 'type', '?')} block: this agent takes text, "
                              "resources and images")
    found = Prepared(" ".join(w for w in words if w), tuple(files))
    if found.images:
        refuse_images(found, model, await reads_images())
    return found


async def _allowed(path: Path, shown: str, inside: Sequence[Path],
                   outside: MayRead | None) -> None:
    """Nothing if ``path`` (resolved) is inside one of ``inside`` (resolved) or the
    editor allowed it; else :class:`AttachError` naming it."""
    real = path.resolve()
    if any(real.is_relative_to(folder.resolve()) for folder in inside):
        return
    if outside is not None and await outside(real):
        return
    raise AttachError(f"{shown}: {real} is outside the session's folders, and reading it "
                      "was not allowed; nothing was sent")


async def _file(path: Path, shown: str, read: ReadText | None) -> Attachment:
    if read is None or path.suffix.lower() in IMAGE_SUFFIXES:
        return read_attachment(path, shown)
    try:
        text = await read(path)
    except Exception as exc:
        raise AttachError(f"{shown}: the editor could not read it ({exc})") from None
    return Attachment(shown, len(text.encode("utf-8")), text=text)


def _embedded(resource: TextResourceContents | BlobResourceContents, root: Path) -> Attachment:
    path = _local(resource.uri)
    shown = _shown(path, root) if path is not None else resource.uri
    if isinstance(resource, TextResourceContents):
        return Attachment(shown, len(resource.text.encode("utf-8")), text=resource.text)
    mime = resource.mime_type or ""
    if not mime.startswith("image/"):
        raise AttachError(f"{shown}: a binary resource ({mime or 'no type'}); only text and "
                          "images can be attached")
    data = _decoded(resource.blob, shown)
    return Attachment(shown, len(data), "image", mime=mime, data=data)


def _image(block: ImageContentBlock) -> Attachment:
    shown = block.uri or "image"
    data = _decoded(block.data, shown)
    return Attachment(shown, len(data), "image", mime=block.mime_type, data=data)


def _decoded(data: str, shown: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise AttachError(f"{shown}: its data is not base64") from None


def _local(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
