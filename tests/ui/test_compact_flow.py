"""``/context`` and ``/compact`` in the app, against litellm and the scripted server, and
the "compacted here" line of a resumed conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widget import Widget

from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_compaction import SUMMARY, Summarizing, is_summary_request, words
from tests.ui.kit import (
    SIZE,
    finish,
    make_app,
    notices,
    ready,
    send,
    turn,
    until,
    write_config,
)
from tui_agent.ui.widgets.messages import CompactedMarker, Note, UserMessage

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_context_compact_and_resume(tmp_path: Path) -> None:
    with Summarizing(window=None, reply="noted") as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            for text in ("first: 41", "second: 42", "third: 43"):
                await turn(pilot, app, text)
            assert app.status.context is not None and app.status.context.window is None
            assert "ctx " in str(app.status.render())

            await send(pilot, app, "/context")
            await until(pilot, lambda: any("context:" in str(n.render())
                                           for n in app.transcript.query(Note)),
                        what="the /context report")
            report = next(str(n.render()) for n in app.transcript.query(Note)
                          if "context:" in str(n.render()))
            assert "window is unknown: set [model] context_window" in report
            assert "messages" in report and "tool definitions" in report

            await send(pilot, app, "/compact keep the numbers")
            await until(pilot, lambda: app.transcript.query(CompactedMarker),
                        what="the compacted-here line")
            asked = [b for b in server.requests if is_summary_request(b)]
            assert len(asked) == 1 and "keep the numbers" in asked[0]["messages"][0]["content"]
            marker = str(app.transcript.query_one(CompactedMarker).render())
            assert "4 earlier messages summarized" in marker
            assert len(app.transcript.query(UserMessage)) == 3  # every message stays
            await until(pilot, lambda: app.status.activity == "", what="the end of /compact")

            await turn(pilot, app, "fourth")
            sent = [m for m in server.requests[-1]["messages"] if m["role"] != "system"]
            assert SUMMARY in sent[0]["content"]
            assert [m["content"] for m in sent[1:]] == ["third: 43", "noted", "fourth"]

            session = app.backend.agent.session
            assert session is not None
            await send(pilot, app, f"/resume {session.id}")
            await until(pilot, lambda: any("resumed" in str(n.render())
                                           for n in app.transcript.query(Note)),
                        what="the resume")
            markers = app.transcript.query(CompactedMarker)
            assert len(markers) == 1
            assert app.backend.agent.context.summary == SUMMARY  # goes on from the summary
            await finish(app)


def toasts(app: object) -> list[str]:
    """The notifications on screen, as text."""
    return [str(t.render()) for t in app.screen.query("Toast")]  # type: ignore[attr-defined]


def in_view(widget: Widget, view: Widget) -> bool:
    """Whether ``widget`` is laid out and inside what ``view`` (a scrolling container) shows."""
    top = widget.virtual_region.y
    return (widget.display and view.scroll_y <= top
            and top + 1 <= view.scroll_y + view.scrollable_content_region.height)


async def test_compact_says_so_and_its_marker_is_in_view(tmp_path: Path) -> None:
    with Summarizing(window=None, reply=words(2500, 0)) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await ready(pilot, app)
            await send(pilot, app, "/compact")  # nothing to compact yet: it says so too
            await until(pilot, lambda: any("nothing to compact" in t for t in toasts(app)),
                        what="a notice that there was nothing to compact")
            await until(pilot, lambda: not app.turn_running(), what="the end of /compact")
            for n in range(3):
                await turn(pilot, app, f"question {n}")
            await pilot.press("pageup", "pageup")  # reading an earlier reply
            transcript = app.transcript
            await until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y - 10)

            await send(pilot, app, "/compact")
            await until(pilot, lambda: any("compacting" in t for t in toasts(app)),
                        what="a notice that /compact started")
            await until(pilot, lambda: any("summarized" in t for t in toasts(app)),
                        what="a notice that /compact finished")
            done = next(t for t in toasts(app) if "summarized" in t)
            assert "4 earlier messages summarized" in done
            marker = transcript.query_one(CompactedMarker)
            await until(pilot, lambda: in_view(marker, transcript), what="the marker in view")

            await finish(app)


async def test_a_failing_compaction_never_shows_the_api_key(tmp_path: Path) -> None:
    """The provider's refusal of the summary request echoes the configured api_key: the
    /compact notification says it failed, masked like the transcript line."""
    with FakeLLM(repeat=Reply(text="noted")) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await ready(pilot, app)
            for text in ("first", "second", "third"):
                await turn(pilot, app, text)
            server.push(Reply(status=400, error_message="invalid api key: sk-test-key"))
            told = notices(app)
            await send(pilot, app, "/compact")
            await until(pilot, lambda: any("could not compact" in m for m in told),
                        what="a notification that /compact failed")
            assert not [m for m in told if "sk-test-key" in m]
            assert any("invalid api key" in m for m in told)  # the provider's words stay
            await finish(app)
