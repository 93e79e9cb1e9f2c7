"""The turn: what the app sends (the words, files and images, the resources attached),
how one turn runs (a worker in the ``turn`` group: the core's events rendered as they
come, esc stops it), ``/compact`` (run like a turn), stopping either, and resuming a
saved conversation in its place.

:class:`~tui_agent.ui.chat.ChatApp` holds one :class:`Turns` and routes to it; what the
next message carries (``app.images``, ``app.attachments``) stays on the app, where the
prompt, ``/attach`` and ``/image`` add to it. The backend's callbacks are in
``listeners.py``, the ways out in ``exits.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static, TextArea

from tui_agent.config.interpolate import mask
from tui_agent.ui.widgets.history import tokens_text, with_markers

if TYPE_CHECKING:
    from tui_agent.core.attachments import Prepared
    from tui_agent.ui.host import ChatHost

GROUP = "turn"
"""The worker group of a turn (and of ``/compact``, which stops and is stopped like one)."""


class Turns:
    """Sends messages and runs their turns, one at a time, for ``app``."""

    def __init__(self, app: ChatHost) -> None:
        self.app = app
        self.ended = 0
        """Turns finished, failed or stopped (tests and benchmarks wait on it)."""
        self.plan: tuple[object, str] | None = None
        """The last reply of the latest turn taken in plan mode, with the agent (the
        conversation) it belongs to: shown as the plan when plan mode is left."""

    def running(self) -> bool:
        return any(w.group == GROUP and w.is_running for w in self.app.workers)

    async def refused(self, typed: str | None = None) -> bool:
        """Whether a turn cannot start now (a reply is still coming, or there is no model
        yet), saying why; ``typed`` (the prompt's text, just cleared) goes back into the
        prompt then, so nothing written is lost."""
        app = self.app
        if self.running():
            app.notify("a reply is still coming: esc stops it", severity="warning")
        elif not app.backend.has_model():
            from tui_agent.core.llm import NO_MODEL_HELP

            await app.transcript.note(NO_MODEL_HELP.replace("no model is configured",
                                                            "No model yet"), "warning")
            app.transcript.scroll_end(animate=False)  # the answer to enter: in view
        else:
            return False
        prompt = app.chat.query_one("#prompt", TextArea)
        if typed and not prompt.text:
            prompt.load_text(typed)
            prompt.move_cursor(prompt.document.end)
        return True

    async def send(self, text: str, files: Prepared | None = None, *,
                   after: Callable[[], Awaitable[None]] | None = None,
                   model: str | None = None) -> None:
        """Send ``text`` (or ``files``: words, files and images) and the resources, as a
        turn; ``after`` runs once it ended well (not stopped, not failed): ``/init``;
        ``model``: another model for this turn only (a command file's)."""
        app = self.app
        await app.loaded.wait()
        if await self.refused():
            return
        from tui_agent.core.attachments import Prepared

        files = files or Prepared(text)
        await app.transcript.user(files.text + "".join(f"\n📎 {a}" for a in app.attachments),
                                  [a.chip() for a in files.attachments])
        app.run_worker(self._run(files, list(app.attachments), after, model), name="run_turn",
                       group=GROUP, exclusive=True, exit_on_error=False)
        app.attachments.clear()
        if files.images:
            app.images.clear()
        self.show_pending()

    def show_pending(self) -> None:
        """The line above the prompt: the images and resources for the next message."""
        from tui_agent.ui.widgets.messages import with_chips

        app = self.app
        chips = [a.chip() for a in app.images] + [f"resource {ref}" for ref in app.attachments]
        line = app.chat.query_one("#pending", Static)
        line.display = bool(chips)
        line.update(with_chips(Content("next message:"), chips, below=False) if chips else "")

    def _failure(self, exc: Exception) -> str:
        """A failure of ours, for the transcript: its words may quote a request or a
        reply, so the secrets are masked in them as in every event."""
        return mask(f"{type(exc).__name__}: {exc}", self.app.backend.settings.secrets)

    async def _run(self, files: Prepared, attachments: list[str],
                   after: Callable[[], Awaitable[None]] | None = None,
                   model: str | None = None) -> None:
        from tui_agent.core.attachments import content
        from tui_agent.core.events import ContextSize, EventMasker, TurnDone

        app = self.app
        transcript, status, backend = app.transcript, app.status, app.backend
        status.activity = "working… (esc stops)"
        try:
            await backend.ready.wait()
            blocks = [await backend.attachment(ref) for ref in attachments]
            backend.ensure_session()
            agent = backend.agent
            masked = EventMasker(backend.settings.secrets)
            was = agent.llm
            if model:
                agent.llm = backend.models.make(model)
            planning = agent.policy.mode == "plan"
            try:
                async with aclosing(agent.run_turn(content(files, tuple(blocks)))) as events:
                    async for event in events:
                        for shown in masked(event):  # what the model or a server echoed
                            await transcript.show(shown)
                        if isinstance(event, TurnDone | ContextSize):  # and the meter
                            status.usage, status.context = agent.usage, agent.context.last
                            app.show_price()
            finally:
                agent.llm = was
                if planning:
                    from tui_agent.core.permissions.modes import plan_of

                    found = plan_of(agent.messages)
                    self.plan = (agent, found) if found else self.plan
            if after is not None:
                status.activity = ""
                await after()
        except asyncio.CancelledError:
            await transcript.cancelled()
            status.usage = backend.agent.usage
            raise
        except Exception as exc:  # a failure of ours ends the turn, visibly, not the app
            await transcript.note(f"the turn failed: {self._failure(exc)}", "error")
        finally:
            status.activity = ""
            backend.save_metrics()
            self.ended += 1

    def compact(self, instructions: str | None) -> None:
        """``/compact``: like a turn (esc stops it, nothing is recorded until it is done).
        It says so where the user looks (a notification as it starts and ends), and the
        "compacted here" line is scrolled into view."""
        self.app.run_worker(self._compact(instructions), name="compact", group=GROUP,
                            exclusive=True, exit_on_error=False)

    async def _compact(self, instructions: str | None) -> None:
        from tui_agent.core.events import ContextSize, EventMasker

        app = self.app
        status, transcript = app.status, app.transcript
        status.activity = "compacting… (esc stops)"
        app.notify("compacting the conversation… (esc stops)", title="/compact", markup=False)
        try:
            await app.backend.ready.wait()
            agent = app.backend.agent
            masked = EventMasker(app.backend.settings.secrets)
            async for event in agent.compactor.manual(instructions):
                if isinstance(event, ContextSize):
                    status.context = event
                for shown in masked(event):  # a provider's error can echo the key
                    await transcript.show(shown)
                    self._tell(shown)
            status.usage = agent.usage
        except asyncio.CancelledError:
            await transcript.note("compaction stopped; the conversation is as it was", "warning")
            app.notify("stopped; the conversation is as it was", title="/compact",
                       severity="warning", markup=False)
            raise
        except Exception as exc:  # a failure of ours is shown, not the end of the app
            await transcript.note(f"/compact failed: {self._failure(exc)}", "error")
            app.notify(f"failed: {type(exc).__name__}", title="/compact", severity="error",
                       markup=False)
        finally:
            status.activity = ""

    def _tell(self, event: object) -> None:
        """The notification for what ``/compact`` did, and its marker brought into view."""
        from tui_agent.core.events import Compacted, ErrorOccurred, Notice
        from tui_agent.ui.widgets.messages import CompactedMarker

        app = self.app
        match event:
            case Compacted():
                app.notify(f"{event.done()} ({tokens_text(event.tokens_before)} → "
                           f"{tokens_text(event.tokens_after)} tokens)", title="/compact",
                           markup=False)
                markers = app.transcript.query(CompactedMarker)
                if markers:
                    markers.last().scroll_visible(animate=False)
            case Notice(message=message):
                app.notify(message, title="/compact", markup=False)
            case ErrorOccurred(message=message):
                app.notify(message, title="/compact", severity="error", markup=False)

    def stop(self) -> None:
        for worker in self.app.workers:
            if worker.group == GROUP and worker.is_running:
                worker.cancel()

    async def resume(self, ref: str) -> None:
        from tui_agent.core.session import SessionError
        from tui_agent.wiring.build import LATEST

        app = self.app
        self.stop()
        try:
            conv = app.backend.resume(None if ref == LATEST else ref)
        except SessionError as exc:
            await app.transcript.note(str(exc), "error")
            return
        await app.transcript.replay(with_markers(conv.messages, conv.compactions), conv.calls,
                                    conv.path, app.backend.settings.secrets)
        app.status.usage, app.status.context = app.backend.agent.usage, None
        app.show_price()
        await app.transcript.note(f"resumed {conv.id} ({len(conv.entries)} messages)")
        app.hear_start()
