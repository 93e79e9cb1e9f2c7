"""The status bar's context meter and cost across conversations: ctrl+n takes the old
conversation's context size off the bar, and a model with no known price (one on the
user's own machine) says "cost unknown" from the start, not ``$0.0000`` until its first
reply. Against litellm and the scripted LLM server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
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


@pytest.mark.parametrize(("model", "said"), [("openai/some-new-model-zq", "cost unknown"),
                                             ("openai/gpt-4o", "$0.0000")])
async def test_an_unlisted_hosted_model_says_cost_unknown_before_any_request(
        tmp_path: Path, model: str, said: str) -> None:
    """A hosted model litellm's price list does not name has no price to count: the bar
    says so from the start (read from litellm's price file after the first frame), not
    ``$0.0000`` until the first reply; a listed one keeps its ``$0.0000``. No request is
    made (the endpoint is never reached)."""
    config = write_config(tmp_path / "c.toml", model=model,
                          extra='api_key = "sk-test-key"\n')
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: said in bar(app), timeout=30, what=said)
        await pilot.pause(0.2)  # the price read is one thread: it does not flip back
        assert said in bar(app)
        other = "$0.0000" if said == "cost unknown" else "cost unknown"
        assert other not in bar(app)
        await finish(app)


def test_the_price_file_is_read_without_importing_litellm() -> None:
    """The first frame must not pay for ``import litellm`` (seconds): the price list is
    read from litellm's package folder as a file."""
    script = ("import sys\nfrom tui_agent.core.llm.price_list import listed_in_file\n"
              "print(listed_in_file('openai/gpt-4o'), "
              "listed_in_file('openai/some-new-model-zq'), 'litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr
