"""Read, validate and merge the configuration: the TOML file plus any imported JSON.

Everything is checked once, here, and every problem comes back as a
:class:`ConfigError` naming the file, the line and the key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from tui_agent.config.builtin_server import add_builtin, overlay, wanted
from tui_agent.config.errors import ConfigError
from tui_agent.config.held import HeldProject, held_back
from tui_agent.config.hook_tables import HookTable
from tui_agent.config.interpolate import MIN_SECRET_LEN, Expander
from tui_agent.config.locate import toml_line
from tui_agent.config.model_choice import ModelFlags, dropped, resolve
from tui_agent.config.model_keys import MIN_SECRET, expand_models, table_section
from tui_agent.config.models import SECTION_MODELS, Config, ModelSettings, ServerConfig
from tui_agent.config.project import Project, content_parts, free, layer_files
from tui_agent.config.reading import Locator, Origin, Source, read_config_text
from tui_agent.config.rule_text import RuleEntry
from tui_agent.config.rule_where import RULE_KEYS, layer_rules
from tui_agent.config.server_keys import UnsetServerVariable, expand_server
from tui_agent.config.urls import url_secrets
from tui_agent.config.validate import Unknown, validate


@dataclass(frozen=True)
class Layer:
    """One file that was read, and which scope it belongs to."""

    kind: str
    """``user``, ``project``, ``--config`` or ``--mcp-config``."""
    file: Path


@dataclass
class Settings:
    """The result of loading: the expanded config and what came with it."""

    config: Config
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    secrets: frozenset[str] = frozenset()
    origins: dict[str, Origin] = field(default_factory=dict)
    layers: list[Layer] = field(default_factory=list)
    sources: dict[tuple[str, str], Source] = field(default_factory=dict)
    """``(section, key)`` -> where the value came from; absent: the built-in default."""
    project: Project | None = None
    held: HeldProject | None = None
    """The project's servers and settings awaiting the user's agreement, if any."""
    project_content: bool = True
    """False with ``--no-project``: nothing of the project is read, its config nor its
    content (memory files), trusted or not."""
    configured: ModelSettings | None = None
    """``[model]`` as the files set it, once :meth:`override` chose the model in use
    (``config.model``); None: ``config.model`` is it."""
    flags: ModelFlags = ModelFlags()
    """The command line's model flags, applied to every model chosen later too."""
    broken: dict[str, ConfigError] = field(default_factory=dict)
    """``[models."NAME"]`` tables that could not be made ready (an unset variable), by
    model name: raised when that model is chosen, not at load."""
    hooks: list[HookTable] = field(default_factory=list)
    """Each file's ``[hooks]`` table (a held project's not among them), user first: read
    into hooks by :func:`tui_agent.custom.hooks.parse_hooks`."""
    from_variables: frozenset[str] = frozenset()
    """``params`` values that came from a ``${VAR}``: ``config --show`` hides them."""
    unready: dict[str, str] = field(default_factory=dict)
    """Servers that cannot start, by name, with why for people (a ``${VAR}`` of theirs is
    not set): kept as written, shown as failed, never started; the rest works."""
    rules: list[RuleEntry] = field(default_factory=list)
    """``[permissions]`` allow/ask/deny of every layer applied, each rule with its file
    and line: the lists concatenate across layers (a later file never drops a rule)."""

    def model_for(self, name: str | None) -> ModelSettings:
        """The settings model ``name`` is used with (None: the one in use):
        :func:`~tui_agent.config.model_choice.resolve` over these files and flags.
        Raises :class:`ConfigError` when that model's ``[models]`` table is broken."""
        chosen = name or self.config.model.name
        self.check(chosen)
        base = self.configured or self.config.model
        return resolve(base, self.config.models, chosen, self.flags)

    def check(self, name: str | None) -> None:
        """Raise the error of model ``name``'s ``[models]`` table, if it has one."""
        error = self.broken.get(name) if name else None
        if error is not None:
            raise ConfigError(error.problems, error.file)

    def override(self, *, model: str | None = None, api_base: str | None = None,
                 code_mode: bool = False, reasoning_effort: str | None = None,
                 mode: Literal["default", "plan", "auto"] | None = None) -> None:
        """Command-line flags over the config: ``--model`` (resolved as
        :meth:`model_for` does), ``--api-base``, ``--reasoning-effort``, ``--code-mode``,
        ``--mode`` (over ``[permissions] default_mode``).
        Raises :class:`ConfigError` when the model chosen (or ``sampling_model``) has a
        broken ``[models]`` table."""
        base = self.configured or self.config.model
        chosen = model or base.name
        self.check(chosen)
        self.check(base.sampling_model)
        self.configured = base
        self.flags = ModelFlags(model or None, api_base or None, reasoning_effort or None)
        self.mask_url_secrets(api_base)
        self.config.model = resolve(base, self.config.models, chosen, self.flags)
        for key in dropped(base, chosen, self.flags):
            self.sources.pop(("model", key), None)
        table = self.config.models.get(chosen) if chosen else None
        for key in table.model_fields_set if table is not None else ():
            section = table_section(str(chosen))
            origin = self.sources.get((section, key)) or self.sources.get((section,
                                                                           "api_key_env"))
            if origin is not None:
                self.sources["model", key] = origin
        for key, flag, value in (("name", "--model", model), ("api_base", "--api-base",
                                 api_base), ("reasoning_effort", "--reasoning-effort",
                                             reasoning_effort)):
            if value and getattr(self.config.model, key) == value:
                self.sources["model", key] = flag
        if code_mode:
            self.config.code_mode.enabled = True
            self.sources["code_mode", "enabled"] = "--code-mode"
        if mode:
            self.config.permissions.default_mode = mode
            self.sources["permissions", "default_mode"] = "--mode"

    def mask_url_secrets(self, url: str | None) -> frozenset[str]:
        """Add the credentials in ``url`` (a password, a token as the user name, a
        secret-named query value) to the secrets masked everywhere: a model's server
        given on the command line or with ``/model NAME URL``. Returns them."""
        found = frozenset(s for s in url_secrets(url) if len(s) >= MIN_SECRET_LEN)
        self.secrets |= found
        return found

    def add_dirs(self, folders: Sequence[str | os.PathLike[str]]) -> None:
        """``--add-dir``: each folder, made absolute, added to ``[agent] roots`` for this
        session, so every server (the built-in ``local`` first) may work in it; a folder
        that does not exist is a :class:`ConfigError` naming it."""
        for folder in folders:
            path = os.path.abspath(os.path.expanduser(folder))
            if not os.path.isdir(path):
                raise ConfigError(f"--add-dir {os.fspath(folder)}: not a folder")
            if path not in self.config.agent.roots:
                self.config.agent.roots.append(path)
                self.sources["agent", "roots"] = "--add-dir"

    def source(self, section: str, key: str) -> str:
        """Where ``section.key`` came from, for people: ``file:line``, a flag, or default."""
        found = self.sources.get((section, key), "default")
        return found if isinstance(found, str) else found.place()


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    text = read_config_text(path)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path) from None


