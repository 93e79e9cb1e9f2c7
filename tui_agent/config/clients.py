"""The MCP servers other clients on this machine have configured, for ``tui-agent mcp
import``: where each client keeps them on each OS, and how each writes them.

- Claude Desktop: ``claude_desktop_config.json`` in ``~/Library/Application
  Support/Claude`` (macOS), ``%APPDATA%/Claude`` (Windows), ``$XDG_CONFIG_HOME/Claude``
  (Linux); ``mcpServers``.
- Claude Code: ``~/.claude.json`` (its top-level ``mcpServers``, and
  ``projects[<cwd>].mcpServers``), and the project's ``.mcp.json``.
- Cursor: ``~/.cursor/mcp.json`` and the project's ``.cursor/mcp.json``; ``mcpServers``.
- VS Code: ``Code/User/mcp.json`` (``servers``) and ``Code/User/settings.json``
  (``mcp.servers``) in the OS's config dir, and the project's ``.vscode/mcp.json``.
- Windsurf: ``~/.codeium/windsurf/mcp_config.json``; ``mcpServers`` (``serverUrl``).
- Zed: ``settings.json`` in ``$XDG_CONFIG_HOME/zed`` (Linux), ``~/.config/zed``
  (macOS), ``%APPDATA%/Zed`` (Windows); ``context_servers``.

Every path comes from the environment (``HOME``, ``APPDATA``, ``XDG_CONFIG_HOME``), so
tests point them at a temporary directory. The editors' ``settings.json`` files are read
as JSON with comments. VS Code's variables are translated first
(:mod:`tui_agent.config.editor_variables`); then each entry becomes a
:class:`ServerConfig` through :mod:`tui_agent.config.mcp_json`, the reader
``--mcp-config`` uses; one that cannot (VS Code's ``${input:...}`` prompts, an invalid
entry) is kept with the reason.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.config import jsonc
from tui_agent.config.editor_variables import Places, translate
from tui_agent.config.errors import ConfigError
from tui_agent.config.locate import json_line
from tui_agent.config.mcp_json import convert
from tui_agent.config.models import ServerConfig
from tui_agent.config.reading import Origin, read_config_text


@dataclass(frozen=True)
class Source:
    """One client's file and where in it the servers are."""

    client: str
    file: Path
    keys: tuple[str, ...]
    """The key path to the object of servers (``("mcpServers",)``)."""
    comments: bool = False
    """The file is JSON with comments (an editor's settings)."""
    project: bool = False
    """The file is the working directory's project's: its servers are the project's
    words, not the person's, so ``mcp import --all`` leaves them out."""


@dataclass
class Found:
    """A server another client configured: its name, where it is, and what it becomes
    here (or why it cannot be imported)."""

    name: str
    source: Source
    line: int | None
    server: ServerConfig | None
    problem: str | None = None
    warnings: list[str] = field(default_factory=list)
    transport_given: bool = False
    """The entry names its transport (``type``); otherwise it is left to be inferred."""
    secrets: list[str] = field(default_factory=list)
    """A warning for each secret written as it is in ``env`` or ``headers``."""

    def table(self) -> dict[str, Any]:
        """The ``[servers.NAME]`` keys the entry gives (its server must be valid)."""
        assert self.server is not None
        return server_table(self.server, transport=self.transport_given)

    def where(self) -> str:
        place = f"{self.source.file}:{self.line}" if self.line else str(self.source.file)
        return f"{self.source.client} ({place})" if self.source.client else place


def _config_home(env: Mapping[str, str], platform: str) -> Path:
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    xdg = env.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else home / ".config"


def sources(env: Mapping[str, str] = os.environ, cwd: Path | None = None,
            platform: str = sys.platform) -> list[Source]:
    """Every file a client on ``platform`` keeps servers in, user files first, then the
    project's (in ``cwd``); whether each exists is for the reader to find out."""
    home = Path(env.get("HOME") or Path.home())
    config = _config_home(env, platform)
    here = (cwd or Path.cwd()).resolve()
    zed = (config / "Zed" if platform == "win32" else home / ".config" / "zed"
           if platform == "darwin" else config / "zed")
    code = config / "Code" / "User"
    return [
        Source("Claude Desktop", config / "Claude" / "claude_desktop_config.json",
               ("mcpServers",)),
        Source("Claude Code", home / ".claude.json", ("mcpServers",)),
        Source("Claude Code", home / ".claude.json", ("projects", str(here), "mcpServers")),
        Source("Cursor", home / ".cursor" / "mcp.json", ("mcpServers",)),
        Source("VS Code", code / "mcp.json", ("servers",), comments=True),
        Source("VS Code", code / "settings.json", ("mcp", "servers"), comments=True),
        Source("Windsurf", home / ".codeium" / "windsurf" / "mcp_config.json",
               ("mcpServers",)),
        Source("Zed", zed / "settings.json", ("context_servers",), comments=True),
        Source("Claude Code (project)", here / ".mcp.json", ("mcpServers",),
               project=True),
        Source("Cursor (project)", here / ".cursor" / "mcp.json", ("mcpServers",),
               project=True),
        Source("VS Code (project)", here / ".vscode" / "mcp.json", ("servers",),
               comments=True, project=True),
    ]


