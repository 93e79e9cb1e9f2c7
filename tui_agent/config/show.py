"""The merged configuration for people: ``tui-agent config --show``, and the exact
commands a project's servers would run (what the user agrees to before they start).

Secrets never appear: API keys, and env, header and ``params`` values that came from the
environment or whose name says they are secret, are masked.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

from tui_agent.config.held import HeldProject
from tui_agent.config.interpolate import mask
from tui_agent.config.loader import Settings
from tui_agent.config.model_choice import dropped
from tui_agent.config.model_keys import SECRET_NAME, table_section, toml_key
from tui_agent.config.models import SECTION_MODELS, ServerConfig
from tui_agent.config.oauth import OAUTH_SECRETS, OAuthSettings
from tui_agent.config.printable import clean, quoted, safe_name
from tui_agent.config.project import PROJECT_FOLDERS
from tui_agent.config.urls import HIDDEN, mask_url


def _hide_url(url: str, secrets: frozenset[str]) -> str:
    """A URL as every output prints it (:func:`~tui_agent.config.urls.mask_url`)."""
    return mask(mask_url(url), secrets)


def _hide_map(values: dict[str, str], secrets: frozenset[str]) -> dict[str, str]:
    return {k: HIDDEN if SECRET_NAME.search(k) else mask(v, secrets) for k, v in values.items()}


def hide_params(value: Any, secrets: frozenset[str],
                from_variables: frozenset[str] = frozenset(), secret: bool = False) -> Any:
    """``params`` as ``config --show`` may print them: every string under a secret-looking
    name (``Authorization``, ``x-api-key``, ``*key*``, ``*token*``, ``*secret*``) or that
    came from a ``${VAR}`` hidden, known secrets masked inside the rest."""
    if isinstance(value, dict):
        return {k: hide_params(v, secrets, from_variables,
                               secret or bool(SECRET_NAME.search(str(k))))
                for k, v in value.items()}
    if isinstance(value, list):
        return [hide_params(v, secrets, from_variables, secret) for v in value]
    if isinstance(value, str):
        return HIDDEN if secret or value in from_variables else mask(value, secrets)
    return value


def command_line(server: ServerConfig) -> str:
    """What starting ``server`` runs or connects to, in one line."""
    if server.transport == "stdio":
        line = shlex.join([str(server.command), *server.args])
        return line + (f"   (in {server.cwd})" if server.cwd else "")
    if server.transport in ("sse", "http"):
        return f"connect to {mask_url(server.url or '')} ({server.transport})"
    if server.transport == "docker-gateway":
        return shlex.join(["docker", "mcp", "gateway", "run", *server.args])
    what = f"image {server.image}" if server.image else f"container {server.container}"
    run = server.exec_command
    line = f"docker: {what}" + (f", run {shlex.join(run)}" if run else "")
    if server.volumes:
        line += f", mounts {', '.join(server.volumes)}"
    if server.image:
        line += f", network {server.network}"
    return line


def held_lines(held: HeldProject) -> list[str]:
    """What a project asks for, one item each, as the user is asked to agree to it."""
    lines = []
    for name, (server, origin) in held.servers.items():
        where = held.project.relative(origin.file)
        line = origin.locate(origin.path)
        lines.append(f"server '{safe_name(name)}' ({where}{f':{line}' if line else ''}): "
                     f"{clean(command_line(server))}")
        if server.env:
            pairs = ", ".join(f"{k}={v}" for k, v in server.env.items())
            lines.append(f"    with env {clean(pairs)}")
        if server.auto:
            lines.append(f"    runs without asking: {clean(', '.join(server.auto))}")
        if server.disabled:
            lines.append("    (disabled in the file: not started until enabled)")
    for skill in held.skills:
        lines.append(f"skill '{skill.split('/')[-2]}' ({skill}): instructions the model "
                     "may load, with the files beside it")
    for dotted, (value, origin) in held.keys.items():
        key = dotted.rsplit(".", 1)[-1]
        line = origin.locate(origin.path)
        lines.append(f"{dotted} = {clean(_held_value(key, value))} "
                     f"({held.project.relative(origin.file)}"
                     f"{f':{line}' if line else ''}): {HELD_WHY.get(key, NEEDS_TRUST)}")
    root = held.content_root or held.project.root
    for kind, path in held.content:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        lines.append(f"{kind} {shown}: {CONTENT_WHY.get(kind, 'read as instructions')}")
    for folder, files in held.folders.items():
        kind = PROJECT_FOLDERS.get(folder, "files")
        shown_files = ", ".join(files[:CONTENT_SHOWN]) + (
            f" and {len(files) - CONTENT_SHOWN} more" if len(files) > CONTENT_SHOWN else "")
        lines.append(f"{kind} in {folder}: {shown_files}: "
                     f"{CONTENT_WHY.get(kind, NEEDS_TRUST)}")
    return lines


CONTENT_SHOWN = 12
"""Files of one project folder the question names (the rest are counted)."""
CONTENT_WHY = {"memory": "instructions sent to the model with every request",
               "commands": "prompts sent as your own message when you type their /name",
               "agents": "sub-agents the model may start: their system prompts, models "
                         "(where their requests go) and tools; an edit asks again"}
"""Why a kind of project content needs the user's trust."""


