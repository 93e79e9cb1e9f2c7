"""The reasoning levels a model can be asked for, without pydantic: the command line's
``--reasoning-effort`` choices are known before the config is validated."""

from __future__ import annotations

from typing import Literal

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]
REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high")
"""litellm's ``reasoning_effort`` values, least effort first (``none``: no thinking)."""