def discover(env: Mapping[str, str] = os.environ, cwd: Path | None = None,
             platform: str = sys.platform) -> tuple[list[Found], list[str]]:
    """The servers every client's files hold, and a sentence for each file that exists
    but cannot be read."""
    found: list[Found] = []
    problems: list[str] = []
    for source in sources(env, cwd, platform):
        if not source.file.is_file():
            continue
        try:
            found += read_source(source)
        except ConfigError as exc:
            problems.append(f"{source.client}: {exc}")
    return found, problems


def from_file(file: Path) -> list[Found]:
    """``mcp import --from FILE``: any file in the ``mcpServers`` or ``servers`` shape
    (comments allowed). Raises :class:`ConfigError` naming the file."""
    for keys in (("mcpServers",), ("servers",), ("mcp", "servers"), ("context_servers",)):
        source = Source("", file, keys, comments=True)
        data, _ = _parse(source)
        if isinstance(_at(data, keys), dict):
            return read_source(source)
    raise ConfigError('expected a top-level "mcpServers" (or "servers") object', file)


def read_source(source: Source) -> list[Found]:
    """The servers in one client file (an absent key: none)."""
    data, text = _parse(source)
    block = _at(data, source.keys)
    if block is None:
        return []
    if not isinstance(block, dict):
        raise ConfigError(f"{'.'.join(source.keys)} is not an object", source.file)
    out = []
    for name, raw in block.items():
        path = (*source.keys, name)
        line = json_line(text, path)
        out.append(_one(str(name), raw, source, Origin(source.file, path,
                                                       lambda loc: json_line(text, loc)),
                        line))
    return out


def _one(name: str, raw: Any, source: Source, origin: Origin, line: int | None) -> Found:
    translated = translate(name, raw, _places(source))
    if translated.problem is not None:
        return Found(name, source, line, None, translated.problem)
    raw = translated.entry
    if isinstance(raw, dict) and source.keys == ("context_servers",):
        raw = _zed(raw)
    try:
        server, _, warnings = convert(name, raw, origin)
    except ConfigError as exc:
        return Found(name, source, line, None, "; ".join(exc.problems))
    given = isinstance(raw, dict) and ("type" in raw or "transport" in raw)
    return Found(name, source, line, server, warnings=[*translated.notes, *warnings],
                 transport_given=given, secrets=literal_secrets(name, server))


def _places(source: Source) -> Places:
    """What VS Code's ``${workspaceFolder}`` is for ``source``: the folder holding a
    project's ``.vscode`` (``.cursor``) or ``.mcp.json``; for a user file, the folder the
    import runs in (a guess, said in a note)."""
    parent = source.file.parent
    if parent.name in (".vscode", ".cursor"):
        return Places(parent.parent.absolute(), Path.home(), folder_guessed=False)
    if source.project:
        return Places(parent.absolute(), Path.home(), folder_guessed=False)
    return Places(Path.cwd(), Path.home(), folder_guessed=True)


def literal_secrets(name: str, server: ServerConfig) -> list[str]:
    """A warning for each ``env`` or ``headers`` value that looks like a secret and is
    written as it is (not a ``${VAR}`` reference): it lands in the config file as such.
    Each says the exact line that would keep it in an environment variable instead;
    the value itself is never repeated."""
    from tui_agent.config.server_keys import secret_name

    out = []
    for part, values in (("env", server.env), ("headers", server.headers)):
        for key, value in (values or {}).items():
            if "${" in value or not value.strip() or not secret_name(part, key):
                continue
            var = re.sub(r"[^A-Z0-9_]", "_", f"{name}_{key}".upper())
            scheme = re.match(r"(Bearer|Basic|Token|Bot)\s+", value, re.IGNORECASE)
            ref = (scheme.group(0) if scheme else "") + "${" + var + "}"
            out.append(f"{name}: {part}.{key} holds a literal secret, imported into your "
                       f"config file as it is; to keep it out, set {var} in your "
                       f"environment and write {part}.{key} = \"{ref}\" instead")
    return out


def _zed(raw: dict[str, Any]) -> dict[str, Any]:
    """Zed's entry in the shape the others use: ``source`` and ``settings`` are Zed's
    own; an older Zed nests ``{"path", "args", "env"}`` under ``command``."""
    out = {k: v for k, v in raw.items() if k not in ("source", "settings")}
    nested = out.get("command")
    if isinstance(nested, dict):
        out["command"] = nested.get("path")
        out.setdefault("args", nested.get("args", []))
        if nested.get("env"):
            out.setdefault("env", nested["env"])
    return out


def _parse(source: Source) -> tuple[Any, str]:
    text = read_config_text(source.file)
    return jsonc.read_json(text, source.file, comments=source.comments), text


def _at(data: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def server_table(server: ServerConfig, *, transport: bool = True) -> dict[str, Any]:
    """The keys of ``server`` that were given, as a ``[servers.NAME]`` table holds them
    (``transport`` only when asked: validation fills it in when it is inferred)."""
    given = set(server.model_fields_set) | ({"args"} if server.args else set())
    if not transport:
        given.discard("transport")
    return server.model_dump(mode="json", include=given, exclude_none=True)
