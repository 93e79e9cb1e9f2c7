"""The endpoint, key and ``params`` of ``[model]`` and of each ``[models."NAME"]``
table, made ready at load: ``${VAR}`` expanded in ``api_base``, ``api_key`` and every
string inside ``params`` (``extra_headers`` too), ``api_key_env`` looked up, and the
keys recorded as secrets to mask. A problem names the file, the line and the key.

``[model]`` stops the load on a problem. A ``[models."NAME"]`` table does not: it is
kept as written, with its error, which is raised only when that model is chosen
(:meth:`~tui_agent.config.loader.Settings.model_for`), so a table for a model you are
not using does not stop every start. Which table applies to which model is
:mod:`tui_agent.config.model_choice`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import MIN_SECRET_LEN, Expander, UnsetVariable
from tui_agent.config.models import Config, ModelSettings
from tui_agent.config.printable import quoted
from tui_agent.config.reading import Origin, Source
from tui_agent.config.urls import url_secrets

MIN_SECRET = 8
"""Shorter values are not masked (a one-character "key" would mask every such letter)."""
SECRET_NAME = re.compile(r"key|token|secret|passw|auth|cookie|credential", re.IGNORECASE)
"""A name whose string values are secret: in ``params`` (at any depth:
``extra_headers.Authorization``, ``x-api-key``) they are recorded for masking; ``config
--show`` hides them there and in a server's env and headers."""

M = TypeVar("M", bound=ModelSettings)


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else quoted."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else quoted(name)


def table_section(name: str) -> str:
    """The ``Settings.sources`` section of ``[models."NAME"]`` (``models."NAME"``)."""
    return f"models.{toml_key(name)}"


@dataclass
class Expanded:
    """What :func:`expand_models` made of a config."""

    config: Config
    broken: dict[str, ConfigError] = field(default_factory=dict)
    """``[models."NAME"]`` tables that could not be made ready (kept as written in
    ``config``), by model name: the error to raise when that model is chosen."""
    from_variables: set[str] = field(default_factory=set)
    """Every ``params`` string that came from a ``${VAR}`` (whole, as expanded), for
    ``config --show`` to hide however short."""


def expand(model: M, section: str, sources: Mapping[tuple[str, str], Source],
           expander: Expander, from_variables: set[str] | None = None) -> M:
    """``model`` (``[model]`` when ``section`` is ``model``, else a ``[models]`` table)
    with its variables expanded and its key looked up; raises :class:`ConfigError`."""
    def fail(key: str, problem: str, *inner: str) -> ConfigError:
        origin = sources.get((section, key))
        dotted = ".".join((section, key, *inner))
        if not isinstance(origin, Origin):
            return ConfigError(f"{dotted}: {problem}")
        return ConfigError(f"{origin.where(*inner)}{dotted}: {problem}", origin.file)

    def ex(value: str, key: str, secret: bool, *inner: str) -> str:
        try:
            return expander.expand(value, secret=secret)
        except UnsetVariable as unset:
            raise fail(key, f"${{{unset.name}}} is not set in the environment (set "
                       f"{unset.name}, or write ${{{unset.name}:-default}} to give a default)",
                       *inner) from None

    def param(value: Any, path: tuple[str, ...], secret: bool) -> Any:
        if isinstance(value, dict):
            return {k: param(v, (*path, str(k)), secret or bool(SECRET_NAME.search(str(k))))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [param(v, (*path, str(i)), secret) for i, v in enumerate(value)]
        if not isinstance(value, str):
            return value
        out = ex(value, "params", True, *path)
        if "${" in value and from_variables is not None:
            from_variables.add(out)
        elif secret and len(out) >= MIN_SECRET:  # a secret written as it is
            expander.secrets.add(out)
        return out

    update: dict[str, Any] = {}
    if model.api_base:
        update["api_base"] = ex(model.api_base, "api_base", False)
        # Its credentials (a password, a ?api-key=) are masked wherever they may show.
        expander.secrets.update(s for s in url_secrets(update["api_base"])
                                if len(s) >= MIN_SECRET_LEN)
    if model.api_key:
        update["api_key"] = ex(model.api_key, "api_key", True)
        if len(update["api_key"]) >= MIN_SECRET:  # also one written as it is
            expander.secrets.add(update["api_key"])
    elif model.api_key_env:
        value = expander.env.get(model.api_key_env)
        if not value:
            raise fail("api_key_env", f"the variable {model.api_key_env} is not set")
        expander.secrets.add(value)
        update["api_key"] = value
    if model.params:
        update["params"] = param(model.params, (), False)
    return model.model_copy(update=update)


def expand_models(config: Config, sources: Mapping[tuple[str, str], Source],
                  expander: Expander) -> Expanded:
    """``config`` with ``[model]`` and every ``[models]`` table that can be expanded
    expanded; raises :class:`ConfigError` for ``[model]`` only."""
    out = Expanded(config)
    tables = {}
    for name, table in config.models.items():
        try:
            tables[name] = expand(table, table_section(name), sources, expander,
                                  out.from_variables)
        except ConfigError as exc:
            tables[name] = table
            out.broken[name] = exc
    model = expand(config.model, "model", sources, expander, out.from_variables)
    out.config = config.model_copy(update={"model": model, "models": tables})
    return out
