"""An editor for the ``tui-agent acp`` tests: the ACP SDK's own client side
(:class:`acp.ClientSideConnection` through :func:`acp.spawn_agent_process`), driving a real
``tui-agent acp`` process (started through the test worker's zygote) against the
scripted model and real MCP servers. It records every ``session/update``, answers
``session/request_permission`` from a script of option ids, and serves
``fs/read_text_file`` from buffers it holds (an editor's unsaved files)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.conftest import FAKE_MODEL, ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM
from tests.zygote import command
from tui_agent.acp.chunks import OWN

if TYPE_CHECKING:
    from acp.interfaces import Client


class Editor:
    """The client's side: what an editor does, recorded."""

    def __init__(self, answers: list[str] | None = None,
                 buffers: dict[str, str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.answers = list(answers or [])
        """Option ids to answer permission requests with, in order; ``cancelled`` answers
        the cancelled outcome."""
        self.asked: list[tuple[ToolCallUpdate, list[Any]]] = []
        self.buffers = dict(buffers or {})
        self.read: list[str] = []
        self.on_ask: Callable[[], None] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[Any], **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if self.on_ask is not None:
            self.on_ask()
        answer = self.answers.pop(0) if self.answers else "cancelled"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected",
                                                                option_id=answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.read.append(path)
        return ReadTextFileResponse(content=self.buffers[path])

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    def reply(self) -> str:
        """The model's words: the agent's message chunks but tui-agent's own (a notice, an
        error, a command's answer: marked in ``_meta``)."""
        return "".join(u.content.text for u in self.of("agent_message_chunk")
                       if OWN not in (u.field_meta or {}))

    def own(self) -> list[Any]:
        """tui-agent's own messages (marked in ``_meta``)."""
        return [u for u in self.of("agent_message_chunk") if OWN in (u.field_meta or {})]

    async def until(self, check: Callable[[], bool], timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; updates so far: {self.kinds()}")
            await asyncio.sleep(0.05)


def config(tmp_path: Path, fake: FakeLLM, servers: str = "", extra: str = "") -> Path:
    """A config file: the scripted model, and ``servers`` (TOML tables)."""
    path = tmp_path / "config.toml"
    path.write_text(f'[model]\nname = "{FAKE_MODEL}"\napi_base = "{fake.base_url}"\n'
                    f'api_key = "sk-test-key"\nmax_retries = 1\nretry_backoff = 0.01\n'
                    f"{extra}{servers}", encoding="utf-8")
    return path


def fake_server_toml(name: str = "fake", *args: str, more: str = "") -> str:
    """``[servers.NAME]``: our MCP server (tests/fakes/mcp_server.py) over stdio."""
    argv = ", ".join(f'"{a}"' for a in ["-m", "tests.fakes.mcp_server", *args])
    env = ", ".join(f'{k} = "{v}"' for k, v in tagged_env().items())
    return (f'\n[servers.{name}]\ncommand = "{sys.executable}"\nargs = [{argv}]\n'
            f'cwd = "{ROOT}"\nenv = {{ {env} }}\n{more}')


@asynccontextmanager
async def running(editor: Editor, conf: Path, *args: str, cwd: Path,
                  fs: bool = False, log: Path | None = None
                  ) -> AsyncIterator[tuple[ClientSideConnection, Any]]:
    """``tui-agent acp --config conf ARGS`` with ``editor`` on the other end, initialized
    (offering ``fs/read_text_file`` when ``fs``); its stderr goes to ``log``."""
    exe, *rest = command()
    err = open(log or cwd / "acp-stderr.log", "wb")  # noqa: SIM115
    try:
        # shutdown_timeout: the SDK waits 2 s for the agent to exit after closing its stdin,
        # then terminates it, and raises ProcessLookupError when the agent exited in between
        # (seen with the CPUs busy); the agent's own exit is bounded by its tests
        async with spawn_agent_process(  # Editor answers what these tests need of a client
                cast("Client", editor), exe, *rest, "acp", "--config", str(conf), *args, cwd=cwd,
                env=dict(os.environ),
                transport_kwargs={"stderr": err, "shutdown_timeout": 30}) as (conn, proc):
            await asyncio.wait_for(conn.initialize(
                protocol_version=1, client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=fs, write_text_file=False))), 60)
            yield conn, proc
    finally:
        err.close()


async def prompt(conn: ClientSideConnection, session_id: str, text: str | list[Any],
                 timeout: float = 180) -> str:
    """Send ``text`` (or these content blocks); the stop reason. The bound only rules out
    a hang: a first prompt loads litellm and starts the session's servers, which took over
    60 s with two suites on two CPUs."""
    blocks = [text_block(text)] if isinstance(text, str) else text
    answer = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=blocks),
                                    timeout)
    return str(answer.stop_reason)
