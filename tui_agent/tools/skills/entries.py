"""A skill a server serves (SEP-2640, ``io.modelcontextprotocol/skills``), as its
``skills/list`` entry describes it: :class:`ServerSkill`, checked and made from the wire
entry by :func:`entry_of`, and the errors a read of one raises (:class:`SkillError`,
:class:`SkillRefused`).

An entry names the skill by the URI of its ``SKILL.md`` (``skill://<skill-path>/SKILL.md``),
carries the ``SKILL.md`` frontmatter verbatim, and a manifest of every file with its
``sha256:`` digest and size (or ``"dynamic"``, for a skill generated on demand). Nothing is
read from the server to build it: what the model sees of the skill before it is loaded (its
name and description) comes from here, and every later read is verified against it
(:mod:`.verify`). An entry that breaks the extension's rules (a path with ``..``, a file
outside the skill, a malformed digest, more than the spec's limits) is not offered at all:
:func:`entry_of` says why, naming the skill.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from tui_agent.config.printable import safe_name
from tui_agent.tools.text import clean

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The extension's identifier, in the client's and the server's ``capabilities.extensions``."""
SKILL_FILE = "SKILL.md"
MAX_FILES = 512
"""Files a skill may list (the spec's limit, ``SKILL.md`` included)."""
MAX_SKILL_BYTES = 16 * 1024 * 1024
"""The spec's limit on a skill's total size (the sum of its files' sizes)."""
MAX_URI = 2_048
"""Characters of a skill or file URI (longer is not a path any author writes)."""
MAX_DESCRIPTION = 1_024
"""Characters of a description kept for the model (the Agent Skills spec's limit)."""
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""The Agent Skills naming rule: lowercase letters, digits and single inner hyphens."""


class SkillError(Exception):
    """A skill's file could not be given (no such skill or file, the server cannot be
    reached, a path the model asked for is not one): the skill itself stays usable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SkillRefused(SkillError):
    """What the server served does not match the skill's entry (size, digest,
    frontmatter, a file the manifest does not list): the content is not used, and no file
    of the skill is read again until the server lists it differently."""


@dataclass(frozen=True, slots=True)
class ServerSkill:
    """One skill of one server, keyed by ``(server, uri)`` (two servers may serve the
    same URI: two unrelated skills)."""

    server: str
    """The host's name of the server (``[servers.NAME]``), never the server's own."""
    uri: str
    """The URI of the skill's ``SKILL.md``."""
    name: str
    """``frontmatter.name``, cleaned for display."""
    description: str
    """``frontmatter.description``, cleaned and capped at :data:`MAX_DESCRIPTION`."""
    frontmatter: Mapping[str, Any]
    """The frontmatter as the entry gives it (read-only), compared with the file's."""
    files: tuple[tuple[str, str, int], ...] | None
    """``(uri, digest, size)`` of every file, ``SKILL.md`` first; None for ``dynamic``."""

    @property
    def root(self) -> str:
        """The skill's directory: its URI without ``/SKILL.md``."""
        return self.uri.removesuffix("/" + SKILL_FILE)

    @property
    def paths(self) -> tuple[str, ...] | None:
        """Each listed file's path in the skill (``references/FORMS.md``), ``SKILL.md``
        first; None for a dynamic skill."""
        if self.files is None:
            return None
        return tuple(uri.removeprefix(self.root + "/") for uri, _, _ in self.files)

    @property
    def digest_key(self) -> str:
        """``sha256:`` over the entry (URI, frontmatter, every file's URI, digest and
        size, or ``dynamic``): the same while the server lists the skill the same way,
        different once anything in it changed. An approval bound to it is asked again for
        a changed skill."""
        body = json.dumps([self.uri, dict(self.frontmatter),
                           "dynamic" if self.files is None else sorted(self.files)],
                          sort_keys=True, ensure_ascii=False, default=str)
        return "sha256:" + hashlib.sha256(body.encode()).hexdigest()

    def file(self, uri: str) -> tuple[str, int] | None:
        """The listed ``(digest, size)`` of ``uri``, or None when it is not listed."""
        for listed, digest, size in self.files or ():
            if listed == uri:
                return digest, size
        return None


