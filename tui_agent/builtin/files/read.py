"""``read {path, offset, limit}``: a text file's lines, numbered as ``cat -n`` numbers them,
from line ``offset`` (1 first) for ``limit`` lines; an image (PNG, JPEG, GIF, WebP) as MCP
image content; a binary file named with its size, not shown. The file is streamed: a
5 GB log is read a window at a time, and a long line is cut, so one call stays small."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, ToolAnnotations

from tui_agent.builtin import roots
from tui_agent.builtin.files.guard import (
    MAX_EDIT,
    SNIFF,
    in_thread,
    is_binary,
    open_regular,
    size_text,
)
from tui_agent.builtin.workspace import Refused, Workspace

LIMIT = 2000
"""Lines one call returns when ``limit`` is not given."""
LONGEST = 2000
"""Characters of one line shown; the rest is cut with a mark."""
MOST_OUT = 256 * 1024
"""Characters one call returns, whatever the limit."""
IMAGES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"),
          (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))

DESCRIPTION = (
    "Read a file. Text comes with line numbers (cat -n style); offset is the first line "
    f"(1-based) and limit the number of lines (default {LIMIT}); lines longer than "
    f"{LONGEST} characters are cut. Images (PNG, JPEG, GIF, WebP) come back as images. A "
    "relative path is relative to the working directory.")


def register(server: MCPServer, workspace: Workspace) -> None:
    @server.tool(name="read", description=DESCRIPTION,
                 annotations=ToolAnnotations(title="Read a file", read_only_hint=True,
                                             open_world_hint=False))
    async def read(path: str, ctx: Context[Any, Any], offset: int = 1,
                   limit: int = LIMIT) -> str | ImageContent:
        await roots.current(ctx, workspace)
        return await in_thread(
            lambda: read_file(workspace, workspace.resolve(path), offset, limit))


def read_file(workspace: Workspace, path: Path, offset: int = 1,
              limit: int = LIMIT) -> str | ImageContent:
    """What ``read`` answers for the resolved ``path``."""
    if offset < 1:
        raise Refused(f"offset is {offset}: lines are numbered from 1")
    if limit < 1:
        raise Refused(f"limit is {limit}: give at least 1 line")
    shown = workspace.shown(path)
    fd, info = open_regular(workspace, path)
    with os.fdopen(fd, "rb") as f:
        head = f.read(SNIFF)
        image = _image_type(head)
        if image is not None:
            return _image(f, head, image, shown, info.st_size)
        if is_binary(head):
            return (f"{shown} is a binary file ({size_text(info.st_size)}): not shown. "
                    "Read text files only.")
        if info.st_size == 0:
            return f"{shown} is empty."
        f.seek(0)
        return _lines(f, shown, offset, limit)


def _image_type(head: bytes) -> str | None:
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in IMAGES if head.startswith(magic)), None)


def _image(f: Any, head: bytes, kind: str, shown: str, size: int) -> ImageContent:
    if size > MAX_EDIT:
        raise Refused(f"{shown} is an image of {size_text(size)}: images over "
                      f"{size_text(MAX_EDIT)} are not sent")
    data = head + f.read(MAX_EDIT)
    return ImageContent(type="image", data=base64.b64encode(data).decode("ascii"),
                        mime_type=kind)


def _lines(f: Any, shown: str, offset: int, limit: int) -> str:
    out: list[str] = []
    size = 0
    number = 0
    while True:
        line, cut = _line(f)
        if line is None:
            break
        number += 1
        if number < offset:
            continue
        if len(out) == limit or size > MOST_OUT:
            out.append(f"(more lines follow: offset={number} reads on)")
            break
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if cut or len(text) > LONGEST:
            text = text[:LONGEST] + " [line cut]"
        out.append(f"{number:6}\t{text}")
        size += len(text) + 8
    if not out:
        return f"{shown} has {number} lines: offset {offset} is past its end."
    return "\n".join(out)


def _line(f: Any) -> tuple[bytes | None, bool]:
    """The next line (its first :data:`LONGEST` × 4 bytes at most, the rest skipped)."""
    line = f.readline(LONGEST * 4)
    if not line:
        return None, False
    if line.endswith(b"\n") or len(line) < LONGEST * 4:
        return line, False
    while True:  # the rest of a long line, read in pieces and dropped
        rest = f.readline(1024 * 1024)
        if not rest or rest.endswith(b"\n"):
            return line, True
