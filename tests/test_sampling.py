"""Sampling: a server asks the client's model for a reply. Headless it is denied unless
``--sampling allow``; allowed, it runs on the chat's model (or ``[model]
sampling_model``), within the server's maxTokens, and the reply goes back. Over both
protocols (our asking server asks through a resolver), and from the reference
server-everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_elicitation import asking_config, everything_config, results, run
from tui_agent.tools.sampling import MAX_TOKENS_CAP, as_messages, sample_request

pytestmark = pytest.mark.slow


def test_a_request_becomes_plain_text_and_its_tokens_are_capped() -> None:
    from mcp.types import CreateMessageRequestParams, SamplingMessage, TextContent

    params = CreateMessageRequestParams(messages=[SamplingMessage(
        role="user", content=TextContent(type="text", text="hi\x1b[2J there"))],
        system_prompt="be\x07 kind", max_tokens=10**9)
    request = sample_request("srv", params)
    assert request.messages == (("user", "hi there"),) and request.system_prompt == "be kind"
    assert request.max_tokens == MAX_TOKENS_CAP
    assert as_messages(request) == [{"role": "system", "content": "be kind"},
                                    {"role": "user", "content": "hi there"}]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_allowed_the_model_answers_the_server(tmp_path: Path, fake_llm: FakeLLM,
                                              protocol: str) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__haiku", {}, id="h")]),
                  Reply(text="Light on the oak grain"),  # the server's request, answered
                  Reply(text="it wrote one"))
    done = run(asking_config(tmp_path, fake_llm, protocol=protocol), "--sampling", "allow",
               "a haiku please")
    assert done.returncode == 0, done.stderr
    assert results(done.stdout) == ["openai/fake-model wrote: Light on the oak grain"]
    asked = fake_llm.requests[1]
    assert asked["messages"] == [
        {"role": "system", "content": "You are a poet. Answer in three lines."},
        {"role": "user", "content": "Write a haiku about a table by the window."}]
    assert asked["max_tokens"] == 60 and "tools" not in asked
    assert "asking asked the model (1 message, up to 60 tokens)" in done.stderr


def test_denied_by_default_and_said(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__haiku", {}, id="h")]),
                  Reply(text="no haiku then"))
    done = run(asking_config(tmp_path, fake_llm), "a haiku please")
    assert done.returncode == 0, done.stderr
    [text] = results(done.stdout)
    assert "declined" in text, text
    assert len(fake_llm.requests) == 2  # the model answered the turn, not the server
    assert "--sampling allow lets servers use the model" in done.stderr


def test_server_everything_samples_through_the_sampling_model(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "asking__trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}, id="s")]),
        Reply(text="hi from the sampling model"), Reply(text="done"))
    conf = everything_config(tmp_path, fake_llm)
    conf.write_text(conf.read_text().replace(
        '[model]\n', '[model]\nsampling_model = "openai/sampler"\n'), encoding="utf-8")
    done = run(conf, "--sampling", "allow", "sample")
    assert done.returncode == 0, done.stderr
    [text] = results(done.stdout)
    assert "hi from the sampling model" in text
    assert fake_llm.requests[1]["model"] == "sampler" and fake_llm.requests[1]["max_tokens"] == 20


@pytest.mark.anyio
async def test_the_app_shows_the_request_and_the_reply_before_it_goes_back(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """The request modal (the last message edited), the model runs it, the reply modal,
    ``y``: the server gets the reply to the edited request."""
    from textual.widgets import TextArea

    from tests.ui.kit import SIZE, make_app, ready, shown, until, with_asking_server
    from tui_agent.ui.screens.sampling import SampledReply, SamplingScreen

    fake_llm.push(Reply(tool_calls=[FakeToolCall("asking__haiku", {}, id="h")]),
                  Reply(text="Rain on the window"), Reply(text="done"))
    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"haiku", "enter")
        await shown(pilot, app, SamplingScreen, "the request")
        app.screen.query_one("#last", TextArea).text = "Write a haiku about rain."
        await pilot.press("ctrl+s")
        await shown(pilot, app, SampledReply, "the reply")
        assert "Rain on the window" in str(app.screen.query_one("#body Static").render())
        keys = str(app.screen.query_one(".keys").render())  # what each key does, not "keep"
        assert "y  send it to the server" in keys and "n  don't send" in keys, keys
        assert fake_llm.requests[1]["messages"][-1] == {
            "role": "user", "content": "Write a haiku about rain."}
        await pilot.press("y")
        await until(pilot, lambda: len(fake_llm.requests) >= 3, what="the turn's next step")
        told = [m for m in fake_llm.requests[2]["messages"] if m["role"] == "tool"]
        assert told[0]["content"] == "openai/fake-model wrote: Rain on the window"
        await app.shut_down(0)


@pytest.mark.anyio
async def test_a_model_pointed_at_a_server_in_the_app_samples_there_too(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``/model NAME URL``: a server's sampling request on the chat's model goes to that
    server as the turns do, not to the configured one."""
    from tests.ui.kit import SIZE, make_app, ready, send, shown, until, with_asking_server
    from tui_agent.ui.screens.sampling import SampledReply, SamplingScreen

    with FakeLLM([Reply(tool_calls=[FakeToolCall("asking__haiku", {}, id="h")]),
                  Reply(text="Rain on the window"), Reply(text="done")]) as local:
        app = make_app(with_asking_server(tmp_path / "c.toml", fake_llm.base_url))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            await send(pilot, app, f"/model openai/other {local.base_url}")
            await until(pilot, lambda: app.backend.model_name == "openai/other")
            await send(pilot, app, "haiku")
            await shown(pilot, app, SamplingScreen, "the request")
            await pilot.press("ctrl+s")
            await shown(pilot, app, SampledReply, "the reply")
            await pilot.press("y")
            await until(pilot, lambda: len(local.requests) >= 3, what="the turn's next step")
            assert [r["model"] for r in local.requests] == ["other"] * 3
            assert fake_llm.requests == []
            await app.shut_down(0)
