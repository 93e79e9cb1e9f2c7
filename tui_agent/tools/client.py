"""Building the MCP client of one server: its transport (the SDK's stdio, SSE and
streamable HTTP, a ``docker exec`` into a container, Docker's gateway), the HTTP auth it
sends, and the client side of the protocol.

:class:`ClientSide` is handed to each server's lifecycle, which passes it here
unchanged: authorization (an ``httpx.Auth``, for SSE and streamable HTTP) and the
handlers of what a server may ask or tell (elicitation, roots, sampling, log messages,
progress) plug in by filling it (the skills extension, SEP-2640, and the tasks extension,
SEP-2663, are declared to every server: :mod:`~tui_agent.tools.skills`,
:mod:`~tui_agent.tools.tasks`), without touching the lifecycle code. A handler left
None is not offered: the SDK declares only the capabilities whose handler it is given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO

from tui_agent.config.models import ServerConfig
from tui_agent.tools.backoff import retry_once
from tui_agent.tools.errors import CONNECTION_CLOSED, REQUEST_TIMEOUT
from tui_agent.tools.text import clean
from tui_agent.tools.transports.sdk import OnEvent

if TYPE_CHECKING:
    import httpx2
    from mcp import Client
    from mcp.client.session import (
        ElicitationFnT,
        ListRootsFnT,
        LoggingFnT,
        MessageHandlerFnT,
        SamplingFnT,
    )
    from mcp.types import LoggingLevel, SamplingCapability

    from tui_agent.tools.transports.docker_container import Container

Progress = Callable[[str, float, float | None, str | None], Awaitable[None]]
"""``(tool, progress, total, message)`` of a call in flight, as the server reports it."""
MAX_PAGES = 100
PERSON_POLL = 1.0
"""Seconds between looks at whether a person is still logging in."""


@dataclass(frozen=True)
class ClientSide:
    """What tui-agent offers one server beyond calling its tools, and how it proves who
    it is. Everything None: a client that answers nothing and authenticates with the
    config's static ``headers`` alone."""

    auth: httpx2.Auth | None = None
    """Sent with every HTTP request of an ``sse`` or ``http`` server (OAuth)."""
    elicitation: ElicitationFnT | None = None
    list_roots: ListRootsFnT | None = None
    sampling: SamplingFnT | None = None
    sampling_capabilities: SamplingCapability | None = None
    """What is declared with ``sampling`` (None: the SDK's plain sampling capability)."""
    logging: LoggingFnT | None = None
    log_level: LoggingLevel | None = None
    """Asked of the server at start (``logging/setLevel``)."""
    progress: Progress | None = None
    """Told of every progress notification of a call to this server (the call's own
    timer is reset either way)."""
    waiting_on_person: Callable[[], bool] | None = None
    """True while a person is logging in to the server: its start waits for them, past
    ``startup_timeout`` (the login has a time limit of its own)."""

    cancel_login: Callable[[], bool] | None = None
    """Give up the login under way (False: there was none)."""

    def person_busy(self) -> bool:
        return self.waiting_on_person is not None and self.waiting_on_person()


NOTHING = ClientSide()


def client_over(transport: Any, config: ServerConfig, side: ClientSide,
                on_message: MessageHandlerFnT) -> Client:
    """An (unopened) MCP client over ``transport`` with ``side``'s handlers."""
    from mcp import Client
    from mcp.client.extension import advertise
    from mcp.types import Implementation, SamplingCapability

    from tui_agent import __version__
    from tui_agent.tools.skills.entries import SKILLS_EXTENSION
    from tui_agent.tools.tasks.extension import TasksExtension
    from tui_agent.tools.transports.complete import CompleteByDefault

    # Every server is offered skills (SEP-2640): the hub lists and reads them itself; and
    # tasks (SEP-2663): a call the server answers with a task is followed to its result.
    return Client(CompleteByDefault(transport), mode=config.protocol, cache=None,
                  extensions=[advertise(SKILLS_EXTENSION), TasksExtension()],
                  message_handler=on_message,
                  client_info=Implementation(name="tui-agent", version=__version__),
                  elicitation_callback=side.elicitation, list_roots_callback=side.list_roots,
                  sampling_callback=side.sampling,
                  sampling_capabilities=side.sampling_capabilities or (
                      SamplingCapability() if side.sampling is not None else None),
                  logging_callback=side.logging, log_level=side.log_level)


async def open_client(name: str, config: ServerConfig, side: ClientSide,
                      stack: AsyncExitStack, *, errlog: TextIO | None, on_event: OnEvent,
                      on_message: MessageHandlerFnT, note: Callable[[str], None]
                      ) -> tuple[Client, Container | None]:
    """Start ``name``'s server (or its container) and connect to it; what must be closed
    later goes on ``stack``. The client, and the container of a ``docker`` server."""
    from tui_agent.tools.heap import give_back_big_blocks
    from tui_agent.tools.transports.sdk import open_transport

    give_back_big_blocks()
    container = None
    if config.transport == "docker":
        from tui_agent.tools.transports.docker_container import Container

        container = Container(name, config, note=note, timeout=config.startup_timeout)
        stack.push_async_callback(container.close)
        await container.open()
        transport: Any = container.exec_client(errlog, on_event)
    else:
        transport = await open_transport(config, stack, errlog, on_event, auth=side.auth)
    client = client_over(transport, config, side, on_message)
    await stack.enter_async_context(client)
    await _ask_log_level(client, side.log_level)
    return client, container


async def _ask_log_level(client: Client, level: LoggingLevel | None) -> None:
    """``logging/setLevel`` on a 2025 session of a server that logs (2026-07-28 asks for
    the level with each request: the SDK does that itself)."""
    import warnings

    if level is None or not client.protocol_version.startswith("2025") or \
            client.server_capabilities.logging is None:
        return
    with warnings.catch_warnings():  # deprecated in 2026-07-28 only
        warnings.simplefilter("ignore")
        await client.set_logging_level(level)


MAX_INSTRUCTIONS = 2_000
"""Characters of a server's ``instructions`` that reach the system prompt."""


def instructions_of(client: Client) -> str | None:
    """The server's ``instructions`` (untrusted: cleaned, and capped with a note)."""
    text = clean(client.instructions or "").strip()
    if len(text) > MAX_INSTRUCTIONS:
        text = text[:MAX_INSTRUCTIONS] + f" [… {len(text) - MAX_INSTRUCTIONS:,} more characters]"
    return text or None


def server_label(client: Client) -> str | None:
    """The server's name and version, as it introduced itself (untrusted: cleaned)."""
    info = client.server_info
    return f"{clean(info.name)} {clean(info.version or '')}".strip() if info else None


async def list_tools(client: Client) -> list[Any]:
    """Every page of the server's tools (up to 100 pages); each page is tried twice."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await retry_once(partial(client.list_tools, cursor=cursor))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def ping(client: Any, protocol: str | None) -> None:
    """The cheapest request of the protocol in use. Raises only when the connection is
    closed or the request timed out: any other answer, even an error, proves the server
    is alive."""
    from mcp import MCPError

    try:
        if protocol and protocol.startswith("2025"):
            await client.session.send_ping()
        else:  # the 2026 protocol has no ping; discover is its cheap request
            await client.session.send_discover(protocol)
    except MCPError as exc:
        if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
            raise
