"""Agent Skills (agentskills.io) found in folders: each a directory holding ``SKILL.md``,
its YAML frontmatter parsed and checked against the spec's rules.

Where they are looked for (:func:`skill_dirs`), in this order, the first of a name in a
scope winning: the user's ``skills/`` beside the config file, ``~/.agents/skills/`` and
``~/.claude/skills/`` (scope ``user``); then, in a trusted project only, the project's
``.tui-agent/skills/``, ``.agents/skills/`` and ``.claude/skills/`` (scope ``project``).
Discovery reads only the frontmatter of each ``SKILL.md`` (at most :data:`HEAD_BYTES`);
the body and the other files are read when the model loads the skill
(:mod:`tui_agent.custom.skill_files`). A skill that breaks a rule is not offered: it is a
:class:`SkillProblem` naming the file and line. Two scopes may each have a skill of the
same name (the catalog in ``core.skills`` offers both, qualified); within one scope the
later is a duplicate.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.config import paths
from tui_agent.config.project import SKILL_DIRS

SKILL_FILE = "SKILL.md"
USER_DIRS = (".agents/skills", ".claude/skills")
"""Below the home directory, after the user's ``skills/`` beside the config."""
PROJECT_DIRS = SKILL_DIRS
"""Below the project's root (the same list the trust question reads)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
HEAD_BYTES = 64 * 1024
"""How much of a ``SKILL.md`` discovery reads: the frontmatter must end within it."""
MAX_SKILLS = 1000
"""Skill folders looked at per directory (a folder of thousands is reported, not read)."""
NAME_RULE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A skill that is not offered, and why, where."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else \
            f"{self.file}: {self.message}"


class SkillError(Exception):
    """A ``SKILL.md`` that breaks a rule (carries the :class:`SkillProblem`)."""

    def __init__(self, problem: SkillProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill as its frontmatter says: what the model is told of it before it loads
    it (``name``, ``description``), and where its files are."""

    name: str
    description: str
    folder: Path
    scope: str
    """``user`` or ``project``."""
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    """As written (space-separated in the file): shown, honoured only once approved."""
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True, slots=True)
class Discovered:
    """The skills found, in order, and the ones that were not offered."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()


def skill_dirs(env: Mapping[str, str] = os.environ, project: Path | None = None
               ) -> list[tuple[str, Path]]:
    """Where skills are looked for, each with its scope: the user's folders, then (given a
    trusted ``project`` root) the project's."""
    found = [("user", paths.default_config_file(env).parent / "skills")]
    found += [("user", home(env) / d) for d in USER_DIRS]
    if project is not None:
        found += [("project", project / d) for d in PROJECT_DIRS]
    return found


def home(env: Mapping[str, str] = os.environ) -> Path:
    """The home directory whose ``.agents/skills`` and ``.claude/skills`` are the user's
    (the test suite points it at its temporary home)."""
    return Path(env.get("HOME") or Path.home())


def discover(dirs: Iterable[tuple[str, Path]]) -> Discovered:
    """Every skill below ``dirs`` (one level: ``<dir>/<name>/SKILL.md``), parsed; the
    later of a name within a scope is reported as a duplicate. The same folder reached
    twice (``.agents`` linked to ``.claude``) counts once."""
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    seen: dict[tuple[str, str], Skill] = {}
    folders: set[Path] = set()
    for scope, base in dirs:
        for folder in _folders(base, problems):
            real = _real(folder)
            if real in folders:
                continue
            folders.add(real)
            try:
                skill = parse(folder / SKILL_FILE, scope)
            except SkillError as exc:
                problems.append(exc.problem)
                continue
            first = seen.get((scope, skill.name))
            if first is not None:
                problems.append(SkillProblem(skill.file, _key_line(skill.file, "name"),
                                             f"a second {scope} skill named '{skill.name}' "
                                             f"(the first is {first.file}): skipped"))
                continue
            seen[scope, skill.name] = skill
            skills.append(skill)
    return Discovered(tuple(skills), tuple(problems))


