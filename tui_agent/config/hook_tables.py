"""The raw ``[hooks]`` table of each config file, set aside by the loader (the schema does
not check it: :mod:`tui_agent.custom.hooks` reads it into hooks, with its lines)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class HookTable:
    """The ``hooks`` table of one config file, as it was read."""

    file: Path
    kind: str
    """``user``, ``project``, ``--config``..."""
    value: Any
    text: str = ""
    """The file's text, to find lines in."""
