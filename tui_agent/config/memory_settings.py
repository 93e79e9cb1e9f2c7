"""``[memory]``: which instruction files (AGENTS.md and its kin) are read as project
memory. The reading itself is :mod:`tui_agent.custom.memory`'s."""

from __future__ import annotations

from pydantic import Field, field_validator

from tui_agent.config.strict import Strict

DEFAULT_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")


class MemorySettings(Strict):
    """``[memory]``: project memory (instructions the model reads in every request)."""

    enabled: bool = True
    """Read memory files at all (false: none is read, the user's own included)."""
    files: list[str] = Field(default_factory=lambda: list(DEFAULT_FILES))
    """The names looked for in each folder, in order: the first one a folder has is read
    (so a folder with an ``AGENTS.md`` has its ``CLAUDE.md`` ignored)."""

    @field_validator("files")
    @classmethod
    def _plain_names(cls, files: list[str]) -> list[str]:
        bad = [f for f in files if not f or "/" in f or "\\" in f or f in (".", "..")]
        if bad:
            raise ValueError(f"'{bad[0]}' is not a file name (no folders: a name looked "
                             "for in each folder, like AGENTS.md)")
        return files
