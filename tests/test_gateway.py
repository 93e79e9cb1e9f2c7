"""The team gateway: tui-agent against a real LiteLLM Proxy (started from a YAML config,
no database) in front of the scripted OpenAI-format fake (and a Claude deployment on the
Anthropic fake): answers through it, lists its models, names its budget and rate-limit
refusals, tags each request with the conversation's id so the proxy's spend logs group
it, and marks prompt-cache breakpoints that reach the Claude deployment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import AnthropicFake
from tests.fakes.anthropic_server import Reply as AReply
from tests.fakes.llm_server import FakeLLM, Reply
from tests.gateway import MASTER_KEY, Gateway, start_gateway
from tui_agent.cli import main
from tui_agent.config.models import ModelSettings
from tui_agent.core.llm import LLM
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.llm.gateway import gateway_models

ANSWER = "hello through the gateway"

# One worker runs this file when the suite runs in parallel: the proxy is started once.
pytestmark = pytest.mark.xdist_group("gateway")


@pytest.fixture(scope="module")
def claude_behind() -> Iterator[AnthropicFake]:
    """The Anthropic deployment behind the gateway's ``claude-team``."""
    with AnthropicFake() as fake:
        fake.repeat = AReply(text="ok")
        yield fake


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory,
            claude_behind: AnthropicFake) -> Iterator[Gateway]:
    claude = {"model_name": "claude-team", "litellm_params": {
        "model": "anthropic/claude-sonnet-4-5", "api_base": claude_behind.base_url,
        "api_key": "sk-provider"}}
    with FakeLLM(repeat=Reply(text=ANSWER)) as provider:
        proxy = start_gateway(tmp_path_factory.mktemp("gateway"), provider, [claude])
        try:
            yield proxy
        finally:
            proxy.stop()


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    """The gateway's key, where litellm (and :func:`gateway_models`) read it."""
    monkeypatch.setenv("LITELLM_PROXY_API_KEY", MASTER_KEY)
    return MASTER_KEY


def settings(gateway: Gateway, name: str, **extra: Any) -> ModelSettings:
    values: dict[str, Any] = {"name": f"litellm_proxy/{name}", "api_base": gateway.url,
                                 "api_key": MASTER_KEY, "max_retries": 0, "timeout": 20}
    return ModelSettings(**{**values, **extra})