def enabled_copy(settings: Settings, name: str,
                 env: Mapping[str, str] = os.environ) -> ServerConfig:
    """Server ``name`` switched on, with its ``${VAR}`` references expanded now (a server
    disabled in the file is loaded unexpanded, so an unset variable does not stop the
    rest of the config; one left as written because a variable was unset is tried again).
    Raises :class:`ConfigError` naming the line of an unset one."""
    server = settings.config.servers[name].model_copy(update={"disabled": False})
    if not settings.config.servers[name].disabled and name not in settings.unready:
        return server
    origin = settings.origins.get(name) or Origin(Path("<config>"), ("servers", name),
                                                   lambda _loc: None)
    return expand_server(name, server, origin, Expander(env))


@dataclass
class _Read:
    """One file read and validated on its own (so an error names it), not yet merged."""

    layer: Layer
    raw: dict[str, Any]
    locate: Locator
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    servers: dict[str, tuple[ServerConfig, Origin]] = field(default_factory=dict)
    toml: bool = False
    """Read but not validated yet (:func:`_check_layer`)."""
    text: str = ""
    rules: list[RuleEntry] = field(default_factory=list)
    hooks: Any = None
    """The file's ``[hooks]`` table, set aside from the schema's check."""


def _read_layer(kind: str, path: Path, warnings: list[str]) -> _Read:
    if path.suffix.lower() == ".json":
        from tui_agent.config.mcp_json import load_mcp_json

        raw, imported = load_mcp_json(path)
        out = _Read(Layer(kind, path), raw, lambda loc: None)
        for name, (server, origin, more) in imported.items():
            warnings.extend(more)
            out.servers[name] = (server, origin)
        return out
    data, text = _read_toml(path)
    data = overlay(data)
    locate: Locator = lambda loc: toml_line(text, loc)  # noqa: E731
    return _Read(Layer(kind, path), data, locate, toml=True, text=text)


