"""Small things seen when trying tui-agent as a user (issue 22, item 7): each says what
happened, not something near it."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT, model_for
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_agent import calculator, tool_messages
from tests.zygote import TUI_AGENT
from tui_agent.core.agent import Agent
from tui_agent.core.events import ToolCallStarted, TurnDone
from tui_agent.core.llm import LLM, load_litellm
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.permissions import DenyAll, PendingCall


@pytest.mark.anyio
async def test_invalid_json_arguments_show_as_they_came(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__add", '{"a": 1, "b": ', id="j")]),
                  Reply(text="oops"))
    agent = Agent(LLM(model_for(fake_llm)), calculator(), DenyAll())
    events = [e async for e in agent.run_turn("add")]
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.arguments == {"(unparsed)": '{"a": 1, "b": '}
    assert "not valid JSON" in tool_messages(fake_llm.requests[1])[0]["content"]


@pytest.mark.anyio
async def test_a_headless_deny_says_the_definition_changed() -> None:
    call = PendingCall("c", "s__t", "s", "t", {}, why="its definition (description or "
                       "parameters) changed since it was allowed")
    decision = await DenyAll().decide(call)
    assert decision.reason == ("its definition (description or parameters) changed since it "
                               "was allowed, and this run denies every tool that would ask "
                               "(--approve deny)")


@pytest.mark.anyio
async def test_the_context_error_has_one_period(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=400, error_message="This model's maximum context length is "
                        "8192 tokens. However, your messages resulted in 9001 tokens."))
    with pytest.raises(LLMError) as caught:
        async for _ in LLM(model_for(fake_llm, max_retries=0)).stream(
                [{"role": "user", "content": "x"}]):
            pass
    assert caught.value.kind == "context_window", str(caught.value)
    assert ("9001 tokens. Its context window is 8,192 tokens. Start a new conversation"
            in str(caught.value))
    assert ".." not in str(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize(("model", "cost"), [("openai/fake-model", None),
                                             ("deepseek/priced-test-model", 0.0)])
async def test_a_failed_turn_costs_what_a_reply_of_its_model_would(
        fake_llm: FakeLLM, model: str, cost: float | None) -> None:
    """Unknown for a model litellm has no price for (as its replies are), 0.0 for one it
    has: nothing was billed."""
    load_litellm().register_model({"deepseek/priced-test-model": {
        "max_input_tokens": 8000, "max_output_tokens": 1000, "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6, "litellm_provider": "deepseek", "mode": "chat"}})
    fake_llm.push(Reply(status=401, error_message="bad key"))
    agent = Agent(LLM(model_for(fake_llm, name=model, max_retries=0)), calculator(), DenyAll())
    events = [e async for e in agent.run_turn("hi")]
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "error"
    assert done.usage.cost == cost and done.to_json()["usage"]["cost"] == cost


@pytest.mark.parametrize("command", ["sessions", "export", "mcp list", "mcp get",
                                     "mcp remove"])
def test_every_subcommand_describes_itself(command: str) -> None:
    done = subprocess.run([*TUI_AGENT, *command.split(), "--help"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0
    usage, _, rest = done.stdout.partition("\n\n")
    assert rest.split("\n\n")[0].strip() and not rest.startswith(("positional", "options"))
    assert "write and read" not in done.stdout, "list and get only read --config"
    for line in done.stdout.splitlines():  # every option says what it is for
        assert not line.strip().startswith("--") or len(line.split()) > 2, line


@pytest.mark.parametrize(("argv", "said"), [
    (["servers", "--model", "x"], "unrecognized arguments: --model x"),
    (["stubs", "-c"], "unrecognized arguments: -c"),
    (["config", "--resume", "abc"], "unrecognized arguments: --resume abc"),
    (["login", "--api-base", "http://h", "s"], "unrecognized arguments: --api-base"),
    (["--model", "x", "servers"], "--model does not apply to 'tui-agent servers' (it is for "
                                  "the chat and 'run')"),
    (["-c", "stubs"], "--resume / -c does not apply to 'tui-agent stubs'"),
    (["--code-mode", "sessions"], "--code-mode does not apply to 'tui-agent sessions'"),
    (["--max-depth", "3"], "--max-depth is an option of 'run': tui-agent run --max-depth ... "
                           "PROMPT"),
    (["--output=jsonl", "hello"], "--output is an option of 'run'"),
    # login and logout name their one server: the filters are not theirs.
    (["login", "--servers", "a", "s"], "unrecognized arguments: --servers"),
    (["logout", "s", "--exclude-tools", "t"], "unrecognized arguments: --exclude-tools t"),
    (["--tools", "x", "logout", "s"], "--tools does not apply to 'tui-agent logout'"),
    (["--servers", "x", "mcp", "list"], "--servers does not apply to 'tui-agent mcp'"),
])
def test_a_flag_a_command_does_not_use_is_refused_by_name(
        argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "invalid choice" not in err, err


def test_config_show_still_takes_the_model_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    assert main(["--no-project", "config", "--show", "--model", "openai/from-the-flag"]) == 0
    assert 'name = "openai/from-the-flag"' in capsys.readouterr().out