def _folders(base: Path, problems: list[SkillProblem]) -> list[Path]:
    """The folders of ``base`` that hold a ``SKILL.md``, by name."""
    try:
        entries = sorted(base.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        problems.append(SkillProblem(base, 0, f"cannot list it ({exc.strerror or exc})"))
        return []
    if len(entries) > MAX_SKILLS:
        problems.append(SkillProblem(base, 0, f"{len(entries)} entries: only the first "
                                              f"{MAX_SKILLS} are looked at"))
    found = []
    for entry in entries[:MAX_SKILLS]:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if (entry / SKILL_FILE).exists() or (entry / SKILL_FILE).is_symlink():
            found.append(entry)
    return found


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def parse(file: Path, scope: str) -> Skill:
    """The skill whose ``SKILL.md`` is ``file``; raises :class:`SkillError` naming the
    line of what breaks a rule."""
    head = _head(file)
    lines = head.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError(SkillProblem(file, 1, "no YAML frontmatter: the file must begin "
                                               "with a line '---'"))
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        raise SkillError(SkillProblem(file, 1, "the frontmatter has no closing '---' line"
                                               f" within {HEAD_BYTES // 1024} KiB"))
    data = _yaml(file, "\n".join(lines[1:end]))
    return _skill(file, scope, data, lines[1:end])


def _head(file: Path) -> str:
    """The start of ``file``, read only if it is a regular file."""
    try:
        st = os.stat(file)
        if not stat.S_ISREG(st.st_mode):
            raise SkillError(SkillProblem(file, 0, "not a regular file: not read"))
        with open(file, "rb") as handle:
            raw = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise SkillError(SkillProblem(file, 0, f"cannot read it ({exc.strerror or exc})")
                         ) from None
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")


def _yaml(file: Path, text: str) -> dict[str, Any]:
    import yaml  # here: only discovery needs it, off the app's first frame

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillError(SkillProblem(file, line, f"the frontmatter is not valid YAML "
                                                  f"({what})")) from None
    if not isinstance(data, dict):
        raise SkillError(SkillProblem(file, 2, "the frontmatter is not a mapping of "
                                               "fields (name: ..., description: ...)"))
    return data


def _skill(file: Path, scope: str, data: dict[str, Any], lines: Sequence[str]) -> Skill:
    def fail(key: str, message: str) -> SkillError:
        return SkillError(SkillProblem(file, _line_of(lines, key), message))

    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not name:
        raise fail("name", "no 'name' in the frontmatter (it is required)")
    if problem := name_problem(name):
        raise fail("name", f"name '{name[:80]}' {problem}")
    if name != file.parent.name:
        raise fail("name", f"name '{name}' is not the folder's name "
                           f"'{file.parent.name}' (the spec requires them equal)")
    if not isinstance(description, str) or not description.strip():
        raise fail("description", "no 'description' in the frontmatter (it is required, "
                                  "non-empty)")
    if len(description) > MAX_DESCRIPTION:
        raise fail("description", f"the description has {len(description)} characters "
                                  f"(at most {MAX_DESCRIPTION})")
    compatibility = data.get("compatibility", "")
    if not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY:
        raise fail("compatibility", f"compatibility must be text of at most "
                                    f"{MAX_COMPATIBILITY} characters")
    allowed = allowed_tools(data.get("allowed-tools", ""))
    if allowed is None:
        raise fail("allowed-tools", "allowed-tools must be a space-separated string")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise fail("metadata", "metadata must be a mapping of keys to values")
    license_ = data.get("license", "")
    return Skill(name, " ".join(description.split()), file.parent, scope,
                 license=str(license_) if license_ else "", compatibility=compatibility,
                 allowed_tools=allowed,
                 metadata={str(k): str(v) for k, v in metadata.items()})


def name_problem(name: str) -> str | None:
    """What breaks the spec's naming rules in ``name``, or None."""
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long (at most {MAX_NAME})"
    if NAME_RULE.fullmatch(name) is None:
        return ("breaks the naming rules: lowercase letters, digits and single hyphens, "
                "not at the start or end")
    return None


def _line_of(lines: Sequence[str], key: str) -> int:
    """The file's line of ``key:`` in the frontmatter (``lines``, after the opening
    ``---``); the opening line when it is absent."""
    for number, line in enumerate(lines, 2):
        if line.startswith(f"{key}:"):
            return number
    return 1


def _key_line(file: Path, key: str) -> int:
    try:
        return _line_of(_head(file).splitlines()[1:], key)
    except SkillError:
        return 1


def allowed_tools(value: object) -> tuple[str, ...] | None:
    """The tools a frontmatter's ``allowed-tools`` names: the spec's space-separated string
    (commas taken as spaces too), or a list (Claude Code's docs show one). None: it is
    neither."""
    if isinstance(value, list):
        value = " ".join(str(t) for t in value)
    return tuple(value.replace(",", " ").split()) if isinstance(value, str) else None
