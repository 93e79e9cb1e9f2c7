"""The skills index: the few lines the system prompt carries about the skills on offer
(each one's name and a description, shortened where long), so that the model knows when
to load one. Nothing else of a skill reaches the model before it is loaded."""

from __future__ import annotations

from collections.abc import Mapping

from tui_agent.core.skills.catalog import SkillEntry
from tui_agent.tools.text import clean

SHOWN = 150
"""Characters of a description the index shows (the spec allows 1,024): about 35 tokens,
so that with its name a skill costs the first request under 60."""


def short(description: str, limit: int = SHOWN) -> str:
    """``description`` cut at a word before ``limit`` characters, with an ellipsis."""
    text = " ".join(clean(description).split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0] if " " in text[:limit - 1] else text[:limit - 1]
    return cut.rstrip(" ,;:.") + "…"


def skills_index(skills: Mapping[str, SkillEntry]) -> str | None:
    """The index of ``skills`` (by the name the model uses), or None when there are none."""
    if not skills:
        return None
    lines = "\n".join(f"- {name}: {short(entry.description)}"
                      for name, entry in skills.items())
    return ("Skills: instructions for particular tasks, loaded on demand. When a task "
            "matches one, first call the `skill` tool with its name; read the files it "
            f"lists with `file` when its instructions point to them.\n{lines}")