def _check_layer(out: _Read, unknown: Unknown | None) -> None:
    """Validate a TOML layer and keep what it set (``unknown``: a project not trusted
    yet, where :func:`~tui_agent.config.validate.validate` sets unknown keys aside)."""
    if not out.toml:
        return
    out.hooks = out.raw.get("hooks")  # in the project's digest, but not the schema's
    config = validate({k: v for k, v in out.raw.items() if k != "hooks"}, out.locate,
                      out.layer.file, unknown)
    for section in SECTION_MODELS:
        model = getattr(config, section)
        out.sections[section] = _set_keys(model)
    out.models = {name: _set_keys(table) for name, table in config.models.items()}
    out.servers = {name: (server, Origin(out.layer.file, ("servers", name), out.locate))
                   for name, server in config.servers.items()}
    out.rules = layer_rules(out.sections["permissions"], out.text, out.layer.file)


def _set_keys(model: Any) -> dict[str, Any]:
    """The keys a file set, in the schema's order (not the set's: what is held is listed
    for people in the same order every time)."""
    return {k: getattr(model, k) for k in type(model).model_fields
            if k in model.model_fields_set}


def _merged(before: Any, value: Any) -> Any:
    """A later layer's value for a key; a table inside a section (``[tools.shell]``)
    merges key by key with the earlier layers' as sections do."""
    if isinstance(before, BaseModel) and type(before) is type(value):
        return type(value).model_validate({**_set_keys(before), **_set_keys(value)})
    return value


