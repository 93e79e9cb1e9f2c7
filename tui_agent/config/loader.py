"""Read, validate and merge the configuration: the TOML file plus any imported JSON.

Everything is checked once, here, and every problem comes back as a
:class:`ConfigError` naming the file, the line and the key.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from tui_agent.config import paths
from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import Expander, UnsetVariable
from tui_agent.config.locate import toml_line
from tui_agent.config.models import SECTION_MODELS, Config, ServerConfig

Locator = Callable[[Sequence[str | int]], int | None]


@dataclass(frozen=True)
class Origin:
    """Where a server was defined: the file and the key path to it inside that file."""

    file: Path
    path: tuple[str | int, ...]
    locate: Locator

    def where(self, *more: str | int) -> str:
        line = self.locate(self.path + more)
        return f"line {line}: " if line else ""


@dataclass
class Settings:
    """The result of loading: the expanded config and what came with it."""

    config: Config
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    secrets: frozenset[str] = frozenset()
    origins: dict[str, Origin] = field(default_factory=dict)

    def override(self, *, model: str | None = None, api_base: str | None = None,
                 code_mode: bool = False) -> None:
        """Command-line flags over the config: ``--model``, ``--api-base``, ``--code-mode``."""
        overrides = {k: v for k, v in (("name", model), ("api_base", api_base)) if v}
        self.config.model = self.config.model.model_copy(update=overrides)
        if code_mode:
            self.config.code_mode.enabled = True


def _fields_at(loc: tuple[str | int, ...]) -> list[str]:
    model: type[BaseModel] | None = None
    if not loc:
        model = Config
    elif len(loc) == 1 and isinstance(loc[0], str):
        model = SECTION_MODELS.get(loc[0])
    elif len(loc) == 2 and loc[0] == "servers":
        model = ServerConfig
    return list(model.model_fields) if model else []


def _suggest(key: str, options: list[str]) -> str:
    near = difflib.get_close_matches(key, options, n=1, cutoff=0.6)
    if near:
        return f" (did you mean '{near[0]}'?)"
    return f" (expected one of: {', '.join(options)})" if options else ""


def describe(error: ValidationError, locate: Locator, base: tuple[str | int, ...] = (),
             fields: Callable[[tuple[str | int, ...]], list[str]] = _fields_at) -> list[str]:
    """One line per pydantic error: where it is, which key, and what was expected."""
    lines = []
    for err in error.errors():
        loc = base + tuple(err["loc"])
        line = locate(loc)
        where = f"line {line}: " if line else ""
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            problem = f"unknown key '{key}'" + _suggest(key, fields(loc[len(base):-1]))
            dotted = ".".join(str(p) for p in loc[:-1]) or "(top level)"
        elif kind == "missing":
            problem = "is required but missing"
        else:
            msg = err["msg"].removeprefix("Value error, ").replace("Input should be", "expected")
            shown = err.get("input")
            got = "" if isinstance(shown, dict | list) or shown is None else f" (got {shown!r})"
            problem = msg + got
        lines.append(f"{where}{dotted}: {problem}")
    return lines


def read_config_text(path: Path) -> str:
    """A config file's text, or a :class:`ConfigError` saying why it cannot be had."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("the file does not exist", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read it: {exc}", path) from None


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    text = read_config_text(path)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path) from None


def _validate(data: Mapping[str, Any], locate: Locator, file: Path) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe(exc, locate), file) from None


def _expand_server(name: str, server: ServerConfig, origin: Origin,
                   expander: Expander) -> ServerConfig:
    def ex(value: str, *key: str | int, secret: bool = False) -> str:
        try:
            return expander.expand(value, secret=secret)
        except UnsetVariable as unset:
            dotted = ".".join(str(k) for k in (*origin.path, *key))
            raise ConfigError(
                f"{origin.where(*key)}{dotted}: ${{{unset.name}}} is not set in the environment "
                f"(set it, or write ${{{unset.name}:-default}} to give a default)",
                origin.file) from None

    def maybe(key: str) -> str | None:
        value = getattr(server, key)
        return ex(value, key) if value else None

    command: str | list[str] | None = server.command
    if isinstance(command, list):
        command = [ex(c, "command", i) for i, c in enumerate(command)]
    elif command:
        command = ex(command, "command")
    return server.model_copy(update={
        "command": command,
        "args": [ex(a, "args", i) for i, a in enumerate(server.args)],
        "volumes": [ex(v, "volumes", i) for i, v in enumerate(server.volumes)],
        **{key: maybe(key) for key in ("image", "container", "workdir", "docker_host")},
        "env": {k: ex(v, "env", k, secret=True) for k, v in server.env.items()},
        "url": ex(server.url, "url", secret=True) if server.url else None,
        "headers": {k: ex(v, "headers", k, secret=True) for k, v in server.headers.items()},
    })