def entry_of(server: str, raw: Any) -> ServerSkill:
    """The skill one ``skills/list`` entry describes. Raises :class:`ValueError` saying
    what is wrong with it (the caller names the server)."""
    if not isinstance(raw, dict):
        raise ValueError(f"an entry is {type(raw).__name__}, not an object")
    uri = raw.get("uri")
    if not isinstance(uri, str) or not uri:
        raise ValueError("an entry has no uri")
    shown = clean(uri)[:200]
    if problem := _uri_problem(uri):
        raise ValueError(f"skill {shown}: {problem}")
    front = raw.get("frontmatter")
    if not isinstance(front, dict):
        raise ValueError(f"skill {shown}: no frontmatter object")
    name, description = front.get("name"), front.get("description")
    if not isinstance(name, str) or not isinstance(description, str) or not description:
        raise ValueError(f"skill {shown}: the frontmatter needs a name and a description")
    last = uri.removesuffix("/" + SKILL_FILE).rsplit("/", 1)[-1]
    if name != last:
        raise ValueError(f"skill {shown}: its name {clean(name)[:80]!r} is not the last "
                         f"segment of its uri ({clean(last)[:80]!r})")
    if len(name) > 64 or not NAME.fullmatch(name):
        raise ValueError(f"skill {shown}: the name {clean(name)[:80]!r} breaks the naming "
                         "rules (1-64 lowercase letters, digits and single hyphens)")
    files = _manifest(uri, raw.get("resources"), shown)
    text = clean(description).strip()
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION - 1] + "…"
    return ServerSkill(server, uri, name, text, MappingProxyType(dict(front)), files)


def _manifest(uri: str, resources: Any, shown: str) -> tuple[tuple[str, str, int], ...] | None:
    if resources == "dynamic":
        return None
    if not isinstance(resources, list):
        raise ValueError(f"skill {shown}: resources is neither a list of files nor "
                         "\"dynamic\"")
    if len(resources) > MAX_FILES:
        raise ValueError(f"skill {shown}: lists {len(resources):,} files, more than the "
                         f"{MAX_FILES} a skill may have")
    root = uri.removesuffix("/" + SKILL_FILE)
    files: dict[str, tuple[str, str, int]] = {}
    for item in resources:
        file = item.get("uri") if isinstance(item, dict) else None
        if not isinstance(file, str):
            raise ValueError(f"skill {shown}: a file of it has no uri")
        where = f"skill {shown}: file {clean(file)[:200]}"
        if file != uri and (not file.startswith(root + "/") or
                            path_problem(file.removeprefix(root + "/")) or len(file) > MAX_URI):
            raise ValueError(f"{where} is not inside the skill's directory {clean(root)[:200]}")
        digest, size = item.get("digest"), item.get("size")
        if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
            raise ValueError(f"{where}: the digest is not sha256: and 64 lowercase hex digits")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError(f"{where}: no size in bytes")
        if file in files:
            raise ValueError(f"{where} is listed twice")
        files[file] = (file, digest, size)
    if uri not in files:
        raise ValueError(f"skill {shown}: its files do not include its {SKILL_FILE}")
    total = sum(size for _, _, size in files.values())
    if total > MAX_SKILL_BYTES:
        raise ValueError(f"skill {shown}: its files add up to {total:,} bytes, more than "
                         f"the {MAX_SKILL_BYTES:,} a skill may have")
    return (files.pop(uri), *files.values())


def _uri_problem(uri: str) -> str | None:
    """What makes ``uri`` no skill URI (None: it is one)."""
    if len(uri) > MAX_URI:
        return f"the uri is longer than {MAX_URI:,} characters"
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme or not rest.endswith("/" + SKILL_FILE):
        return f"the uri is not <scheme>://<skill-path>/{SKILL_FILE}"
    if problem := path_problem(rest):
        return f"the uri's path {problem}"
    return None


def path_problem(path: str) -> str | None:
    """What makes ``path`` (``/``-separated, relative) unsafe to put under a skill's
    directory: an empty, ``.`` or ``..`` segment (also percent-encoded), a backslash or a
    control character. None: it is safe."""
    if any(ord(ch) < 32 or ch in "\\\x7f" for ch in path):
        return "has a control character or a backslash"
    for segment in path.split("/"):
        if unquote(segment) in ("", ".", "..") or "/" in unquote(segment):
            return f"has a segment {segment!r}"
    return None


def file_uri(skill: ServerSkill, path: str | None) -> str:
    """The URI of the skill's file at ``path`` (None: ``SKILL.md``). Raises
    :class:`SkillError` for a path that would leave the skill's directory."""
    if path is None or path in (SKILL_FILE, "./" + SKILL_FILE):
        return skill.uri
    relative = path.removeprefix("./")
    if len(relative) > MAX_URI or (problem := path_problem(relative)):
        raise SkillError(f"{clean(path)[:200]!r} is not a path inside skill {skill.name} of "
                         f"server '{safe_name(skill.server)}': it "
                         f"{'is too long' if len(relative) > MAX_URI else problem}")
    return f"{skill.root}/{relative}"