def load(config_file: Path | None = None, mcp_configs: Sequence[Path] = (),
         env: Mapping[str, str] = os.environ, *, cwd: Path | None = None,
         project: bool = True, trust: bool = False, builtin: bool = True) -> Settings:
    """Read every layer and merge them: built-in defaults < the user config < the
    project's files < ``--config`` < each ``--mcp-config`` (flags come on top, through
    :meth:`Settings.override`). Sections merge key by key; a server is replaced whole by
    a later one of the same name.

    A project's servers, and its settings not on the allow-list
    (:data:`~tui_agent.config.project.FREE_KEYS`: the model's name and endpoint, roots,
    the system prompt...), apply only once the user has agreed to this project's exact
    content (remembered in the state dir); ``trust`` records that agreement now. Until
    then they are in ``Settings.held``.

    The built-in server ``local`` is added unless a file defines its own ``local``, or
    ``builtin`` is False (``--no-builtin``) or ``TUI_AGENT_NO_BUILTIN`` is set
    (:mod:`~tui_agent.config.builtin_server`)."""
    files, found = layer_files(config_file, mcp_configs, env, cwd=cwd, project=project)
    settings = Settings(config=Config(), project=found, project_content=project)
    reads = [_read_layer(kind, path, settings.warnings) for kind, path in files]
    settings.layers = [r.layer for r in reads]
    settings.files = [r.layer.file for r in reads]
    held = held_back(found, {r.layer.file: r.raw for r in reads if r.layer.kind == "project"},
                     env, trust)
    for read in reads:
        _check_layer(read, held.keys if held is not None and read.layer.kind == "project"
                     else None)
    sections: dict[str, dict[str, Any]] = {s: {} for s in SECTION_MODELS}
    servers: dict[str, ServerConfig] = {}
    models: dict[str, dict[str, Any]] = {}
    for read in reads:
        file = read.layer.file
        keep = held is None or read.layer.kind != "project"
        if read.hooks is not None and keep:
            settings.hooks.append(HookTable(file, read.layer.kind, read.hooks, read.text))
        elif read.hooks is not None and held is not None:  # commands run on this machine
            held.keys["hooks"] = (read.hooks, Origin(file, ("hooks",), read.locate))
        for section, values in read.sections.items():
            for key, value in values.items():
                if not keep and not free(section, key):
                    assert held is not None
                    held.keys[f"{section}.{key}"] = (
                        value, Origin(file, (section, key), read.locate))
                    continue
                if (section, key) in RULE_KEYS:  # rules add up across layers
                    value = [*sections[section].get(key, []), *value]
                sections[section][key] = _merged(sections[section].get(key), value)
                settings.sources[section, key] = Origin(file, (section, key), read.locate)
        if keep:
            settings.rules.extend(read.rules)
        for name, values in read.models.items():
            for key, value in values.items():
                origin = Origin(file, ("models", name, key), read.locate)
                if not keep and not free("models", key):
                    assert held is not None
                    held.keys[f"{table_section(name)}.{key}"] = (value, origin)
                    continue
                models.setdefault(name, {})[key] = value
                settings.sources[table_section(name), key] = origin
        for name, (server, origin) in read.servers.items():
            if not keep:
                assert held is not None
                held.servers[name] = (server, origin)
                continue
            if name in servers and settings.origins[name].file != file:
                settings.warnings.append(f"{file}: server '{name}' replaces the one from "
                                         f"{settings.origins[name].file}")
            servers[name] = server
            settings.origins[name] = origin
    if held is not None and found is not None:
        held.folders = {found.relative(folder): tuple(part["files"])
                        for folder, part in content_parts(found).items()}
    if held is not None and (held.servers or held.keys or held.skills or held.folders):
        settings.held = held
    settings.config = Config.model_validate({**sections, "servers": servers,
                                             "models": models})
    settings = _expand(settings, env)
    add_builtin(settings.config.servers, settings.origins, settings.config.tools.shell,
                [layer.file for layer in settings.layers if layer.kind != "project"],
                builtin and wanted(env), env)
    return settings


def _expand(settings: Settings, env: Mapping[str, str]) -> Settings:
    expander = Expander(env)
    expanded = expand_models(settings.config, settings.sources, expander)
    config = expanded.config
    settings.broken, settings.from_variables = expanded.broken, frozenset(
        expanded.from_variables)
    servers: dict[str, ServerConfig] = {}
    settings.unready = {}
    for name, server in config.servers.items():
        try:
            servers[name] = server if server.disabled else expand_server(
                name, server, settings.origins[name], expander)
        except UnsetServerVariable as unset:  # that server only: the rest still works
            servers[name] = server
            settings.unready[name] = f"not started: {unset.file}: {unset.problems[0]}"
    settings.config = config.model_copy(update={"servers": servers})
    settings.secrets = frozenset(expander.secrets | environment_keys(env))
    return settings


KEY_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_ACCESS_TOKEN", "_SECRET_KEY", "_AUTH_TOKEN")
"""Environment variables that hold a key litellm (or a provider SDK) may send by itself:
masked wherever they might be echoed, though the config never names them."""


def environment_keys(env: Mapping[str, str]) -> set[str]:
    """The values of the environment's key variables (``OPENAI_API_KEY``, ...)."""
    return {value for name, value in env.items()
            if name.upper().endswith(KEY_SUFFIXES) and len(value) >= MIN_SECRET}
