"""The validated shape of the configuration.

Every model forbids unknown keys, so a typo is reported (with the near key)
instead of silently ignored. Values are validated once, at start-up. ``[model]`` and
``[models."NAME"]`` are in :mod:`tui_agent.config.model_settings`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from tui_agent.config.memory_settings import MemorySettings as MemorySettings
from tui_agent.config.model_settings import NOT_PER_MODEL as NOT_PER_MODEL
from tui_agent.config.model_settings import OWNED_PARAMS as OWNED_PARAMS
from tui_agent.config.model_settings import ModelEntry as ModelEntry
from tui_agent.config.model_settings import ModelSettings as ModelSettings
from tui_agent.config.oauth import OAuthSettings
from tui_agent.config.reasoning import REASONING_EFFORTS as REASONING_EFFORTS
from tui_agent.config.shell_settings import ShellSettings as ShellSettings
from tui_agent.config.shell_settings import ToolsSettings
from tui_agent.config.strict import Strict as _Strict
from tui_agent.config.volumes import check_volume as check_volume

Transport = Literal["stdio", "sse", "http", "docker", "docker-gateway"]
TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "docker": "docker",
    "docker-exec": "docker",
    "docker_exec": "docker",
    "docker-gateway": "docker-gateway",
    "docker_gateway": "docker-gateway",
    "gateway": "docker-gateway",
}
DOCKER_KEYS = ("image", "container", "volumes", "network", "user", "workdir", "memory", "cpus",
               "pids_limit", "read_only", "pull", "per_call_exec", "keep_alive")
"""Keys that only a ``docker`` server takes (``docker_host`` is shared with the gateway)."""
_MEMORY = re.compile(r"^\d+(\.\d+)?[bkmg]?$", re.IGNORECASE)


class AgentSettings(_Strict):
    """``[agent]``: the chat loop."""

    max_depth: int = Field(default=10, ge=1, le=1000)
    """How many LLM round trips one turn may take while the model keeps calling tools."""
    tool_timeout: float = Field(default=60.0, gt=0)
    """Seconds a tool call may take; a server's own ``timeout`` wins."""
    max_tool_output: int = Field(default=25_000, ge=100)
    """Tokens (about four characters each) of one tool result the model reads; the rest is
    cut with a note, and the whole result is kept beside the session file."""
    compact_at: float = Field(default=0.8, ge=0.2, le=1.0)
    """The fraction of the model's context window past which the older part of the
    conversation is summarized before the next request."""
    roots: list[str] = Field(default_factory=list)
    """Directories every server may work in (MCP roots), beside the project directory
    (where tui-agent runs); ``~`` and ``${VAR}`` are expanded."""


class AgentsSettings(_Strict):
    """``[agents]``: sub-agents, the built-in ``agent`` tool's child conversations."""

    max_parallel: int = Field(default=4, ge=1, le=64)
    """How many sub-agents of one conversation run at once; more wait their turn."""
    max_depth: int = Field(default=1, ge=0, le=5)
    """How deep sub-agents nest: 1, a sub-agent has no ``agent`` tool; 0, no sub-agents."""
    max_turns: int = Field(default=25, ge=1, le=1000)
    """Model round trips one sub-agent may take (an agent file's ``max_turns`` wins)."""


