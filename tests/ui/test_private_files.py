"""What the app keeps on disk beside the conversation is the user's alone: the prompt
history is created 0600 with the config's secrets masked in it (the session file masks
them too), against litellm and the scripted LLM server."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, finish, make_app, ready, send, until, write_config
from tui_agent.config import paths

pytestmark = pytest.mark.anyio


async def test_the_prompt_history_is_private_and_masks_the_configs_key(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A key typed into the prompt reaches the history file as ``***`` (the recall in this
    run keeps what was typed), and the file is 0600 under the usual umask 022."""
    fake_llm.push(Reply(text="noted"))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    history = paths.state_dir() / "prompt-history.jsonl"
    old = os.umask(0o022)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            await send(pilot, app, "my key is sk-test-key, keep it")
            await until(pilot, lambda: app.turns_ended == 1, what="the turn to end")
            assert app.prompt_history.items[-1] == "my key is sk-test-key, keep it"
            await finish(app)
    finally:
        os.umask(old)
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    kept = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
    assert kept == ["my key is ***, keep it"]


async def test_a_failure_of_ours_shows_the_key_masked(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A turn or /compact that fails in our own code says why in the transcript; the
    words of the failure may quote a request (with its key): they are masked."""
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        told = app.turns._failure(RuntimeError("POST with Authorization: Bearer sk-test-key"))
        assert told == "RuntimeError: POST with Authorization: Bearer ***"
        await finish(app)