def enabled_copy(settings: Settings, name: str,
                 env: Mapping[str, str] = os.environ) -> ServerConfig:
    """Server ``name`` switched on, with its ``${VAR}`` references expanded now (a server
    disabled in the file is loaded unexpanded, so an unset variable does not stop the
    rest of the config). Raises :class:`ConfigError` naming the line of an unset one."""
    server = settings.config.servers[name].model_copy(update={"disabled": False})
    if not settings.config.servers[name].disabled:
        return server
    origin = settings.origins.get(name) or Origin(Path("<config>"), ("servers", name),
                                                   lambda _loc: None)
    return _expand_server(name, server, origin, Expander(env))


def _expand_model(config: Config, file: Path | None, locate: Locator,
                  expander: Expander) -> Config:
    model = config.model

    def ex(value: str, key: str, secret: bool) -> str:
        try:
            return expander.expand(value, secret=secret)
        except UnsetVariable as unset:
            line = locate(("model", key))
            raise ConfigError(f"{f'line {line}: ' if line else ''}model.{key}: "
                              f"${{{unset.name}}} is not set in the environment", file) from None

    update: dict[str, Any] = {}
    if model.api_base:
        update["api_base"] = ex(model.api_base, "api_base", secret=False)
    if model.api_key:
        update["api_key"] = ex(model.api_key, "api_key", secret=True)
    elif model.api_key_env:
        value = expander.env.get(model.api_key_env)
        if not value:
            line = locate(("model", "api_key_env"))
            raise ConfigError(f"{f'line {line}: ' if line else ''}model.api_key_env: "
                              f"the variable {model.api_key_env} is not set", file)
        expander.secrets.add(value)
        update["api_key"] = value
    return config.model_copy(update={"model": model.model_copy(update=update)})


def load(config_file: Path | None = None, mcp_configs: Sequence[Path] = (),
         env: Mapping[str, str] = os.environ) -> Settings:
    """Load the config file (``--config``, else ``$TUI_AGENT_CONFIG``, else the XDG
    default, which may be absent) and merge each ``--mcp-config`` JSON file in order."""
    from tui_agent.config.mcp_json import load_mcp_json

    explicit = config_file is not None or bool(env.get(paths.CONFIG_ENV))
    path = config_file or paths.default_config_file(env)
    settings = Settings(config=Config())
    locate: Locator = lambda _loc: None  # noqa: E731
    if explicit or path.exists():
        data, text = _read_toml(path)
        locate = lambda loc: toml_line(text, loc)  # noqa: E731
        settings.config = _validate(data, locate, path)
        settings.files.append(path)
        for name in settings.config.servers:
            settings.origins[name] = Origin(path, ("servers", name), locate)
    for json_path in mcp_configs:
        imported = load_mcp_json(Path(json_path))
        settings.files.append(Path(json_path))
        for name, (server, origin, warnings) in imported.items():
            settings.warnings.extend(warnings)
            if name in settings.config.servers:
                earlier = settings.origins[name].file
                settings.warnings.append(
                    f"{json_path}: server '{name}' replaces the one from {earlier}")
            settings.config.servers[name] = server
            settings.origins[name] = origin
    return _expand(settings, path if settings.files else None, locate, env)


def _expand(settings: Settings, file: Path | None, locate: Locator,
            env: Mapping[str, str]) -> Settings:
    expander = Expander(env)
    config = _expand_model(settings.config, file, locate, expander)
    servers = {
        name: server if server.disabled else
        _expand_server(name, server, settings.origins[name], expander)
        for name, server in config.servers.items()
    }
    settings.config = config.model_copy(update={"servers": servers})
    settings.secrets = frozenset(expander.secrets)
    return settings