HELD_WHY = {
    "hooks": "commands run on this machine at tool calls, prompts and session events",
    "name": "the model your requests go to (a provider prefix can carry a URL)",
    "api_base": "where your model requests go",
    "api_key": "the key sent with your model requests",
    "api_key_env": "the key sent with your model requests",
    "params": "arguments sent with your model requests (they can send them elsewhere)",
    "sampling_model": "the model servers' sampling requests go to",
    "choices": "models the /model picker offers",
    "system_prompt": "instructions sent with every request",
    "append_system_prompt": "instructions sent with every request",
    "files": "which files of yours are read as instructions sent with every request",
    "vision": "whether tools' images are sent to the model",
    "audio": "whether tools' sounds are sent to the model",
    "roots": "directories every MCP server is offered",
    "enabled": "runs the model's scripts over your tools",
}
"""Why a held key needs the user's agreement, by key name (any section)."""
NEEDS_TRUST = "not on the list a project may set freely"


TRUST_HOW = ("Trust it with --trust-project (remembered for this content), or run "
             "tui-agent there and agree.")
"""How a headless run's warning says to trust the project."""


def held_warning(held: HeldProject, how: str = TRUST_HOW) -> str:
    """The headless warning for a project that has not been trusted (``how``: the way to
    trust it, for the front end that warns)."""
    return (f"the project in {held.project.root} is not trusted yet, so its servers are "
            "not started and its settings that need your trust are not used:\n"
            + "\n".join(f"    {line}" for line in held_lines(held))
            + f"\n  {how}")