def test_run_answers_through_the_gateway(gateway: Gateway, key: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "litellm_proxy/alpha", "--api-base", gateway.url,
                 "--output", "jsonl", "hi"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert "".join(e["delta"] for e in events if e["type"] == "text") == ANSWER
    assert events[-1]["type"] == "done"
    assert gateway.provider.authorizations[-1] == "Bearer sk-provider"  # the proxy's own key


def test_the_model_list_is_the_gateways(gateway: Gateway, key: str) -> None:
    assert gateway_models(ModelSettings(name="litellm_proxy/alpha", api_base=gateway.url)) \
        == [f"litellm_proxy/{name}" for name in gateway.names]
    assert gateway_models(ModelSettings(name="openai/gpt-4o")) == []  # no gateway: nothing


def test_the_gateway_tells_each_models_window_and_what_it_reads(gateway: Gateway,
                                                                key: str) -> None:
    alpha = LLM(ModelSettings(name="litellm_proxy/alpha", api_base=gateway.url))
    assert alpha.window() == 32000 and alpha.takes() == set()
    beta = LLM(ModelSettings(name="litellm_proxy/beta", api_base=gateway.url))
    assert beta.window() == 128000 and beta.takes() == {"image"}


def test_a_refusal_to_list_is_told_in_the_gateways_words(gateway: Gateway) -> None:
    with pytest.raises(LLMError) as caught:  # a key it does not know (and no database)
        gateway_models(settings(gateway, "alpha", api_key="sk-wrong"))
    assert str(caught.value) == (f"the LiteLLM gateway at {gateway.url} failed to list its "
                                 "models (400): No connected db.")


anyio = pytest.mark.anyio


@anyio
async def test_a_spent_budget_is_named_as_such(gateway: Gateway) -> None:
    llm = LLM(settings(gateway, "spent"))
    async for _ in llm.stream([{"role": "user", "content": "spend it"}]):
        pass  # the first request spends the deployment's whole budget
    with pytest.raises(LLMError) as caught:
        async for _ in llm.stream([{"role": "user", "content": "and more"}]):
            pass
    error = caught.value
    assert error.kind == "budget" and not error.retriable
    assert str(error).startswith(f"the LiteLLM gateway at {gateway.url} refused the "
                                 "request (429): the budget is spent")


@anyio
async def test_the_gateways_rate_limit_is_named_as_such(gateway: Gateway) -> None:
    llm = LLM(settings(gateway, "limited"))
    async for _ in llm.stream([{"role": "user", "content": "one"}]):
        pass  # the one request a minute the gateway allows
    with pytest.raises(LLMError) as caught:
        async for _ in llm.stream([{"role": "user", "content": "two"}]):
            pass
    error = caught.value
    assert error.kind == "rate_limit" and error.retriable
    assert str(error).startswith("rate limited by the LiteLLM gateway at ")
    assert "(429): No deployments" in str(error)
    assert "litellm." not in str(error) and "{\"" not in str(error)


def test_each_request_carries_the_session_id(gateway: Gateway, key: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The session id reaches the proxy's logging (what its spend logs group by). The
    sending is core/llm's (the request); this checks what the proxy receives."""
    session = tmp_path / "talk.jsonl"
    before = len(gateway.recorded())
    for prompt in ("first", "second"):
        assert main(["run", "--model", "litellm_proxy/beta", "--api-base", gateway.url,
                     "--session", str(session), prompt]) == 0
    capsys.readouterr()
    seen = gateway.wait_recorded(before + 2)[before:]
    assert len(seen) == 2
    assert {s["metadata"].get("session_id") for s in seen} == {session.stem}


@anyio
async def test_the_model_picker_offers_the_gateways_models(gateway: Gateway,
                                                          tmp_path: Path) -> None:
    """``/model`` on a gateway model lists what the proxy serves, learnt after it opens."""
    from textual.widgets import OptionList

    from tests.ui.kit import SIZE, make_app, ready, send, shown, until
    from tui_agent.ui.screens.picker import Picker

    config = tmp_path / "c.toml"
    config.write_text(f'[model]\nname = "litellm_proxy/alpha"\napi_base = "{gateway.url}"\n'
                      f'api_key = "{MASTER_KEY}"\n', encoding="utf-8")
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/model")
        await shown(pilot, app, Picker)
        options = app.screen.query_one(OptionList)

        def offered() -> list[str]:
            return [str(options.get_option_at_index(i).id) for i in range(options.option_count)]

        await until(pilot, lambda: "litellm_proxy/beta" in offered(), what="the gateway's models")
        assert offered()[0] == "litellm_proxy/alpha"
        assert {"litellm_proxy/beta", "litellm_proxy/limited"} <= set(offered())
        await app.action_quit()


@anyio
@pytest.mark.parametrize("cache", [True, False])
async def test_a_claude_model_behind_the_gateway_reads_its_prompt_from_the_cache(
        gateway: Gateway, claude_behind: AnthropicFake, cache: bool) -> None:
    """The breakpoints go through the proxy to its Anthropic deployment (system, tools,
    the latest message), so the second request reads the first from the cache."""
    system = {"role": "system", "content": " ".join(f"rule {i} ({cache})." for i in range(900))}
    tools = [{"type": "function", "function": {
        "name": "t__add", "description": "Add.",
        "parameters": {"type": "object", "properties": {}}}}]
    llm = LLM(settings(gateway, "claude-team", prompt_cache=cache))
    before = len(claude_behind.requests)
    first = [system, {"role": "user", "content": "a"}]
    for messages in (first, [*first, {"role": "assistant", "content": "ok"},
                             {"role": "user", "content": "b"}]):
        async for _ in llm.stream(messages, tools):
            pass
    bodies = [r.body for r in claude_behind.requests[before:]]
    usages = claude_behind.usages[-2:]
    assert len(bodies) == 2
    marks = json.dumps(bodies[1]).count("cache_control")
    if cache:
        assert marks == 3 and usages[1]["cache_read_input_tokens"] > 1000
    else:
        assert marks == 0 and usages[1]["cache_read_input_tokens"] == 0