class CodeModeSettings(_Strict):
    """``[code_mode]``: tools reached through one Starlark script."""

    enabled: bool = False
    """Reach every server's tools through scripts (a server's own ``code_mode`` wins)."""
    binding_level: Literal["server", "tool"] = "server"
    """One stub file per server (``servers/<server>.pyi``) or per tool
    (``servers/<server>/<tool>.pyi``)."""
    timeout: float = Field(default=30.0, gt=0)
    """Wall-clock seconds a script may run; time spent waiting for your approval does
    not count."""
    max_output: int = Field(default=65536, ge=256)
    """Bytes of the result (as JSON) a script may return, and bytes of its logs."""
    max_calls: int = Field(default=100, ge=1, le=100_000)
    """Tool calls one script may make."""
    max_depth: int = Field(default=200, ge=10, le=1000)
    """Nested Starlark calls (recursion depth)."""
    max_memory_mb: int = Field(default=512, ge=32)
    """Memory the script's process may take beyond its start (RLIMIT_AS)."""
    max_cpu: float | None = Field(default=None, gt=0)
    """CPU seconds the script's process may use (RLIMIT_CPU); default: timeout + 1."""
    max_transfer_mb: int = Field(default=8, ge=1, le=1024)
    """Megabytes (as JSON) one tool call's arguments or result may carry into or out of a
    script."""
    max_scripts: int = Field(default=4, ge=1, le=64)
    """Scripts that may run at once in one tui-agent; more wait for one to finish."""
    max_total_memory_mb: int = Field(default=2048, ge=32)
    """Memory all running scripts may take together (each holds its max_memory_mb); one
    that does not fit waits for room."""

    @model_validator(mode="after")
    def _one_fits(self) -> CodeModeSettings:
        if self.max_memory_mb > self.max_total_memory_mb:
            raise ValueError(f"max_memory_mb ({self.max_memory_mb}) is more than "
                             f"max_total_memory_mb ({self.max_total_memory_mb}): no script "
                             "could ever start")
        return self


