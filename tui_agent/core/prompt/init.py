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
"""

from __future__ import annotations

import re
from pathlib import Path

from tui_agent.config.atomic import write_text
from tui_agent.core.approval import PendingCall
from tui_agent.core.diffs import FileChange, file_change
from tui_agent.custom.memory import Where, first_present

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
