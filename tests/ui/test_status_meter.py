"""The status bar's context meter and cost across conversations: ctrl+n takes the old
conversation's context size off the bar, and a model with no known price (one on the
user's own machine) says "cost unknown" from the start, not ``$0.0000`` until its first
reply. Against litellm and the scripted LLM server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, finish, make_app, ready, turn, until, write_config

pytestmark = [pytest.mark.anyio]


def bar(app: object) -> str:
    return str(app.status.render())  # type: ignore[attr-defined]


async def test_ctrl_n_clears_the_meter_and_an_unpriced_model_says_so_at_once(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="hello there"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: "cost unknown" in bar(app), timeout=120,
                    what="cost unknown at start (litellm imported in a thread)")
        assert "$0.0000" not in bar(app)
        await turn(pilot, app, "hi", timeout=120)  # the first imports litellm
        await until(pilot, lambda: "ctx " in bar(app), what="the meter")
        assert "cost unknown" in bar(app)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: "0 tokens" in bar(app), what="the new conversation")
        assert "ctx " not in bar(app)
        assert "cost unknown" in bar(app) and "$0.0000" not in bar(app)
        await finish(app)