class ServerConfig(_Strict):
    """``[servers.NAME]``: one MCP server."""

    command: str | list[str] | None = None
    """The program (stdio), or what to run inside the container (docker: a list, or one
    program; default the image's own entrypoint and command)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    transport: Transport | None = None
    """``stdio`` (has ``command``), ``sse`` or ``http`` (streamable HTTP; has ``url``),
    ``docker`` (has ``image`` or ``container``) or ``docker-gateway`` (Docker's MCP gateway;
    ``args`` are passed to ``docker mcp gateway run``). Inferred when unset."""
    headers: dict[str, str] = Field(default_factory=dict)
    oauth: OAuthSettings | None = None
    """How to log in (``sse`` and ``http`` only); without it a server that asks for a login
    gets the browser login with a client that registers itself."""
    allow: list[str] = Field(default_factory=lambda: ["*"])
    """Tools the model may call at all (glob patterns); the others are never offered."""
    auto: list[str] = Field(default_factory=list)
    """Tools that run without asking (glob patterns), until their definition changes."""
    ask: list[str] = Field(default_factory=list)
    """Tools that always ask, even when ``auto`` matches them (glob patterns)."""
    deny: list[str] = Field(default_factory=list)
    """Tools never offered, even when ``allow`` matches them (glob patterns)."""
    timeout: float | None = Field(default=None, gt=0)
    """(Also ``request_timeout``.) Seconds one tool call may take (default ``[agent]
    tool_timeout``); progress notifications from the server restart the clock, up to
    ``max_call_time``."""
    max_call_time: float = Field(default=600.0, gt=0)
    """Absolute cap on one tool call, however much progress it reports."""
    startup_timeout: float = Field(default=10.0, gt=0)
    """Seconds to start and handshake, and to list the tools."""
    heartbeat_interval: float = Field(default=30.0, gt=0)
    """Seconds between liveness checks of an idle connection."""
    stale_timeout: float = Field(default=90.0, gt=0)
    """No answer from the server for this long (heartbeats included): restart it."""
    max_attempts: int = Field(default=3, ge=1, le=100)
    """Consecutive failures (starts or calls) before the circuit opens and the server
    is only re-probed every ``circuit_cooldown`` seconds."""
    backoff: float = Field(default=1.0, ge=0, le=60)
    """First reconnect delay; doubles each try (with jitter), capped at 30 s."""
    circuit_cooldown: float = Field(default=300.0, gt=0)
    """Seconds an open circuit fails calls fast before one probe is let through."""
    tools_ttl: float = Field(default=300.0, gt=0)
    """Seconds the tool list is cached (a ``list_changed`` notification refreshes it sooner)."""
    protocol: Literal["auto", "legacy", "2026-07-28"] = "auto"
    """MCP protocol era: ``auto`` tries 2026-07-28 and falls back to the 2025
    ``initialize`` handshake; ``legacy`` skips the probe (faster start for older servers)."""
    roots: list[str] | None = None
    """The directories this server may work in, instead of the project directory and
    ``[agent] roots`` (to narrow them); ``[]`` offers none."""
    log_level: Literal["debug", "info", "notice", "warning", "error", "critical", "alert",
                       "emergency"] | None = None
    """The least severe log message the server is asked to send (``logging/setLevel``);
    unset: the server's own default."""
    disabled: bool = False
    code_mode: bool | None = None
    description: str | None = None
    lazy: bool | None = None
    """Start the server at the first turn that needs tools, not with the app (default: on
    for ``docker-gateway``, off for the rest)."""
    idle_timeout: float | None = Field(default=None, gt=0)
    """Stop the server after this many seconds without a call; its tools stay listed and
    the next call starts it again (default: 300 for ``docker-gateway``, never for the rest)."""

    # -- docker ------------------------------------------------------------------
    image: str | None = None
    """Create a container from this image for the server (removed when the app exits)."""
    container: str | None = None
    """Run the server inside this existing, running container (name or id)."""
    volumes: list[str] = Field(default_factory=list)
    """Mounts in ``docker -v`` syntax: ``/host/path:/in/container[:ro]`` or ``volume:/path``."""
    network: str = "none"
    """The created container's network (``none``: no network at all)."""
    user: str | None = None
    """``uid[:gid]`` or a name; default the image's user."""
    workdir: str | None = None
    memory: str = "512m"
    """Memory limit of the created container (``docker --memory`` syntax)."""
    cpus: float = Field(default=1.0, gt=0)
    pids_limit: int = Field(default=256, ge=1)
    read_only: bool = True
    """Read-only root filesystem (a small tmpfs is mounted on /tmp)."""
    pull: Literal["missing", "never", "always"] = "missing"
    """Pull the image when it is not on the engine (``missing``), never, or at every start."""
    per_call_exec: bool = False
    """Run each tool call in its own short-lived ``docker exec`` (discovery keeps one)."""
    keep_alive: list[str] = Field(default_factory=lambda: ["sleep", "infinity"])
    """What the created container runs while the server is exec'd into it."""
    docker_host: str | None = None
    """The engine to use (``unix:///path`` or ``tcp://host:port``); default ``DOCKER_HOST``
    or the local socket."""

    @model_validator(mode="before")
    @classmethod
    def _normalise_transport(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("transport"), str):
            key = data["transport"].strip().lower()
            data = {**data, "transport": TRANSPORT_ALIASES.get(key, data["transport"])}
        if isinstance(data, dict) and "request_timeout" in data:
            if "timeout" in data:
                raise ValueError("set 'timeout' or its other name 'request_timeout', not both")
            data = {("timeout" if k == "request_timeout" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _infer_transport(self) -> ServerConfig:
        if self.transport is None:
            if self.image or self.container:
                self.transport = "docker"
            elif self.command:
                self.transport = "stdio"
            elif self.url:
                self.transport = "sse" if re.search(r"/sse/?$", self.url) else "http"
            else:
                raise ValueError("needs 'command' (a stdio server), 'url' (sse or http), "
                                 "'image' or 'container' (docker), or transport = "
                                 "\"docker-gateway\"")
        if self.transport != "docker":
            stray = [k for k in DOCKER_KEYS if k in self.model_fields_set
                     and getattr(self, k) != type(self).model_fields[k].get_default(
                         call_default_factory=True)]
            if stray:
                raise ValueError(f"'{stray[0]}' is only for transport 'docker' (this server's "
                                 f"transport is '{self.transport}')")
        if self.transport == "stdio":
            if not self.command:
                raise ValueError("transport 'stdio' needs 'command'")
            if isinstance(self.command, list):  # ["prog", "arg", ...] is prog with those args
                self.command, self.args = self.command[0], [*self.command[1:], *self.args]
        if self.transport in ("sse", "http") and not self.url:
            raise ValueError(f"transport '{self.transport}' needs 'url'")
        if self.oauth is not None and self.transport not in ("sse", "http"):
            raise ValueError(f"'oauth' is only for transports 'sse' and 'http' (this server's "
                             f"transport is '{self.transport}')")
        if self.transport == "docker":
            self._check_docker()
        if self.transport == "docker-gateway" and (self.command or self.url):
            raise ValueError("transport 'docker-gateway' runs 'docker mcp gateway run' itself: "
                             "give it 'args', not 'command' or 'url'")
        return self

    def _check_docker(self) -> None:
        if bool(self.image) == bool(self.container):
            raise ValueError("transport 'docker' needs either 'image' (a container is created "
                             "for the server) or 'container' (an existing one), not both")
        if self.url:
            raise ValueError("transport 'docker' takes no 'url'")
        if self.container and not self.command:
            raise ValueError("transport 'docker' with 'container' needs 'command' (what to "
                             "run inside it)")
        if isinstance(self.command, list) and not self.command:
            raise ValueError("'command' is an empty list")
        if not _MEMORY.match(self.memory):
            raise ValueError(f"memory '{self.memory}' is not a size like 512m or 2g")
        if not self.keep_alive:
            raise ValueError("'keep_alive' is an empty list")
        for volume in self.volumes:
            check_volume(volume)

    @property
    def lazy_start(self) -> bool:
        return self.lazy if self.lazy is not None else self.transport == "docker-gateway"

    @property
    def idle_after(self) -> float | None:
        if self.idle_timeout is not None:
            return self.idle_timeout
        return 300.0 if self.transport == "docker-gateway" else None

    @property
    def exec_command(self) -> list[str] | None:
        """docker: what to exec in the container (None: from the image: its entrypoint,
        then ``args`` or else its command)."""
        if self.command is None:
            return None
        head = [self.command] if isinstance(self.command, str) else list(self.command)
        return [*head, *self.args]


class UiSettings(_Strict):
    """``[ui]``: the Textual app."""

    theme: str = "tui-agent-night"
    """A theme from ``themes/`` (tui-agent-night, tui-agent-day, tui-agent-ember), one of
    Textual's, or one of your own in ``$XDG_CONFIG_HOME/tui-agent/themes/``."""


class PermissionsSettings(_Strict):
    """``[permissions]``: rules beside the servers' own lists, and the mode a session
    starts in. A rule is a glob on the tool name as Claude Code names it
    (``mcp__SERVER__TOOL``) with optional ``(ARG=GLOB, ...)`` conditions on its arguments.
    Held in a project until the project is trusted."""

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    default_mode: Literal["default", "plan", "auto"] = "default"
    """The mode a session starts in: ``default``, ``plan`` (read-only) or ``auto``."""
    read_only: list[str] = Field(default_factory=list)
    """Tools (the same globs as the rules, without conditions) plan mode lets run as if
    their server annotated them ``readOnlyHint``."""


class Config(_Strict):
    """The whole configuration, after every file and flag is merged."""

    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    code_mode: CodeModeSettings = Field(default_factory=CodeModeSettings)
    ui: UiSettings = Field(default_factory=UiSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    models: dict[str, ModelEntry] = Field(default_factory=dict)
    """``[models."NAME"]`` tables, by model name."""


SECTION_MODELS: dict[str, type[BaseModel]] = {
    "model": ModelSettings,
    "agent": AgentSettings,
    "agents": AgentsSettings,
    "code_mode": CodeModeSettings,
    "ui": UiSettings,
    "memory": MemorySettings,
    "tools": ToolsSettings,
    "permissions": PermissionsSettings,
}
