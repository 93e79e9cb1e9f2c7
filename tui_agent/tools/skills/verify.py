"""Verifying what a server served for a skill's file against the skill's entry, before
anything of it is used (SEP-2640, "Integrity and Verification"): the answer must be the
one file asked for; its byte length must be the listed ``size`` (checked first, so a
padded file is not even hashed) and its SHA-256 the listed ``digest``; a ``SKILL.md``'s
YAML frontmatter must equal the entry's ``frontmatter`` field by field. Each failure is a
:class:`~.entries.SkillRefused` whose reason names the file and what differed. A dynamic
skill has no digests to check, but its ``SKILL.md`` frontmatter is compared all the same.

The digests are the server's own, so a match proves only that the entry and the content
agree: what the user approved (the entry) is what the model gets.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from typing import Any

from tui_agent.config.printable import safe_name
from tui_agent.tools.skills.entries import SKILL_FILE, ServerSkill, SkillRefused
from tui_agent.tools.text import clean

FRONTMATTER = re.compile(r"^---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
"""The leading ``---`` block of a ``SKILL.md`` (as the conformance suite reads it)."""


def served_bytes(skill: ServerSkill, uri: str, contents: list[Any]) -> bytes:
    """The raw bytes of ``uri`` in a ``resources/read`` answer: exactly one content, of
    that URI, text (UTF-8) or a base64 blob. Raises :class:`SkillRefused` otherwise."""
    others = sorted({str(getattr(c, "uri", "")) for c in contents} - {uri})
    if others:
        raise refused(skill, uri, f"the server answered with {clean(others[0])[:200]}, a "
                      "file the skill's manifest does not list for this read")
    if len(contents) != 1:
        raise refused(skill, uri, f"the server answered with {len(contents)} contents "
                      "instead of the one file")
    content = contents[0]
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    blob = getattr(content, "blob", None)
    try:
        return base64.b64decode(blob or "", validate=True)
    except (binascii.Error, ValueError):
        raise refused(skill, uri, "the server answered with a blob that is not base64") from None


def check_file(skill: ServerSkill, uri: str, data: bytes) -> None:
    """``data`` is what ``skill``'s entry lists for ``uri`` (size, then digest), and a
    ``SKILL.md``'s frontmatter is the entry's. Raises :class:`SkillRefused`."""
    listed = skill.file(uri)
    if listed is not None:
        digest, size = listed
        if len(data) != size:
            raise refused(skill, uri, f"it is {len(data):,} bytes, the skill's manifest "
                          f"says {size:,}")
        actual = "sha256:" + hashlib.sha256(data).hexdigest()
        if actual != digest:
            raise refused(skill, uri, f"its digest is {actual[:19]}…, the skill's manifest "
                          f"says {digest[:19]}…")
    if uri == skill.uri:
        compare_frontmatter(skill, data)


def compare_frontmatter(skill: ServerSkill, data: bytes) -> None:
    """The ``SKILL.md`` in ``data`` begins with YAML frontmatter equal, field by field, to
    the entry's. Raises :class:`SkillRefused` naming the fields that differ."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    found = frontmatter_of(text)
    if found is None:
        raise refused(skill, skill.uri, "it does not begin with YAML frontmatter (a block "
                      "between --- lines) the listing could describe")
    differ = [f"{clean(key)[:60]}: the file says {_shown(found.get(key))}, the listing "
              f"says {_shown(skill.frontmatter.get(key))}"
              for key in sorted(set(found) | set(skill.frontmatter), key=str)
              if not same(found.get(key), skill.frontmatter.get(key))]
    if differ:
        more = f" (and {len(differ) - 3} more fields)" if len(differ) > 3 else ""
        raise refused(skill, skill.uri, "its frontmatter differs from the listing's: "
                      + "; ".join(differ[:3]) + more)


def frontmatter_of(text: str) -> dict[str, Any] | None:
    """The YAML mapping at the top of ``text``, or None (no block, not YAML, not a
    mapping). Dates stay the strings they were written as: the server renders the
    frontmatter as JSON, which has no dates."""
    import yaml

    match = FRONTMATTER.match(text)
    if match is None:
        return None
    try:
        value = yaml.load(match.group(1), Loader=_no_dates())  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError:
        return None
    return value if isinstance(value, dict) else None


@functools.cache
def _no_dates() -> Any:
    """The safe loader without its timestamp resolver (built at first use: ``yaml`` is
    imported only once a server's skill is read)."""
    import yaml

    NoDates: Any = type("NoDates", (yaml.SafeLoader,), {})
    NoDates.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return NoDates


def same(a: Any, b: Any) -> bool:
    """JSON-equal: numbers by value (``1 == 1.0``) but never a boolean for a number,
    mappings by keys and values, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _shown(value: Any) -> str:
    if value is None:
        return "nothing"
    text = clean(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= 80 else text[:79] + "…"


def refused(skill: ServerSkill, uri: str, what: str) -> SkillRefused:
    """The refusal of ``skill`` because of its file ``uri``: ``what`` says what differed."""
    path = SKILL_FILE if uri == skill.uri else uri.removeprefix(skill.root + "/")
    return SkillRefused(f"skill {skill.name} of server '{safe_name(skill.server)}' is "
                        f"refused: {clean(path)[:200]} is not what the server listed: "
                        f"{what}. None of its files is read again until the server lists "
                        "it anew.")
