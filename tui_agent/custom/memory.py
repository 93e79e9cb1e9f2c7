"""Project memory: the ``AGENTS.md`` files (or, where a folder has none, its ``CLAUDE.md``
or ``GEMINI.md``; ``[memory] files`` sets the names) the model reads in every request.

Where they are read from, in this order (nearer files last, so they win): the user's
config folder (``tui-agent config --path``'s folder), then each folder from the project
root down to the working directory. The project root is the outermost of the git work
tree holding the working directory and the folder of the project's config files, never
the home folder or above it. Project files are someone else's prompts: they are read only
once the user trusts the project (:class:`Where` ``trusted``; the trust dialog lists them).

Inside a file, ``@path`` imports another file as Claude Code's ``CLAUDE.md`` does: at the
start of a line or after a space, relative to the importing file (``~/`` is the home
folder; absolute paths too), not inside a code span or a fenced code block, at most
:data:`MAX_DEPTH` imports deep, never resolving (symlinks followed) outside the project or
the home folder. An ``@word`` that names no existing file is a mention, not an import, and
is left alone (one ending in ``.md`` or ``.txt`` is reported as missing).

Every problem (unreadable, not a regular file, not UTF-8, too big and cut, an import loop,
an import outside the allowed folders, too deep) is a :class:`MemoryProblem` naming the
file (and the line of an import); the rest is still read. :class:`MemoryReader` re-reads
only when a file it read or looked for changed (one ``stat`` per candidate: cheap enough
for every turn). The text the model reads is assembled in :mod:`tui_agent.core.prompt`.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tui_agent.config.memory_settings import DEFAULT_FILES

MAX_DEPTH = 5
"""How many imports deep a chain may go (Claude Code's limit)."""
MAX_FILE = 64 * 1024
"""Bytes read of one file; the rest is cut, and said so."""
MAX_TOTAL = 192 * 1024
"""Bytes read of every memory file and import together; files past it are skipped."""
IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
"""An ``@path`` at a line's start or after whitespace (``\\ `` escapes a space)."""
CODE_SPAN = re.compile(r"(`+).*?\1")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
REPORTED_MISSING = (".md", ".markdown", ".txt")
"""An ``@name`` ending so is surely meant as an import: reported when it is missing."""


@dataclass(frozen=True)
class MemoryProblem:
    """Something wrong with one memory file (``line``: of the import that failed)."""

    path: Path
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"memory: {where}: {self.message}"


@dataclass(frozen=True)
class MemoryFile:
    """One file read: who owns it (``user``, ``project``), its text, and the file that
    imported it (None for a file found in a folder)."""

    path: Path
    scope: str
    text: str
    imported_by: Path | None = None


@dataclass(frozen=True)
class Memory:
    """What was read, in the order the model reads it; what went wrong; and the project
    files not read because the project is not trusted."""

    files: tuple[MemoryFile, ...] = ()
    problems: tuple[MemoryProblem, ...] = ()
    untrusted: tuple[Path, ...] = ()

    def text(self) -> str:
        """Every file under a heading naming it (the model knows which folder says what)."""
        return "\n\n".join(f"Contents of {f.path} ({_whose(f)}):\n\n{f.text.strip()}"
                           for f in self.files if f.text.strip())


def _whose(file: MemoryFile) -> str:
    owner = "the user's instructions for every project" if file.scope == "user" else \
        "the project's instructions"
    return f"{owner}, imported by {file.imported_by.name}" if file.imported_by else owner


@dataclass(frozen=True)
class Where:
    """Where memory is looked for: the user's config folder, the project root and the
    working directory, the names looked for, and whether project files may be read."""

    user_dir: Path | None
    root: Path | None
    cwd: Path
    home: Path
    names: tuple[str, ...] = DEFAULT_FILES
    trusted: bool = False
    enabled: bool = True

    def folders(self) -> list[tuple[str, Path]]:
        """``(scope, folder)`` in reading order: the user's, then root down to cwd."""
        found: list[tuple[str, Path]] = []
        if self.user_dir is not None:
            found.append(("user", self.user_dir))
        if self.root is not None:
            below = self.cwd.relative_to(self.root).parts if self.cwd.is_relative_to(
                self.root) else ()
            folder = self.root
            found.append(("project", folder))
            for part in below:
                folder = folder / part
                found.append(("project", folder))
        return found

    def allowed(self) -> tuple[Path, ...]:
        """The folders an import may resolve into."""
        return tuple(p for p in (self.home, self.root, self.user_dir) if p is not None)


def project_root(cwd: Path, home: Path, config_root: Path | None = None) -> Path | None:
    """The root project memory is read from: the outermost of the git work tree holding
    ``cwd`` and ``config_root`` (the project's config folder), else ``cwd``; None when
    that would be the home folder or above it (home is the user's scope)."""
    cwd, home = cwd.resolve(), home.resolve()
    if home.is_relative_to(cwd):  # cwd is home, or above it
        return None
    git = next((d for d in (cwd, *cwd.parents) if (d / ".git").exists()), None)
    found = [p for p in (git, config_root) if p is not None and cwd.is_relative_to(p)
             and not home.is_relative_to(p)]  # a dotfiles repo in home is not a project
    return min(found, key=lambda p: len(p.parts)) if found else cwd


def first_present(folder: Path, names: Sequence[str]) -> Path | None:
    """The first of ``names`` that ``folder`` holds (a broken link counts: it is reported)."""
    for name in names:
        path = folder / name
        if path.is_symlink() or path.exists():
            return path
    return None


def project_files(where: Where) -> list[Path]:
    """The project's memory files (what the trust dialog lists), trusted or not."""
    if not where.enabled:
        return []
    return [p for scope, folder in where.folders() if scope == "project"
            and (p := first_present(folder, where.names)) is not None]


def read_memory(where: Where) -> Memory:
    """Every memory file ``where`` names, with their imports, and what went wrong."""
    reading = _Reading(where)
    untrusted: list[Path] = []
    if where.enabled:
        for scope, folder in where.folders():
            path = first_present(folder, where.names)
            if path is None:
                continue
            if scope == "project" and not where.trusted:
                untrusted.append(path)
                continue
            reading.file(path, scope, None, ())
    return Memory(tuple(reading.files), tuple(reading.problems), tuple(untrusted))


@dataclass
class _Reading:
    where: Where
    files: list[MemoryFile] = field(default_factory=list)
    problems: list[MemoryProblem] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)
    total: int = 0

    def file(self, path: Path, scope: str, by: Path | None, chain: tuple[Path, ...]) -> None:
        real = Path(os.path.realpath(path))
        if real in self.seen:
            return
        self.seen.add(real)
        if self.total >= MAX_TOTAL:
            self.problems.append(MemoryProblem(path, f"not read: the memory files before "
                                               f"it already take {MAX_TOTAL // 1024} KB"))
            return
        text = self._text(path)
        if text is None:
            return
        self.files.append(MemoryFile(path, scope, text, by))
        if len(chain) >= MAX_DEPTH:
            if imports(text):
                self.problems.append(MemoryProblem(path, f"its imports are not read: imports "
                                                   f"nest at most {MAX_DEPTH} deep"))
            return
        for line, target in imports(text):
            self._import(path, line, target, scope, (*chain, real))

    def _import(self, path: Path, line: int, target: str, scope: str,
                chain: tuple[Path, ...]) -> None:
        resolved = resolve(target, path.parent, self.where.home)
        if resolved is None:
            if target.lower().endswith(REPORTED_MISSING):
                self.problems.append(MemoryProblem(path, f"@{target}: no such file", line))
            return
        real = Path(os.path.realpath(resolved))
        if real in chain:
            loop = " → ".join(p.name for p in (*chain[chain.index(real):], real))
            self.problems.append(MemoryProblem(path, f"@{target} imports a file already "
                                               f"being read ({loop}): not read again", line))
            return
        if not any(real.is_relative_to(Path(os.path.realpath(a)))
                   for a in self.where.allowed()):
            self.problems.append(MemoryProblem(
                path, f"@{target} is outside the project and your home folder ({real}): "
                "not read", line))
            return
        self.file(resolved, scope, path, chain)

    def _text(self, path: Path) -> str | None:
        data, problem = read_capped(path, min(MAX_FILE, MAX_TOTAL - self.total))
        if problem is not None:
            self.problems.append(MemoryProblem(path, problem))
        if data is None:
            return None
        self.total += len(data)
        try:
            return codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=False)
        except UnicodeDecodeError as exc:
            self.problems.append(MemoryProblem(path, f"not read: not UTF-8 text (byte "
                                               f"{exc.start} is {data[exc.start]:#04x})"))
            return None