def _held_value(key: str, value: Any, limit: int = 120) -> str:
    """A held value as the question shows it: a key hidden, secret-looking ``params``
    hidden, long text (a system prompt) cut so the list stays readable (the whole of it
    is in the file named beside it)."""
    if key == "api_key":
        return HIDDEN
    if key == "params":
        return _value(hide_params(value, frozenset()))
    if key in ("api_base", "url") and isinstance(value, str):
        value = mask_url(value)
    if key == "hooks" and isinstance(value, dict):  # every command, whole: what would run
        return "; ".join(f"{event}: {hook.get('command')}" for event, groups in value.items()
                         if isinstance(groups, list) for group in groups
                         if isinstance(group, dict) for hook in group.get("hooks") or ()
                         if isinstance(hook, dict)) or _value(value)
    text = _value(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _value(value: Any) -> str:
    """``value`` written as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{toml_key(str(k))} = {_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return quoted(str(value))


def _column(pairs: Iterable[tuple[str, str]], width: int = 44) -> list[str]:
    out = []
    for text, comment in pairs:
        out.append(f"{text:<{width}} # {comment}" if comment else text)
    return out


def render(settings: Settings) -> str:
    """The merged configuration as TOML, each value with where it came from."""
    secrets = settings.secrets
    out = ["# tui-agent configuration: lowest precedence first, a later layer wins",
           "#   defaults (built in)"]
    for layer in settings.layers:
        held = layer.kind == "project" and settings.held is not None
        out.append(f"#   {layer.kind:<13} {layer.file}"
                   + ("   (not trusted yet: servers and some settings held back)"
                      if held else ""))
    flags = sorted({s for s in settings.sources.values() if isinstance(s, str)})
    if flags:
        out.append(f"#   {'flags':<13} {' '.join(flags)}")
    if any(layer.kind == "--config-only" for layer in settings.layers):
        out.append("# no project config: --config-only reads that file alone")
    elif settings.project is None:
        out.append("# no project config: none of .tui-agent/config.toml, mcp.json, .mcp.json "
                   "from here up (or --no-project)")
    config = settings.config
    for section in SECTION_MODELS:
        model = getattr(config, section)
        out += ["", f"[{section}]"]
        if section == "model":
            out += _model_note(settings)
        keys = type(model).model_fields
        out += _column((_key_line(key, getattr(model, key), settings, section == "model"),
                        settings.source(section, key)) for key in keys)
    out += _model_tables(settings)
    for name, server in config.servers.items():
        origin = settings.origins.get(name)
        out += ["", *_column([(f"[servers.{toml_key(name)}]",
                               origin.place() if origin else "")])]
        if name in settings.unready:  # as written: a ${VAR} left unresolved
            out.append(f"# unresolved, the server is {clean(settings.unready[name])}")
        out += _server_lines(server, secrets)
    if settings.held is not None:
        out += ["", "# held back until you trust this project (tui-agent asks; headless: "
                    "--trust-project):"]
        out += [f"#   {line}" for line in held_lines(settings.held)]
    return "\n".join(out) + "\n"


def _key_line(key: str, value: Any, settings: Settings, model: bool) -> str:
    if value is None:
        return f"# {key} is not set"
    if model and key == "api_key":
        return f"{key} = {_value(HIDDEN)}"
    if model and key == "api_base":
        return f"{key} = {_value(_hide_url(value, settings.secrets))}"
    if model and key == "params":
        return f"{key} = {_value(hide_params(value, settings.secrets, settings.from_variables))}"
    return f"{key} = {_value(value)}"


def _model_note(settings: Settings) -> list[str]:
    """Under ``[model]``: which model it is for, when flags chose another than the files'
    (and what of the files' ``[model]`` did not carry to it)."""
    base, used = settings.configured, settings.config.model
    if base is None or base.name in (None, used.name):  # no name: it is for --model's
        return []
    left = dropped(base, used.name, settings.flags)
    return [f"# the settings of {used.name} (the files' [model] is for {base.name}"
            + (f"; its {', '.join(left)} did not carry over" if left else "") + ")"]


def _model_tables(settings: Settings) -> list[str]:
    """Each ``[models."NAME"]`` table: the keys it sets, with where each came from."""
    out: list[str] = []
    for name, table in settings.config.models.items():
        section = table_section(name)
        out += ["", f"[{section}]"]
        if name in settings.broken:
            out.append(f"# not usable until fixed (it is a problem only when {name} is "
                       f"chosen): {settings.broken[name]}")
        out += _column((_key_line(key, getattr(table, key), settings, True),
                        settings.source(section, key)) for key in type(table).model_fields
                       if key in table.model_fields_set)
    return out


def _server_lines(server: ServerConfig, secrets: frozenset[str]) -> list[str]:
    defaults = ServerConfig.model_fields
    lines = []
    for key, info in defaults.items():
        value = getattr(server, key)
        if key != "transport" and value == info.get_default(call_default_factory=True):
            continue
        if key in ("env", "headers"):
            value = _hide_map(value, secrets)
        elif key == "url" and value:
            value = _hide_url(value, secrets)
        elif key == "args":
            value = [mask(a, secrets) for a in value]
        elif key == "oauth" and value is not None:
            value = _oauth_table(value, secrets)
        lines.append(f"{key} = {_value(value)}")
    return lines


def _oauth_table(oauth: OAuthSettings, secrets: frozenset[str]) -> dict[str, Any]:
    """The ``oauth`` values that are not defaults, secrets masked (a key file's content is
    never shown, only its path)."""
    shown = oauth.model_dump(exclude_defaults=True, exclude={"private_key_pem"}
                             if oauth.private_key_file else set())
    return {k: HIDDEN if k in OAUTH_SECRETS else mask(v, secrets) if isinstance(v, str) else v
            for k, v in shown.items()}
