"""The ACP methods of a turn and of the connection: ``initialize``, ``authenticate``,
``session/prompt``, ``session/cancel``, ``$/cancel_request``, ``session/set_mode`` and
``session/set_config_option``; the session lifecycle is :mod:`.lifecycle`'s.

A prompt runs as a task of its session, so that ``session/cancel`` stops it as ``esc``
does in the app: the task is cancelled (again, until it ends: a library may swallow one
cancellation), the server's call in flight is cancelled with it, and the prompt answers
``cancelled``. ``$/cancel_request`` naming a prompt does the same; naming another request
(``session/new``, ``load``, ``resume``, ``list``) cancels its work, and the request answers
-32800. Errors a person can act on are JSON-RPC errors naming what was wrong.

Around a turn the editor is told what changed: ``usage_update`` (the context used of the
model's window and the session's cost) before each model request and at the turn's end,
``session_info_update`` once the first prompt titles the session, ``config_option_update``
when a command changed an option (``/model``, ``/code``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    Cost,
    Implementation,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UsageUpdate,
)

from tui_agent import __version__
from tui_agent.acp import auth, commands, offered, options, trust
from tui_agent.acp.gate import may_read
from tui_agent.acp.lifecycle import SessionMethods
from tui_agent.acp.prompt import ReadText, prepared
from tui_agent.acp.sessions import CANCEL_AGAIN, AcpSession
from tui_agent.acp.updates import Updates
from tui_agent.acp.wire import REQUEST_ID
from tui_agent.core.attachments import AttachError, Prepared, content
from tui_agent.core.events import ContextSize, Event, TurnDone
from tui_agent.core.permissions.modes import MODES, parse_mode
from tui_agent.tools.errors import ServerError

STOP = {"end": "end_turn", "max_tokens": "max_tokens", "refusal": "refusal",
        "max_depth": "max_turn_requests", "error": "end_turn", "cancelled": "cancelled"}
T = TypeVar("T")
EARLY_CANCELS = 64
"""Cancellations of ids not (yet) in flight that are remembered."""


class TuiAgent(SessionMethods):
    """tui-agent as an ACP agent: one per connection."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._requests: dict[Any, Callable[[], object]] = {}
        """How to cancel each request in flight that can be, by its JSON-RPC id."""
        self._early: collections.deque[Any] = collections.deque(maxlen=EARLY_CANCELS)
        """Ids cancelled before their handler started (the cancellation can be read before
        the request's task first runs): their work is cancelled as it registers."""

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
                    close=SessionCloseCapabilities(), list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(), delete=SessionDeleteCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities())),
            auth_methods=auth.methods(self.settings, self.capabilities),
            agent_info=Implementation(name="tui-agent", title="tui-agent", version=__version__))

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        await auth.authenticate(self.settings, method_id)
        return AuthenticateResponse()

    async def new_session(self, *args: Any, **kwargs: Any) -> Any:
        return await self._cancellable(super().new_session(*args, **kwargs))

    async def load_session(self, *args: Any, **kwargs: Any) -> Any:
        return await self._cancellable(super().load_session(*args, **kwargs))

    async def resume_session(self, *args: Any, **kwargs: Any) -> Any:
        return await self._cancellable(super().resume_session(*args, **kwargs))

    async def list_sessions(self, *args: Any, **kwargs: Any) -> Any:
        return await self._cancellable(super().list_sessions(*args, **kwargs))

    async def _cancellable(self, work: Awaitable[T]) -> T:
        """``work`` as a task that ``$/cancel_request`` naming this request cancels; the
        request then answers -32800 (Request cancelled)."""
        request_id = REQUEST_ID.get()
        task = asyncio.ensure_future(work)
        self._register(request_id, task.cancel)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # the connection closes: the work goes with it
            task.cancel()
            raise
        finally:
            self._requests.pop(request_id, None)
        if task.cancelled():
            raise RequestError(-32800, "Request cancelled", {"requestId": request_id})
        return task.result()

    def cancel_request(self, request_id: Any) -> None:
        """``$/cancel_request``: the request's work cancelled (a request that ended, or
        that cannot be cancelled, is left as it is)."""
        cancel = self._requests.get(request_id)
        if cancel is not None:
            cancel()
        else:
            self._early.append(request_id)

    def _register(self, request_id: Any, cancel: Callable[[], object]) -> None:
        if request_id is None:
            return
        self._requests[request_id] = cancel
        if request_id in self._early:
            self._early.remove(request_id)
            cancel()

    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        """A permission mode: every later call of the session is judged by it (a call
        running now was judged already). The ``mode`` option follows."""
        session = await self._session(session_id)
        mode = parse_mode(mode_id) if mode_id.strip() == mode_id else None
        if mode is None:
            raise RequestError.invalid_params({"modeId": mode_id, "message": "unknown mode; "
                                               f"the modes are {', '.join(MODES)}"})
        session.agent.policy.mode = mode
        await self._send(session_id, update_current_mode(mode))
        await self._send(session_id, options.options_update(session))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """The options of :mod:`.options`; setting ``mode`` tells the editor's mode
        selector too (``current_mode_update``)."""
        session = await self._session(session_id)
        problem = options.set_option(session, config_id, value)
        if problem:
            raise RequestError.invalid_params({"configId": config_id, "value": value,
                                               "message": problem})
        if config_id == "mode":
            await self._send(session_id, update_current_mode(session.agent.policy.mode))
        if config_id == "model":
            self._later(self.relevel(session))
        return SetSessionConfigOptionResponse(config_options=options.options(session))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = await self._session(session_id)
        if session.turn is not None and not session.turn.done():
            raise RequestError.invalid_request({"sessionId": session_id,
                                                "message": "a prompt is already running"})
        session.turn = asyncio.create_task(self._turn(session, prompt))
        turn = session.turn
        request_id = REQUEST_ID.get()
        self._register(request_id, lambda: self._stop(session))  # as session/cancel
        try:
            await asyncio.wait({turn})
        finally:
            self._requests.pop(request_id, None)
        with contextlib.suppress(Exception):  # the editor may be gone
            await self.retitle(session)
        if turn.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason=turn.result())

    async def _turn(self, session: AcpSession, blocks: list[Any]) -> str:
        text = " ".join(b.text for b in blocks if getattr(b, "type", "") == "text")
        was = options.snapshot(session)
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
                if options.snapshot(session) != was:  # /code, /model: the options show it
                    await self._send(session.id, options.options_update(session))
                    self._later(self.relevel(session))
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
                    if isinstance(event, ContextSize | TurnDone):
                        await self._usage(session)
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

    async def _usage(self, session: AcpSession) -> None:
        """``usage_update``: the context the last request took of the model's window, and
        what the session has cost so far (left out when unknown, as for a local model).
        Nothing while the window is unknown: ACP needs both numbers."""
        size = session.last_context
        if size is None or not size.window:
            return
        spent = session.agent.usage.cost
        await self._send(session.id, UsageUpdate(
            session_update="usage_update", used=size.tokens, size=size.window,
            cost=Cost(amount=spent, currency="USD") if spent is not None else None))

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
        if session is not None:
            self._stop(session)

    @staticmethod
    def _stop(session: AcpSession) -> None:
        """The session's turn cancelled, again every :data:`CANCEL_AGAIN` seconds until
        it ends (a library may swallow one cancellation)."""
        if session.turn is None:
            return
        turn, loop = session.turn, asyncio.get_running_loop()

        def again() -> None:
            if not turn.done():
                turn.cancel()
                loop.call_later(CANCEL_AGAIN, again)

        again()
