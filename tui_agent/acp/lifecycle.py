"""The session lifecycle of ACP v1: ``session/new``, ``session/load`` (the conversation
replayed), ``session/resume`` (the same without the replay), ``session/list``,
``session/delete`` and ``session/close``, over the sessions of :mod:`.sessions` held open
within a bound by :mod:`.registry` and the store ``tui-agent sessions`` lists
(:mod:`.history`). The turns are :mod:`.agent`'s.

A session that is opened is told, after the response that names it (a client drops
updates of a session it does not know yet), what :mod:`.offered` says, and its title
(``session_info_update``) when it has one. Opening one needs a usable key for the model
(:mod:`.auth`): without it, ``auth_required`` (-32000).

Deleting a session open in this process closes it first (its turn cancelled, as
``session/close`` does); one another process holds open is refused, naming that.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    ResumeSessionResponse,
    SessionMode,
    SessionModeState,
)

from tui_agent.acp import auth, history, offered, options
from tui_agent.acp.gate import EditorGate
from tui_agent.acp.registry import Released, Sessions
from tui_agent.acp.sessions import CLOSE_WAIT, AcpSession, SessionSetupError, open_session
from tui_agent.acp.updates import replay
from tui_agent.acp.wire import REQUEST_ID, Wire
from tui_agent.config import Settings
from tui_agent.core.filters import ToolFilter
from tui_agent.core.permissions.modes import MODE_WORDS, MODES
from tui_agent.core.session import Conversation, SessionError, load
from tui_agent.core.session.records import first_words
from tui_agent.wiring import build

ABANDON_WAIT = 2 * CLOSE_WAIT
"""Seconds a cancelled open waits for its session to close before it answers: long enough
for a turn-less session (its hooks and servers), not forever."""


class SessionMethods:
    """The session methods of :class:`~tui_agent.acp.agent.TuiAgent`."""

    def __init__(self, settings: Settings, tool_filter: ToolFilter) -> None:
        self.settings, self.tool_filter = settings, tool_filter
        self.sessions = Sessions(self._reopen)
        self.client: Client | None = None
        self.capabilities = ClientCapabilities()
        self._background: set[asyncio.Task[Any]] = set()
        """Tasks nobody awaits (the commands sent after a session opens), kept alive."""
        self.titles: dict[str, str] = {}
        """The title each open session's editor was last told."""
        self.wire: Wire | None = None
        """The connection's wire (:mod:`.serve` sets it), which runs what waits for a
        response to be written."""

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        await auth.require_key(self.settings)
        session = await self._open(cwd, mcp_servers or [], additional_directories or [])
        return NewSessionResponse(session_id=session.id, modes=self._modes(session),
                                  config_options=options.options(session))

    async def load_session(self, cwd: str, session_id: str,
                           mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        session = await self._continue(cwd, session_id, mcp_servers, additional_directories,
                                       replayed=True)
        return LoadSessionResponse(modes=self._modes(session),
                                   config_options=options.options(session))

    async def resume_session(self, cwd: str, session_id: str,
                             mcp_servers: list[Any] | None = None,
                             additional_directories: list[str] | None = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        """``session/resume``: as ``session/load``, the history not replayed (the editor
        shows its own copy)."""
        session = await self._continue(cwd, session_id, mcp_servers, additional_directories)
        return ResumeSessionResponse(modes=self._modes(session),
                                     config_options=options.options(session))

    async def list_sessions(self, cursor: str | None = None, cwd: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        found, after = await asyncio.to_thread(history.page, build.sessions(),
                                               self.settings.secrets, cwd, cursor)
        return ListSessionsResponse(sessions=found, next_cursor=after)

    async def delete_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/delete`` (routed by :mod:`.wire`: the SDK has no route for it)."""
        from acp.schema import DeleteSessionRequest

        session_id = DeleteSessionRequest.model_validate(params).session_id
        session = self.sessions.peek(session_id)
        if session is not None and session.agent.session is not None:
            session.agent.session.keep()  # moved below, not removed as an empty one
        await self.sessions.forget(session_id)
        self.titles.pop(session_id, None)
        await asyncio.to_thread(history.delete, build.sessions(), session_id)
        return DeleteSessionResponse().model_dump(by_alias=True, exclude_none=True)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """``session/close``: its turn cancelled, its file and servers closed."""
        if not await self.sessions.forget(session_id):
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "message": "no such session"})
        self.titles.pop(session_id, None)
        return CloseSessionResponse()

    async def _continue(self, cwd: str, session_id: str, servers: list[Any] | None,
                        roots: list[str] | None, replayed: bool = False) -> AcpSession:
        """A saved session opened again (``session/load``, ``session/resume``); its
        conversation sent to the editor when ``replayed``."""
        await auth.require_key(self.settings)
        store = build.sessions()
        path = history.find(store, session_id)
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
        self.titles.pop(conv.id, None)  # told again once it is open
        return await self._open(cwd, servers or [], roots or [], conv, replayed)

    async def _reopen(self, session_id: str, was: Released) -> AcpSession:
        """A released session opened again as it was (see :mod:`.registry`)."""
        history_ = None
        if not was.blank:
            try:
                history_ = load(was.path, self.settings.secrets)
            except SessionError as exc:
                raise RequestError.invalid_params({"sessionId": session_id,
                                                   "message": str(exc)}) from None
        session = self._opened(str(was.cwd), was.servers, [str(r) for r in was.roots],
                               history_, was.path if was.blank else None)
        session.set_code_mode(was.code_mode)
        session.agent.policy.mode = was.mode
        if was.effort is not None:
            options.set_effort(session, was.effort)
        if was.model and was.model != session.models.chosen:
            options.switch_model(session, was.model)
        return session

    async def _open(self, cwd: str, servers: list[Any], roots: list[str],
                    conv: Conversation | None = None, replayed: bool = False) -> AcpSession:
        """A session opened and held, its SessionStart hooks run and (``replayed``) its
        conversation sent. A request that fails or is cancelled (``$/cancel_request``)
        on the way leaves no session open: it is closed again, its file unlocked."""
        session = self._opened(cwd, servers, roots, conv)
        self.sessions.hold(session)
        try:
            # SessionStart hooks: their context joins the conversation; what they say to
            # the person (systemMessage, a warning) is sent with the session's first updates.
            heard = await session.agent.session_start("resume" if conv is not None
                                                      else "startup")
            if replayed and conv is not None:
                for update in replay(conv.messages, conv.calls):
                    await self._send(session.id, update)
            await self.sessions.trim(session.id)
        except BaseException:
            await self._abandon(session)
            raise
        # After the response that names the session: a client drops updates of a session
        # it does not know yet.
        self._after_answer(lambda: self._later(self._opening(session, heard)))
        return session

    async def _abandon(self, session: AcpSession) -> None:
        """Close a session whose opening failed or was cancelled, waiting for it a bounded
        time (the close goes on if the wait ends first: see :meth:`Sessions._close`)."""
        forgetting = asyncio.ensure_future(self.sessions.forget(session.id))
        self._background.add(forgetting)
        forgetting.add_done_callback(self._background.discard)
        await asyncio.wait({forgetting}, timeout=ABANDON_WAIT)

    def _after_answer(self, start: Callable[[], object]) -> None:
        """``start`` once the response to the request being handled is written (see
        :meth:`.wire.Wire.after`); never if the request fails."""
        request_id = REQUEST_ID.get()
        if self.wire is None or request_id is None:  # no wire: nothing to wait for
            asyncio.get_running_loop().call_soon(start)
        else:
            self.wire.after(request_id, start)

    async def _opening(self, session: AcpSession, heard: Any) -> None:
        await self.retitle(session)
        self._later(self.relevel(session))
        await offered.advertise(session, self._sender(session), heard)

    async def relevel(self, session: AcpSession) -> None:
        """The reasoning levels the model takes, told with ``config_option_update`` once
        litellm has said and they differ from those offered. One model's at a time, in the
        order the models were chosen (a switch while one is learned starts another)."""
        async with session.leveling:
            if await options.learn_levels(session):
                await self._send(session.id, options.options_update(session))

    async def retitle(self, session: AcpSession) -> None:
        """``session_info_update`` when the session's title is new to the editor (its first
        prompt names it, as ``tui-agent sessions`` shows it)."""
        title = first_words(session.agent.messages)
        if title and self.titles.get(session.id) != title:
            self.titles[session.id] = title
            await self._send(session.id, history.session_info(title, _written(session)))

    def _opened(self, cwd: str, servers: list[Any], roots: list[str], conv: Any = None,
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
                                   lambda sid: EditorGate(client, sid, root, secrets), conv,
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

    def _sender(self, session: AcpSession) -> Any:
        async def send(update: Any) -> None:
            await self._send(session.id, update)

        return send

    @staticmethod
    def _modes(session: AcpSession) -> SessionModeState:
        """The permission modes, with what each does; the session's own first shown."""
        return SessionModeState(
            current_mode_id=session.agent.policy.mode,
            available_modes=[SessionMode(id=m, name=options.MODE_NAMES[m],
                                         description=MODE_WORDS[m]) for m in MODES])

    async def _session(self, session_id: str) -> AcpSession:
        session = await self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "message": "no such session"})
        return session

    async def _send(self, session_id: str, update: Any) -> None:
        if self.client is not None:
            await self.client.session_update(session_id=session_id, update=update)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.sessions.close()


def _written(session: AcpSession) -> float | None:
    """When the session's file was last written (None: not known)."""
    writer = session.agent.session
    try:
        return writer.path.stat().st_mtime if writer is not None else None
    except OSError:
        return None
