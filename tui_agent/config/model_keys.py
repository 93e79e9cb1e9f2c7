"""The endpoint and key of ``[model]`` and of each ``[models."NAME"]`` table, made ready
at load: ``${VAR}`` expanded in ``api_base`` and ``api_key``, ``api_key_env`` looked up,
and the keys recorded as secrets to mask. A problem names the file, the line and the
key. Which table applies to which model is :mod:`tui_agent.config.model_choice`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import Expander, UnsetVariable
from tui_agent.config.models import Config, ModelSettings
from tui_agent.config.reading import Origin, Source

MIN_SECRET = 8
"""Shorter values are not masked (a one-character "key" would mask every such letter)."""

M = TypeVar("M", bound=ModelSettings)


def table_section(name: str) -> str:
    """The ``Settings.sources`` section of ``[models."NAME"]`` (``models."NAME"``)."""
    quoted = name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)
    return f"models.{quoted}"


def expand(model: M, section: str, sources: Mapping[tuple[str, str], Source],
           expander: Expander) -> M:
    """``model`` (``[model]`` when ``section`` is ``model``, else a ``[models]`` table)
    with its variables expanded and its key looked up."""
    def fail(key: str, problem: str) -> ConfigError:
        origin = sources.get((section, key))
        if not isinstance(origin, Origin):
            return ConfigError(f"{section}.{key}: {problem}")
        return ConfigError(f"{origin.where()}{section}.{key}: {problem}", origin.file)

    def ex(value: str, key: str, secret: bool) -> str:
        try:
            return expander.expand(value, secret=secret)
        except UnsetVariable as unset:
            raise fail(key, f"${{{unset.name}}} is not set in the environment") from None

    update: dict[str, Any] = {}
    if model.api_base:
        update["api_base"] = ex(model.api_base, "api_base", secret=False)
    if model.api_key:
        update["api_key"] = ex(model.api_key, "api_key", secret=True)
        if len(update["api_key"]) >= MIN_SECRET:  # also one written as it is
            expander.secrets.add(update["api_key"])
    elif model.api_key_env:
        value = expander.env.get(model.api_key_env)
        if not value:
            raise fail("api_key_env", f"the variable {model.api_key_env} is not set")
        expander.secrets.add(value)
        update["api_key"] = value
    return model.model_copy(update=update)


def expand_models(config: Config, sources: Mapping[tuple[str, str], Source],
                  expander: Expander) -> Config:
    """``config`` with ``[model]`` and every ``[models]`` table expanded."""
    tables = {name: expand(table, table_section(name), sources, expander)
              for name, table in config.models.items()}
    return config.model_copy(update={
        "model": expand(config.model, "model", sources, expander), "models": tables})
