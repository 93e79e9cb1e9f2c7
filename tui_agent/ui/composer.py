"""Writing a message: the ``@`` file picker, images (``/image``, a pasted path), the
prompt in ``$EDITOR`` (``ctrl+e``, ``/edit``), reading the files a message names when it
is sent (a file that cannot go is named, the prompt is given back and nothing is sent),
and copying out (``/copy``).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SuspendNotSupported

from tui_agent.core.attachments import (
    AttachError,
    Prepared,
    prepare,
    read_attachment,
    refuse_images,
)
from tui_agent.tools.text import clean
from tui_agent.ui.widgets.messages import copy_out
from tui_agent.ui.widgets.prompt import PromptInput

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp


def _prompt(app: ChatApp) -> PromptInput:
    return app.chat.query_one(PromptInput)


async def outgoing(app: ChatApp, text: str) -> Prepared | None:
    """``text`` with the files it names and the images waiting, read; None (the problem
    noted, the prompt given back) when one cannot go."""
    try:
        files = await asyncio.to_thread(prepare, text, Path.cwd(), list(app.images))
        if files.images:
            refuse_images(files, app.backend.model_name or "", await _reads_images(app))
    except (AttachError, OSError, ValueError) as exc:  # ValueError: a NUL in a path
        await app.transcript.note(f"{exc}; nothing was sent", "error")
        prompt = _prompt(app)
        if not prompt.text.strip():
            prompt.load_text(text)
            prompt.move_cursor(prompt.document.end)
        return None
    return files


async def _reads_images(app: ChatApp) -> bool:
    takes = getattr(app.backend.agent.llm, "takes", None)
    return takes is not None and "image" in await asyncio.to_thread(takes)


async def pick_file(app: ChatApp) -> None:
    """``@`` typed: the picker; the chosen path completes the ``@``."""
    from tui_agent.ui.screens.files import FilePicker

    prompt = _prompt(app)
    carried: list[str] = []

    def typed() -> str:
        carried.append(prompt.take_typed_reference())
        return carried[-1]

    def chosen(path: str | None) -> None:
        if path:
            prompt.insert_reference(path)
        elif carried:  # esc: what was typed after the @ goes back where it was
            prompt.insert(carried[-1])
        prompt.focus()

    await app.push_screen(FilePicker(Path.cwd(), typed=typed), chosen)


async def attach_image(app: ChatApp, path: Path, shown: str) -> None:
    """An image for the next message (``/image``, a pasted path), if the model reads it."""
    try:
        image = await asyncio.to_thread(read_attachment, path, shown, image_only=True)
        if not await _reads_images(app):
            refuse_images(Prepared("", (image,)), app.backend.model_name or "", False)
    except AttachError as exc:
        await app.transcript.note(str(exc).replace("was not sent", "was not attached"),
                                  "error")
        return
    app.images.append(image)
    app.show_pending()
    await app.transcript.note(f"attached {image.chip()} to the next message")


def editor_command() -> list[str] | None:
    """``$VISUAL``, else ``$EDITOR``, else the first of nano, vim, vi found."""
    given = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if given:
        return shlex.split(given)
    found = next((shutil.which(name) for name in ("nano", "vim", "vi") if shutil.which(name)),
                 None)
    return [found] if found else None


async def run_editor(app: ChatApp, command: list[str],
                     path: Path) -> subprocess.CompletedProcess[bytes]:
    """``command path``, the terminal handed over to it while the app is suspended; where
    there is no terminal to hand over (a test's pilot) it runs without one. Raises
    :class:`OSError` when the editor cannot start."""
    try:
        with app.suspend():
            return subprocess.run([*command, str(path)], check=False)
    except SuspendNotSupported:
        return await asyncio.to_thread(subprocess.run, [*command, str(path)], check=False,
                                       stdin=subprocess.DEVNULL, capture_output=True)


async def edit_prompt(app: ChatApp) -> None:
    """The prompt in ``$EDITOR``: what it saves becomes the prompt (a failed editor leaves
    the prompt as it was)."""
    prompt = _prompt(app)
    command = editor_command()
    if command is None:
        await app.transcript.note("no editor: set $EDITOR (or $VISUAL)", "warning")
        return
    editor = clean(command[0])
    with tempfile.TemporaryDirectory(prefix="tui-agent-") as folder:
        draft = Path(folder) / "prompt.md"
        draft.write_text(prompt.text, encoding="utf-8")
        try:
            done = await run_editor(app, command, draft)
            text = draft.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            await app.transcript.note(f"the editor {editor} failed: {clean(str(exc))}; the "
                                      "prompt is as it was", "error")
            return
    if done.returncode != 0:
        await app.transcript.note(f"the editor {editor} exited with {done.returncode}: "
                                  "the prompt is as it was", "warning")
        return
    prompt.load_text(text.rstrip("\n"))
    prompt.move_cursor(prompt.document.end)
    prompt.focus()


async def copy_reply(app: ChatApp, which: str) -> None:
    """``/copy [N]``: the last reply (or the N-th last) to the clipboard."""
    replies = [m for m in app.backend.agent.messages
               if m.get("role") == "assistant" and isinstance(m.get("content"), str)
               and m["content"].strip()]
    try:
        back = int(which) if which else 1
    except ValueError:
        await app.transcript.note(f"/copy {which}: give a number (1 is the last reply)",
                                  "error")
        return
    if not 1 <= back <= len(replies):
        await app.transcript.note("no reply to copy yet" if not replies else
                                  f"/copy {back}: there are {len(replies)} replies", "warning")
        return
    what = "the last reply" if back == 1 else f"reply {back} from the end"
    copy_out(app.transcript, replies[-back]["content"], what)