def read_capped(path: Path, cap: int) -> tuple[bytes | None, str | None]:
    """At most ``cap`` bytes of a regular file (cut at a line's end), and what to say: why
    nothing was read, or that the file was cut. Never blocks on a FIFO, never reads a
    device (``/dev/zero``) or more than ``cap`` + 1 bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, f"not read: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not read: not a regular file (a device, a pipe or a folder)"
        chunks: list[bytes] = []
        got = 0
        while got <= cap and (chunk := os.read(fd, min(65536, cap + 1 - got))):
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        return None, f"not read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) <= cap:
        return data, None
    kept = data[:cap]
    kept = kept[:kept.rfind(b"\n") + 1] or kept
    return kept, (f"cut: it is {_kb(info.st_size)}, only its first {_kb(len(kept))} are "
                  f"read (at most {_kb(cap)})")


def _kb(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"


def imports(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` of each ``@path`` outside code spans and fenced blocks."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(
                    fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        bare = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        found += [(number, m.group(1).replace("\\ ", " ")) for m in IMPORT.finditer(bare)]
    return found


def resolve(target: str, base: Path, home: Path) -> Path | None:
    """The file ``@target`` names (trailing punctuation of a sentence dropped when the
    path with it does not exist), or None when there is none."""
    for candidate in (target, target.rstrip(".,;:!?)]'\"")):
        if not candidate:
            continue
        path = home / candidate[2:] if candidate.startswith("~/") else Path(candidate)
        path = path if path.is_absolute() else base / path
        if path.is_file() or path.is_symlink():
            return path
    return None


class MemoryReader:
    """:func:`read_memory`, again only when a file read or looked for changed, or the
    project's trust did (``trusted``: asked at each read, for a project trusted while the
    app runs; default: ``where.trusted``)."""

    def __init__(self, where: Where, trusted: Callable[[], bool] | None = None) -> None:
        self.where = where
        self._trusted = trusted
        self._stamp: tuple[tuple[str, int, int], ...] | None = None
        self._memory = Memory()

    def read(self) -> Memory:
        """The memory as the files are now (the last read when nothing changed)."""
        if self._trusted is not None and self._trusted() != self.where.trusted:
            self.where = replace(self.where, trusted=not self.where.trusted)
            self._stamp = None
        stamp = self._stamps()
        if stamp != self._stamp:
            self._memory = read_memory(self.where)
            self._stamp = self._stamps()
        return self._memory

    def _stamps(self) -> tuple[tuple[str, int, int], ...]:
        looked = [folder / name for _scope, folder in self.where.folders()
                  for name in self.where.names]
        looked += [f.path for f in self._memory.files]
        out = []
        for path in looked:
            try:
                info = path.stat()
                out.append((str(path), info.st_mtime_ns, info.st_size))
            except OSError:
                out.append((str(path), -1, -1))
        return tuple(out)
