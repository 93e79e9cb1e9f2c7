"""The ACP methods: ``initialize``, ``session/new``, ``session/load``, ``session/prompt``,
``session/cancel``, ``session/set_mode`` and ``session/close``, over the sessions of
:mod:`.sessions`, held open within a bound by :mod:`.registry`.

A prompt runs as a task of its session, so that ``session/cancel`` stops it as ``esc``
does in the app: the task is cancelled (again, until it ends: a library may swallow one
cancellation), the server's call in flight is cancelled with it, and the prompt answers
``cancelled``. Errors a person can act on are JSON-RPC errors naming what was wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import aclosing
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from tui_agent import __version__
from tui_agent.acp import commands, offered, trust
from tui_agent.acp.gate import EditorGate, may_read
from tui_agent.acp.prompt import ReadText, prepared
from tui_agent.acp.registry import Released, Sessions
from tui_agent.acp.sessions import CANCEL_AGAIN, AcpSession, SessionSetupError, open_session
from tui_agent.acp.updates import Updates, replay
from tui_agent.config import Settings
from tui_agent.core.attachments import AttachError, Prepared, content
from tui_agent.core.events import ContextSize, Event, TurnDone
from tui_agent.core.filters import ToolFilter
from tui_agent.core.permissions.modes import MODE_WORDS, MODES, parse_mode
from tui_agent.core.session import SessionError, load
from tui_agent.tools.errors import ServerError
from tui_agent.wiring import build

MODE_NAMES = {"default": "Default", "plan": "Plan", "auto": "Auto"}
"""The session modes: tui-agent's permission modes (code mode is a config option)."""
STOP = {"end": "end_turn", "max_tokens": "max_tokens", "refusal": "refusal",
        "max_depth": "max_turn_requests", "error": "end_turn", "cancelled": "cancelled"}


