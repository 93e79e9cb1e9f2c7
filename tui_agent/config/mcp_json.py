"""Import MCP server lists written for other clients, as they are.

Two shapes are read:

* ``{"mcpServers": {NAME: {...}}}``: Claude Desktop, Cursor, Roo-Code, Cline
  (``command``, ``args``, ``env``, ``url``, ``alwaysAllow``, ``disabled``, ``timeout``;
  Windsurf's ``serverUrl`` and gemini-cli's ``httpUrl`` are its ``url``);
* ``{"servers": [{"name": NAME, ...}]}`` (``name``, ``command``, ``args``, ``env``,
  ``url``, ``transport``, ``enabled``, ``description``), and VS Code's
  ``{"servers": {NAME: {...}}}``.

Keys these clients use that tui-agent does not are reported as warnings, not
errors, so a file shared with another client keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_agent.config.errors import ConfigError
from tui_agent.config.jsonc import read_json
from tui_agent.config.locate import json_line
from tui_agent.config.models import ServerConfig
from tui_agent.config.oauth import OAUTH_ALIASES, OAuthSettings
from tui_agent.config.reading import Origin, describe, read_config_text

# JSON key -> our field. Several clients' spellings map to one field.
_KEYS: dict[str, str] = {
    "command": "command", "args": "args", "env": "env", "url": "url", "cwd": "cwd",
    "serverUrl": "url", "httpUrl": "url",
    "headers": "headers", "description": "description", "timeout": "timeout",
    "transport": "transport", "type": "transport",
    "alwaysAllow": "auto", "autoApprove": "auto", "tools_to_auto_execute": "auto",
    "tools_to_execute": "allow",
    "disabled": "disabled", "enabled": "disabled",
}

Imported = dict[str, tuple[ServerConfig, Origin, list[str]]]


def load_mcp_json(path: Path) -> tuple[dict[str, Any], Imported]:
    """The file as parsed, and every server in it, validated, with where each came
    from."""
    text = read_config_text(path)
    data = read_json(text, path)

    def locate(loc: Any) -> int | None:
        return json_line(text, loc)

    entries = _entries(data, path, locate)
    out: Imported = {}
    for name, key_path, raw in entries:
        origin = Origin(path, key_path, locate)
        out[name] = (*_convert(name, raw, origin), )
    return data, out


def _entries(data: Any, path: Path, locate: Any) -> list[tuple[str, tuple[str | int, ...], Any]]:
    if isinstance(data, dict) and isinstance(data.get("mcpServers"), dict):
        return [(n, ("mcpServers", n), e) for n, e in data["mcpServers"].items()]
    if isinstance(data, dict) and isinstance(data.get("servers"), dict):
        return [(n, ("servers", n), e) for n, e in data["servers"].items()]
    if isinstance(data, dict) and isinstance(data.get("servers"), list):
        found: list[tuple[str, tuple[str | int, ...], Any]] = []
        seen: set[str] = set()
        for i, entry in enumerate(data["servers"]):
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not name.strip():
                raise ConfigError(f"servers[{i}]: each entry needs a non-empty string 'name'",
                                  path)
            if name in seen:
                line = locate(("servers", i, "name"))
                raise ConfigError(f"{f'line {line}: ' if line else ''}servers[{i}]: "
                                  f"the name '{name}' is used twice", path)
            seen.add(name)
            found.append((name, ("servers", i), {k: v for k, v in entry.items() if k != "name"}))
        return found
    raise ConfigError("expected a top-level \"mcpServers\" object or a \"servers\" list", path)


def convert(name: str, raw: Any, origin: Origin) -> tuple[ServerConfig, Origin, list[str]]:
    """One entry of another client's server list as our :class:`ServerConfig`, with
    warnings for the keys it leaves; raises :class:`ConfigError` naming the entry."""
    return _convert(name, raw, origin)


def _convert(name: str, raw: Any, origin: Origin) -> tuple[ServerConfig, Origin, list[str]]:
    where = ".".join(str(p) for p in origin.path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin.where()}{where}: expected an object, got {type(raw).__name__}",
                          origin.file)
    fields: dict[str, Any] = {}
    used: dict[str, str] = {}
    warnings = []
    for key, value in raw.items():
        target = _KEYS.get(key) or (key if key in ServerConfig.model_fields else None)
        if target is None:
            warnings.append(f"{origin.file}: {origin.where(key)}{where}: key '{key}' is not "
                            "used by tui-agent; ignored")
            continue
        if key == "enabled":
            value = (not value) if isinstance(value, bool) else value
        if target == "oauth" and isinstance(value, dict):
            value, dropped = _oauth_keys(value)
            warnings += [f"{origin.file}: {origin.where(key, k)}{where}.{key}: key '{k}' is "
                         "not used by tui-agent (it discovers the endpoints); ignored"
                         for k in dropped]
        fields[target], used[target] = value, key
    try:
        return ServerConfig.model_validate(fields), origin, warnings
    except ValidationError as exc:
        # Report the key as the user wrote it (alwaysAllow), not our field name (auto).
        def locate(loc: Any) -> int | None:
            return origin.locate(_as_written(loc, origin.path, used))

        lines = describe(exc, locate, origin.path)
        for ours, theirs in used.items():
            lines = [ln.replace(f"{where}.{ours}", f"{where}.{theirs}") for ln in lines]
        raise ConfigError(lines, origin.file) from None


def _as_written(loc: Any, base: tuple[str | int, ...], used: dict[str, str]) -> tuple[Any, ...]:
    loc = tuple(loc)
    out: tuple[Any, ...] = loc
    if len(loc) > len(base) and isinstance(loc[len(base)], str):
        key = loc[len(base)]
        out = (*loc[:len(base)], used.get(key, key), *loc[len(base) + 1:])
    return out


def _oauth_keys(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Another client's ``oauth`` object: the keys we take (in their spelling or ours),
    and the ones we leave (gemini-cli's ``authorizationUrl``, ``tokenUrl``, ...)."""
    known = set(OAuthSettings.model_fields) | set(OAUTH_ALIASES)
    return ({k: v for k, v in raw.items() if k in known},
            [k for k in raw if k not in known])
