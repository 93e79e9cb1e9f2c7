"""The base of every config model: unknown keys are an error (reported with the nearest
known one), and defaults are validated too."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)