class TuiAgent:
    """tui-agent as an ACP agent: one per connection."""

    def __init__(self, settings: Settings, tool_filter: ToolFilter) -> None:
        self.settings, self.tool_filter = settings, tool_filter
        self.sessions = Sessions(self._reopen)
        self.client: Client | None = None
        self.capabilities = ClientCapabilities()
        self._background: set[asyncio.Task[None]] = set()
        """Tasks nobody awaits (the commands sent after a session opens), kept alive."""

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int,
                         client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None,
                         **kwargs: Any) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    close=SessionCloseCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities())),
            agent_info=Implementation(name="tui-agent", title="tui-agent", version=__version__))

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers or [], additional_directories or [])
        return NewSessionResponse(session_id=session.id, modes=self._modes(session),
                                  config_options=commands.options(session))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        store = build.sessions()
        # Only an exact id of the store: an editor names a session it was given, never a
        # prefix or a file path (a path would read any .jsonl the process can open).
        path = next((p for p in store.paths() if p.stem == session_id), None)
        if path is None:
            raise RequestError.invalid_params({"sessionId": session_id, "message":
                                               f"no session {session_id!r} in {store.directory}"})
        try:
            conv = load(path, self.settings.secrets)
        except SessionError as exc:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "message": str(exc)}) from None
        old = self.sessions.peek(conv.id)
        if old is not None and old.agent.session is not None:
            old.agent.session.keep()  # its file is opened again just below
        await self.sessions.forget(conv.id)
        session = await self._open(cwd, mcp_servers or [], additional_directories or [], conv)
        for update in replay(conv.messages, conv.calls):
            await self._send(session.id, update)
        return LoadSessionResponse(modes=self._modes(session),
                                   config_options=commands.options(session))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """``session/close``: its turn cancelled, its file and servers closed."""
        if not await self.sessions.forget(session_id):
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "message": "no such session"})
        return CloseSessionResponse()

    async def _reopen(self, session_id: str, was: Released) -> AcpSession:
        """A released session opened again as it was (see :mod:`.registry`)."""
        history = None
        if not was.blank:
            try:
                history = load(was.path, self.settings.secrets)
            except SessionError as exc:
                raise RequestError.invalid_params({"sessionId": session_id,
                                                   "message": str(exc)}) from None
        session = self._opened(str(was.cwd), was.servers, [str(r) for r in was.roots],
                               history, was.path if was.blank else None)
        session.set_code_mode(was.code_mode)
        session.agent.policy.mode = was.mode
        if was.model and was.model != session.models.chosen:
            commands.switch_model(session, was.model)
        return session

    async def _open(self, cwd: str, servers: list[Any], roots: list[str],
                    history: Any = None) -> AcpSession:
        session = self._opened(cwd, servers, roots, history)
        await self.sessions.add(session)
        # SessionStart hooks: their context joins the conversation; what they say to the
        # person (systemMessage, a warning) is sent with the session's first updates.
        heard = await session.agent.session_start("resume" if history is not None
                                                  else "startup")
        # After the response that names the session: a client drops updates of a session
        # it does not know yet.
        asyncio.get_running_loop().call_soon(
            self._later, offered.advertise(session, self._sender(session), heard))
        return session

    def _opened(self, cwd: str, servers: list[Any], roots: list[str], history: Any = None,
                path: Path | None = None) -> AcpSession:
        folders = [Path(r) for r in roots]
        for extra in folders:
            if not extra.is_absolute() or not extra.is_dir():
                raise RequestError.invalid_params({"additionalDirectories": str(extra),
                                                   "message": "not an absolute path of a "
                                                   "folder"})
        root = Path(cwd)
        if not root.is_absolute():
            raise RequestError.invalid_params({"cwd": cwd, "message": "cwd must be absolute"})
        if not root.is_dir():
            raise RequestError.invalid_params({"cwd": cwd, "message": "cwd is not a folder" if
                                               root.exists() else "cwd does not exist"})
        assert self.client is not None
        client, secrets = self.client, self.settings.secrets
        try:
            session = open_session(self.settings, self.tool_filter, root, servers,
                                   lambda sid: EditorGate(client, sid, root, secrets), history,
                                   path)
        except (SessionSetupError, SessionError) as exc:  # e.g. open in another process
            raise RequestError.invalid_params({"message": str(exc)}) from None
        except OSError as exc:  # the open-file limit, a full disk: the editor is told why
            raise RequestError.internal_error({"message": "the session could not be opened: "
                                               f"{exc.strerror or exc}"}) from None
        session.servers, session.roots = list(servers), tuple(folders)
        return session

    def _later(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _sender(self, session: AcpSession) -> commands.Send:
        async def send(update: Any) -> None:
            await self._send(session.id, update)

        return send

    def _modes(self, session: AcpSession) -> SessionModeState:
        """The permission modes, with what each does; the session's own first shown."""
        return SessionModeState(
            current_mode_id=session.agent.policy.mode,
            available_modes=[SessionMode(id=m, name=MODE_NAMES[m], description=MODE_WORDS[m])
                             for m in MODES])

    async def _session(self, session_id: str) -> AcpSession:
        session = await self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "message": "no such session"})
        return session

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        """A permission mode: every later call of the session is judged by it (a call
        running now was judged already)."""
        session = await self._session(session_id)
        mode = parse_mode(mode_id) if mode_id.strip() == mode_id else None
        if mode is None:
            raise RequestError.invalid_params({"modeId": mode_id, "message": "unknown mode; "
                                               f"the modes are {', '.join(MODES)}"})
        session.agent.policy.mode = mode
        await self._send(session_id, update_current_mode(mode))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """The model picker (``model``) and code mode (``code_mode``: ``tools`` or
        ``code``)."""
        session = await self._session(session_id)
        problem = commands.set_option(session, config_id, value)
        if problem:
            raise RequestError.invalid_params({"configId": config_id, "value": value,
                                               "message": problem})
        return SetSessionConfigOptionResponse(config_options=commands.options(session))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = await self._session(session_id)
        if session.turn is not None and not session.turn.done():
            raise RequestError.invalid_request({"sessionId": session_id,
                                                "message": "a prompt is already running"})
        session.turn = asyncio.create_task(self._turn(session, prompt))
        turn = session.turn
        await asyncio.wait({turn})
        if turn.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason=turn.result())

    async def _turn(self, session: AcpSession, blocks: list[Any]) -> str:
        text = " ".join(b.text for b in blocks if getattr(b, "type", "") == "text")
        was_mode = session.code_mode
        if text.lstrip().startswith("/") and await asyncio.to_thread(session.commands.stale):
            await offered.offer_commands(session, self._sender(session))  # files added since
        try:
            if (user := commands.user_command(session, text)) is not None:
                async def send_one(update: Any) -> None:
                    await self._send(session.id, update)

                return await commands.run_user_command(
                    session, blocks, user, send_one, lambda b: self._prepared(session, b),
                    lambda message: self._run(session, message))
            if commands.is_init(text):
                return await commands.init(session, self._sender(session),
                                           lambda m: self._run(session, m))
            if commands.is_trust(text):
                assert self.client is not None
                if await trust.trust(session, self.client, self._sender(session)):
                    await offered.offer_commands(session, self._sender(session))
                return "end_turn"
            if commands.is_command(session, text):
                # The blocks beside the command's words (a file, a selection, an image) go
                # with an MCP prompt's turn; a built-in command takes none. Read first: one
                # that cannot go stops the command before it has done anything.
                others = [b for b in blocks if getattr(b, "type", "") != "text"]
                if others and not commands.starts_a_turn(session, text):
                    raise ValueError(f"{text.split()[0]} takes no files or images "
                                     f"({len(others)} sent with it): nothing was done; "
                                     "send them with a prompt")
                attached = await self._prepared(session, others) if others else None

                async def send(update: Any) -> None:
                    await self._send(session.id, update)

                turn_text = await commands.run(session, text, send)
                if session.code_mode != was_mode:  # /code: the option shows it
                    await self._send(session.id, commands.options_update(session))
                if turn_text is None:
                    return "end_turn"
                message: str | list[dict[str, Any]] = turn_text if attached is None else \
                    content(Prepared(f"{turn_text} {attached.text}".strip(),
                                     attached.attachments))
            else:
                message = content(await self._prepared(session, blocks))
        except (AttachError, ValueError, ServerError) as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        return await self._run(session, message)

    async def _prepared(self, session: AcpSession, blocks: list[Any]) -> Prepared:
        assert self.client is not None
        return await prepared(blocks, session.cwd, self._reader(session),
                              session.agent.llm.model or "", session.reads_images,
                              may_read(self.client, session.id), session.folders())

    async def _run(self, session: AcpSession, message: str | list[dict[str, Any]]) -> str:
        updates = Updates(session.settings.secrets, session.cwd, session.agent.scopes)
        reason = "end_turn"
        try:
            async with aclosing(session.agent.run_turn(message)) as events:
                async for event in events:
                    self._note(session, event)
                    for update in updates(event):
                        await self._send(session.id, update)
                    if isinstance(event, TurnDone):
                        reason = STOP.get(event.reason, "end_turn")
        finally:
            # A cancelled turn too: the text held back (a possible secret's start, an
            # unfinished escape) is sent, shielded from the cancellations still coming.
            await asyncio.shield(self._send_all(session.id, updates.end()))
        return reason

    async def _send_all(self, session_id: str, updates: list[Any]) -> None:
        for update in updates:
            with contextlib.suppress(Exception):  # the editor may be gone
                await self._send(session_id, update)

    @staticmethod
    def _note(session: AcpSession, event: Event) -> None:
        if isinstance(event, ContextSize):
            session.last_context = event
        elif isinstance(event, TurnDone) and event.context is not None:
            session.last_context = event.context

    def _reader(self, session: AcpSession) -> ReadText | None:
        """The editor's ``fs/read_text_file`` for ``@`` files, when it offers it."""
        fs = self.capabilities.fs
        if self.client is None or fs is None or not fs.read_text_file:
            return None
        client = self.client

        async def read(path: Path) -> str:
            answer = await client.read_text_file(session_id=session.id, path=str(path))
            return answer.content

        return read

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.peek(session_id)
        if session is None or session.turn is None:
            return
        turn, loop = session.turn, asyncio.get_running_loop()

        def again() -> None:
            if not turn.done():
                turn.cancel()
                loop.call_later(CANCEL_AGAIN, again)

        again()

    async def _send(self, session_id: str, update: Any) -> None:
        if self.client is not None:
            await self.client.session_update(session_id=session_id, update=update)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.sessions.close()
