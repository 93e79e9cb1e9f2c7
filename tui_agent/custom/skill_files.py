"""Reading a skill's files once the model loads it: the ``SKILL.md`` body, the list of
the folder's other files, and one of them by relative path.

Every read stays inside the skill's folder: a path that is absolute, has a ``..`` part,
or resolves (through a symlink) outside the folder is refused; so is anything that is not
a regular file (a device such as ``/dev/zero``, a FIFO), a file over :data:`MAX_BYTES`,
and a binary file. A refusal is a :class:`SkillFileError` whose text names the file and
what is wrong, for the model and the user alike.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from tui_agent.custom.skills import SKILL_FILE

MAX_BYTES = 256 * 1024
"""The largest file of a skill read whole (``SKILL.md`` included)."""
MAX_LISTED = 200
"""Files listed beside the body at most (a folder with more says how many were left)."""


class SkillFileError(Exception):
    """A skill file that is not read, and why (the message names it)."""


def body(folder: Path) -> str:
    """``SKILL.md`` without its frontmatter."""
    return without_frontmatter(read(folder, SKILL_FILE))


def without_frontmatter(text: str) -> str:
    """A ``SKILL.md``'s text without its frontmatter (the model has its name and
    description already)."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            return "".join(lines[end + 1:]).strip("\n")
    return text


def listing(folder: Path) -> tuple[list[str], int]:
    """The skill's other files (relative, ``/``-separated, sorted), at most
    :data:`MAX_LISTED`, and how many more there were. Hidden entries and what links out
    of the folder are not listed."""
    root = folder.resolve()
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and _inside(root, Path(directory) / d))
        for name in sorted(files):
            path = Path(directory) / name
            rel = path.relative_to(root).as_posix()
            if name.startswith(".") or rel == SKILL_FILE or not _inside(root, path):
                continue
            found.append(rel)
    found.sort()
    return found[:MAX_LISTED], max(0, len(found) - MAX_LISTED)


def _inside(root: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except OSError:
        return False


def read(folder: Path, relative: str) -> str:
    """The text of ``relative`` inside ``folder``; raises :class:`SkillFileError`."""
    where = f"{folder / relative}" if relative else str(folder)
    pure = PurePosixPath(relative.replace("\\", "/"))
    if not relative or pure.is_absolute() or ".." in pure.parts:
        raise SkillFileError(f"{relative!r}: not a path inside the skill's folder (it "
                             "must be relative, without '..')")
    root = folder.resolve()
    path = root.joinpath(*pure.parts)
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        raise SkillFileError(f"{where}: no such file in the skill") from None
    except (OSError, RuntimeError) as exc:
        raise SkillFileError(f"{where}: cannot read it ({exc})") from None
    if not real.is_relative_to(root):
        raise SkillFileError(f"{where}: links outside the skill's folder (to {real}); "
                             "not read")
    return _text(real, where)


def _text(real: Path, where: str) -> str:
    try:
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise SkillFileError(f"{where}: {kind}; not read")
        if st.st_size > MAX_BYTES:
            raise SkillFileError(f"{where}: {st.st_size:,} bytes, over the "
                                 f"{MAX_BYTES // 1024} KiB a skill file may have; not read")
        with open(real, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise SkillFileError(f"{where}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise SkillFileError(f"{where}: over the {MAX_BYTES // 1024} KiB a skill file may "
                             "have; not read")
    if b"\0" in raw:
        raise SkillFileError(f"{where}: a binary file; not read (only text is)")
    return raw.decode("utf-8", errors="replace")
