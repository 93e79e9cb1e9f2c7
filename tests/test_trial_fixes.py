"""Findings of a new user's trial of the model layer, each through the real litellm path:
a dead port reads "cannot reach PROVIDER at ADDRESS: connection refused" for every
provider (no made-up 500, no Python object, no litellm advice); every error names the
provider, its address and the real status; ``max_tokens`` at or below the thinking budget
is raised, not refused and compacted; Claude's thinking gets a (estimated) token count;
compaction's summary request goes without thinking."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_kit import entry_point, ok, run, write_config
from tests.fakes.anthropic_server import AnthropicFake, Reply, error
from tests.providers import ANTHROPIC_MODEL, anthropic_fake
from tui_agent.config.models import ModelSettings
from tui_agent.core.events import Retrying
from tui_agent.core.llm import LLM
from tui_agent.core.llm.errors import LLMError

_ = (entry_point, anthropic_fake)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port bound but not listening: nothing else can take it while the test runs, and
    a connection to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


async def failure(settings: ModelSettings) -> tuple[LLMError, list[Retrying]]:
    retries: list[Retrying] = []
    with pytest.raises(LLMError) as caught:
        async for item in LLM(settings).stream([{"role": "user", "content": "hi"}]):
            if isinstance(item, Retrying):
                retries.append(item)
    return caught.value, retries


@pytest.mark.anyio
@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash",
                                   "ollama_chat/llama3.1", "openai/gpt-4o"])
async def test_a_dead_port_reads_cannot_reach_for_every_provider(closed_port: int,
                                                                 model: str) -> None:
    base = f"http://127.0.0.1:{closed_port}"
    error, retries = await failure(ModelSettings(
        name=model, api_base=base, api_key="sk-test", max_retries=1, retry_backoff=0.01))
    provider = model.split("/")[0]
    said = f"cannot reach {provider} at {base}: connection refused"
    assert (error.kind, error.retriable, str(error)) == ("unreachable", True, said)
    assert [r.reason for r in retries] == [said]


@pytest.mark.anyio
async def test_a_refusal_names_the_provider_the_address_and_the_status(
        anthropic_fake: AnthropicFake) -> None:
    anthropic_fake.push(error(400, "messages.1.content.0: Invalid `signature` in `thinking` "
                                   "block"), error(429, retry_after=0))
    settings = ModelSettings(name=ANTHROPIC_MODEL, api_base=anthropic_fake.base_url,
                             api_key="sk-fake", max_retries=0)
    refused, _ = await failure(settings)
    assert str(refused) == (f"anthropic at {anthropic_fake.base_url} rejected the request "
                            "(400): messages.1.content.0: Invalid `signature` in `thinking` "
                            "block")
    limited, _ = await failure(settings)
    assert str(limited).startswith(f"rate limited by anthropic at {anthropic_fake.base_url} "
                                   "(429): Number of request tokens")
    assert "Handle with" not in str(limited)


def config(tmp_path: Path, fake: AnthropicFake, **settings: Any) -> Path:
    return write_config(tmp_path / "c.toml", ANTHROPIC_MODEL, fake.base_url,
                        api_key="sk-fake", server=False, **settings)


def test_max_tokens_at_the_thinking_budget_is_raised_with_a_note(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``max_tokens = 4096`` with ``reasoning_effort = "high"`` (litellm's budget 4096):
    Anthropic (the fake) refuses max_tokens not above the budget. The request goes with
    the budget plus the user's 4096, and a note says so; no compaction is tried."""
    anthropic_fake.push(Reply(thinking="Short.", text="Paris."))
    result = ok(run(capsys, config(tmp_path, anthropic_fake, max_tokens=4096,
                                   reasoning_effort="high"), "capital of France?"))
    assert result.text() == "Paris."
    sent = anthropic_fake.requests[0].body
    assert (sent["thinking"]["budget_tokens"], sent["max_tokens"]) == (4096, 8192)
    notes = [e["message"] for e in result.of("notice")]
    assert any("max_tokens 4096 is sent as 8192" in n for n in notes), notes
    assert not result.of("compacted") and len(anthropic_fake.requests) == 1


def test_a_docs_link_naming_the_context_window_is_no_overflow(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal whose docs link says "context-window" (Anthropic's max_tokens one) is
    reported as it is, once: no compaction, no made-up window."""
    anthropic_fake.push(error(400, "`max_tokens` must be greater than "
                                   "`thinking.budget_tokens`. Please consult our "
                                   "documentation at https://docs.claude.com/en/docs/build-"
                                   "with-claude/extended-thinking#max-tokens-and-context-"
                                   "window-size"))
    result = run(capsys, config(tmp_path, anthropic_fake), "capital of France?")
    assert result.code == 1 and len(anthropic_fake.requests) == 1
    message = result.of("error")[0]["message"]
    assert message.startswith(f"anthropic at {anthropic_fake.base_url} rejected the request "
                              "(400): `max_tokens` must be greater than")
    assert "too long" not in message and not result.of("compacted")


def test_claudes_thinking_gets_an_estimated_token_count(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Anthropic reports no count of thinking (its output_tokens include it): the count is
    estimated from the thinking text, never 0 when thinking arrived, never above the
    completion tokens."""
    thought = "Let me think about the capital of France carefully. " * 8
    anthropic_fake.push(Reply(thinking=thought, text="Paris.", output_tokens=200),
                        Reply(thinking="x " * 400, text="Paris.", output_tokens=20))
    cfg = config(tmp_path, anthropic_fake, reasoning_effort="medium")
    usage = ok(run(capsys, cfg, "capital of France?")).usage
    assert 0 < usage["reasoning_tokens"] < usage["completion_tokens"] == 200
    capped = ok(run(capsys, cfg, "again?")).usage
    assert capped["reasoning_tokens"] == capped["completion_tokens"] == 20


def test_the_compaction_request_goes_without_thinking(
        anthropic_fake: AnthropicFake, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``run --resume --compact`` on a thinking model: the turns around it think, the
    summary's request carries no ``thinking`` (no budget spent on a summary)."""
    cfg = config(tmp_path, anthropic_fake, reasoning_effort="medium", temperature=0.2)
    anthropic_fake.push(Reply(thinking="Easy.", text="Paris is the capital."),
                        Reply(thinking="Also easy.", text="Rome is the capital."))
    first = ok(run(capsys, cfg, "capital of France?"))
    ok(run(capsys, cfg, "capital of Italy?", "--resume", first.session))
    anthropic_fake.push(Reply(text="SUMMARY: capitals of France and Italy asked."),
                        Reply(thinking="Spain.", text="Madrid."))
    ok(run(capsys, cfg, "capital of Spain?", "--resume", first.session, "--compact"))
    bodies = [r.body for r in anthropic_fake.requests]
    summary = next(b for b in bodies if "<conversation>" in str(b["messages"]))
    assert "thinking" not in summary and summary["temperature"] == 0.2
    assert all(b["thinking"]["type"] == "enabled" for b in bodies if b is not summary)
