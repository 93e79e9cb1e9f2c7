"""``/init``: the model drafts the project's ``AGENTS.md``, and it is written only once the
user approved its diff.

The turn is an ordinary one with a fixed instruction (:func:`instruction`): the model looks
at the project with the tools it has, then answers with the file's whole content between a
line ``<agents-md>`` and a line ``</agents-md>`` (tags, not a code fence: the file itself
holds fences). :func:`draft_of` takes the content out of the answer; :func:`question`
is the approval question with its diff (a new file, or the diff against the file there);
:func:`write` writes it. The file is the project root's memory file: the first of
``[memory] files`` that the root holds (an existing ``CLAUDE.md`` is improved, not
shadowed by a new ``AGENTS.md``), else the first name of the list.

The app asks with its modal; ``run`` and ACP hand their gate to :func:`settle`, which
takes the draft from the reply, asks, writes and says what happened in one
:class:`~tui_agent.core.events.InitDone` (the same words as the app's notes).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui_agent.config.atomic import write_text
from tui_agent.config.trust import content_trusted, trust_content
from tui_agent.core.diffs import FileChange, file_change
from tui_agent.core.events import InitDone
from tui_agent.core.permissions import Gate, PendingCall
from tui_agent.custom.memory import Where, first_present, project_files
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

OPEN, CLOSE = "<agents-md>", "</agents-md>"
"""The lines the drafted file's content stands between in the model's answer."""

_BLOCK = re.compile(rf"^[ \t]*{re.escape(OPEN)}[ \t]*\n(.*?)^[ \t]*{re.escape(CLOSE)}[ \t]*$",
                    re.MULTILINE | re.DOTALL)


def target(where: Where) -> Path | None:
    """The file ``/init`` writes: the project root's memory file, or None when there is
    no project root (the home folder or above it, or ``--no-project``)."""
    if where.root is None:
        return None
    names = where.names or ("AGENTS.md",)
    return first_present(where.root, names) or where.root / names[0]


def instruction(path: Path) -> str:
    """The fixed words of the ``/init`` turn, for the file ``path``."""
    exists = path.is_file()
    start = (f"This project already has {path.name} ({path}): read it and improve it, keeping "
             "what is still right." if exists else
             f"Draft {path.name} for this project (it will be written to {path}).")
    return (
        f"/init: {start} It is the file of instructions an AI coding agent reads at the start "
        "of every conversation in this project. First look at the project with the tools you "
        "have (the README, the build, lint and test configuration, the layout of the "
        "source). Then write what a newcomer agent needs and cannot guess quickly: the "
        "commands to build, lint and run the tests (one test alone too), the architecture "
        "beyond a single file, and the conventions that are not obvious. Be concise: no "
        "generic advice, no list of every file, nothing you did not find in the project.\n"
        f"Answer with the file's whole content between a line {OPEN} and a line {CLOSE}, "
        "with nothing else on those two lines. The user sees its diff and decides whether "
        "it is written.")


def draft_of(reply: str) -> str | None:
    """The file's content in the model's answer (the last block between the tags), ending
    with one newline; None when the answer holds none, or an empty one."""
    found = _BLOCK.findall(reply.replace("\r\n", "\n"))
    if not found:
        return None
    text = str(found[-1]).strip("\n")
    return text + "\n" if text.strip() else None


def question(path: Path, root: Path, content: str) -> PendingCall:
    """The approval question for writing ``content`` to ``path``, with its diff."""
    change: FileChange = file_change(path.relative_to(root).as_posix(), path, content)
    return PendingCall(
        id="init", name=f"tui-agent.{path.name}", server="tui-agent", tool="/init",
        arguments={"path": str(path), "content": content},
        description=f"write the model's draft of {path.name}, the project's memory: "
                    "instructions sent to the model with every request in this project",
        why="/init writes a file only with your approval", change=change)


def write(path: Path, content: str) -> None:
    """Write the approved draft (a new file readable by all, as a repository's files
    are; an existing one keeps its permissions). Raises ``OSError``."""
    write_text(path, content, mode=None if path.exists() else 0o644)


NO_PROJECT = ("/init: no project here to write AGENTS.md in (the working directory is your "
              "home folder or above it, or --no-project)")
"""Said when :func:`target` finds no project root."""


def no_draft(path: Path) -> str:
    """Said when the reply holds no file between the tags."""
    return (f"/init: the reply holds no {path.name} (its content between a line {OPEN} and "
            f"a line {CLOSE}): nothing written")


def last_reply(messages: Iterable[dict[str, Any]]) -> str | None:
    """The text of the conversation's last answer of the model (the ``/init`` turn's)."""
    replies = [m["content"] for m in messages
               if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
    return replies[-1] if replies else None


def trust_after(where: Where, path: Path) -> bool:
    """After ``/init`` wrote ``path``: whether the next turn reads it. In a project whose
    content is not trusted, the file is trusted when it is the only project memory file
    (the user approved every word of it); otherwise it waits for the project's trust."""
    root = where.root
    if root is None or content_trusted(root):
        return True
    if project_files(where) == [path]:
        try:
            trust_content(root)
            return True
        except OSError:
            pass
    return False


async def settle(gate: Gate, where: Where, path: Path, reply: str | None, *,
                 reads: str = "the next turn") -> InitDone:
    """The end of the ``/init`` turn for a front end with a gate: the draft taken from
    ``reply``, the write asked of ``gate`` (with its diff), done if approved, and what
    happened (``reads``: when the file is read, "the next turn" or "the next run")."""
    root = where.root
    assert root is not None, "a target is in the project root"
    shown, where_to = clean(str(path)), str(path)
    draft = draft_of(reply) if reply is not None else None
    if draft is None:
        return InitDone("no_draft", no_draft(path), where_to)
    decision = await gate.decide(question(path, root, draft))
    if not decision.approved:
        why = f" ({clean(decision.reason)})" if decision.reason else ""
        return InitDone("denied", f"/init: denied{why}: {shown} not written", where_to)
    try:
        await asyncio.to_thread(write, path, draft)
    except OSError as exc:
        return InitDone("cannot_write", cannot_write(path, exc), where_to)
    read = await asyncio.to_thread(trust_after, where, path)
    return InitDone("written", wrote(path, draft, read, reads), where_to, draft.count("\n"))


def cannot_write(path: Path, exc: OSError) -> str:
    """Said when the approved draft could not be written."""
    return f"/init: cannot write {clean(str(path))}: {clean(exc.strerror or str(exc))}"


def wrote(path: Path, draft: str, read: bool, reads: str = "the next turn") -> str:
    """Said once the draft is written: when it is read as memory (``read``: from
    ``reads`` on; else once the project is trusted)."""
    later = "" if read else " once you trust this project (its other memory files are " \
        "not trusted yet)"
    return (f"/init: wrote {clean(str(path))} ({counted(draft.count(chr(10)), 'line')}): "
            f"{reads} reads it as memory{later}")
