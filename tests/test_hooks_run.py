"""Hooks end to end in ``tui-agent run`` (the command line's own entry point, the scripted
LLM, the real MCP server of tests/fakes/mcp_server.py): PreToolUse denies, allows and
rewrites calls (each call of a code-mode script too), PostToolUse adds to what the model
reads, UserPromptSubmit keeps a prompt from being sent, Stop sends the model back once, and
the session events fire; a bad hook config refuses the run with file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e_kit import entry_point, ok, run, write_config
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.hook_kit import decider, guard, hooks_toml, script, seen

_ = entry_point


def config(tmp_path: Path, fake: FakeLLM, hooks: str) -> Path:
    path = write_config(tmp_path / "config.toml", "openai/fake-model", fake.base_url)
    path.write_text(path.read_text() + "\n" + hooks)
    return path


def call(name: str, arguments: dict[str, object], call_id: str = "c1") -> Reply:
    return Reply(tool_calls=[FakeToolCall(name, arguments, id=call_id)])


def said_to_model(fake: FakeLLM, index: int) -> str:
    return json.dumps(fake.requests[index]["messages"])


def test_a_shell_guard_blocks_a_call_and_the_model_reads_why(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    hook = guard(tmp_path)
    path = config(tmp_path, fake_llm, hooks_toml("PreToolUse", str(hook), "mcp__t__.*"))
    fake_llm.push(call("t__echo", {"text": "a forbidden word"}),
                  call("t__add", {"a": 2, "b": 3}, "c2"), Reply(text="done"))
    result = ok(run(capsys, path, "go"))
    approvals = result.of("approval")
    assert (approvals[0]["decision"], approvals[0]["by"]) == ("denied", f"hook: {hook}")
    assert approvals[1]["decision"] != "denied"
    assert approvals[0]["reason"] == "Blocked: the input mentions a forbidden word"
    results = result.of("tool_result")
    assert results[0]["is_error"] and "A hook denied this call" in results[0]["text"]
    assert "Blocked: the input mentions a forbidden word" in said_to_model(fake_llm, 1)
    assert [(r["is_error"], r["text"]) for r in results[1:]] == [(False, "5")]
    inputs = seen(tmp_path)
    assert [(i["tool_name"], i["tool_input"], i["tool_use_id"]) for i in inputs] == [
        ("mcp__t__echo", {"text": "a forbidden word"}, "c1"),
        ("mcp__t__add", {"a": 2, "b": 3}, "c2")]
    assert inputs[0]["transcript_path"] == result.of("session")[0]["path"]
    assert inputs[0]["session_id"] == result.session


def test_a_python_hooks_allow_runs_a_call_the_gate_would_deny_with_new_arguments(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    hook = decider(tmp_path, "allow", "echo is safe", updated={"text": "rewritten"})
    path = config(tmp_path, fake_llm, hooks_toml("PreToolUse", f"python3 {hook}",
                                                 "mcp__t__echo"))
    fake_llm.push(call("t__echo", {"text": "original"}), Reply(text="done"))
    result = ok(run(capsys, path, "go", "--approve", "deny"))
    (approval,) = result.of("approval")
    assert (approval["decision"], approval["by"]) == ("auto", f"hook: python3 {hook}")
    assert [r["text"] for r in result.of("tool_result")] == ["rewritten"]


def test_every_call_of_a_code_mode_script_passes_pre_tool_use(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    hook = guard(tmp_path)
    path = config(tmp_path, fake_llm, hooks_toml("PreToolUse", str(hook)))
    code = 'x = t.add(a=1, b=2)\ny = t.echo(text="forbidden")\nresult = x'
    fake_llm.push(call("executeToolCode", {"code": code}, "s1"), Reply(text="done"))
    result = ok(run(capsys, path, "go", "--code-mode"))
    assert [(i["tool_name"], i["tool_use_id"]) for i in seen(tmp_path)] == [
        ("mcp__t__add", "s1.1"), ("mcp__t__echo", "s1.2")]
    by_id = {a["id"]: a for a in result.of("approval")}
    assert by_id["s1.2"]["decision"] == "denied"
    assert by_id["s1.2"]["by"] == f"hook: {hook}"
    assert "Blocked: the input mentions a forbidden word" in said_to_model(fake_llm, 1)


def test_post_tool_use_block_and_context_reach_the_model(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    post = script(tmp_path, "post.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                  "echo '{\"decision\": \"block\", \"reason\": \"lint failed: fix it\"}'\n")
    path = config(tmp_path, fake_llm, hooks_toml("PostToolUse", str(post), "mcp__t__add"))
    fake_llm.push(call("t__add", {"a": 2, "b": 3}), Reply(text="done"))
    result = ok(run(capsys, path, "go"))
    assert result.of("tool_result")[0]["text"] == "5\n\n[PostToolUse hook] lint failed: fix it"
    assert "lint failed: fix it" in said_to_model(fake_llm, 1)


def test_user_prompt_submit_blocks_a_prompt_and_adds_context(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    gate = script(tmp_path, "prompt.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                  "if echo \"$INPUT\" | grep -q 'password'; then\n"
                  "  echo 'Prompt mentions a password' >&2\n  exit 2\nfi\n"
                  "echo 'The current branch is main.'\n")
    path = config(tmp_path, fake_llm, hooks_toml("UserPromptSubmit", str(gate)))
    refused = run(capsys, path, "my password is hunter2")
    assert refused.code == 0 and fake_llm.requests == []
    assert any("Prompt mentions a password" in n["message"] for n in refused.of("notice"))
    fake_llm.push(Reply(text="ok"))
    ok(run(capsys, path, "which branch?"))
    assert "The current branch is main." in said_to_model(fake_llm, 0)


def test_a_stop_hook_sends_the_model_back_once_and_session_events_fire(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    record = script(tmp_path, "log.py", "#!/usr/bin/env python3\nimport json, sys\n"
                    "data = json.load(sys.stdin)\n"
                    f"open({str(log)!r}, 'a').write(data['hook_event_name'] + ' '"
                    " + str(data.get('source') or data.get('reason') or "
                    "data.get('stop_hook_active', '')) + '\\n')\n"
                    "if data['hook_event_name'] == 'Stop' and not data['stop_hook_active']:\n"
                    "    print(json.dumps({'decision': 'block', 'reason': 'run the tests'}))\n")
    hooks = "".join(hooks_toml(event, str(record)) for event in (
        "SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"))
    path = config(tmp_path, fake_llm, hooks)
    fake_llm.push(Reply(text="finished"), Reply(text="tests pass"))
    result = ok(run(capsys, path, "go"))
    assert result.text() == "finishedtests pass"
    assert "A Stop hook asks you to go on before ending your turn: run the tests" in \
        said_to_model(fake_llm, 1)
    assert log.read_text().splitlines() == [
        "SessionStart startup", "UserPromptSubmit ", "Stop False", "Stop True",
        "SessionEnd other"]


def test_a_matcher_that_does_not_compile_refuses_the_run(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    path = config(tmp_path, fake_llm, hooks_toml("PreToolUse", "true", "mcp__t__(add"))
    result = run(capsys, path, "go")
    assert result.code == 2 and fake_llm.requests == []
    assert f"invalid configuration in {path}: line" in result.err
    assert "matcher 'mcp__t__(add' is not a valid regular expression" in result.err


def test_continue_false_stops_the_turn_with_its_reason(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    stop = script(tmp_path, "stop.sh", "#!/bin/bash\nINPUT=$(cat)\n"
                  "echo '{\"continue\": false, \"stopReason\": \"enough for today\"}'\n")
    path = config(tmp_path, fake_llm, hooks_toml("PreToolUse", str(stop)))
    fake_llm.push(call("t__add", {"a": 2, "b": 3}), Reply(text="never asked"))
    result = run(capsys, path, "go")
    assert result.code == 0 and len(fake_llm.requests) == 1
    assert result.of("tool_result")[0]["is_error"]
    assert any(n["message"] == "the turn was stopped by a hook: enough for today"
               for n in result.of("notice"))


def test_a_projects_hook_never_runs_before_the_project_is_trusted(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "clone"
    (project / ".tui-agent").mkdir(parents=True)
    ran = tmp_path / "ran"
    (project / ".tui-agent" / "config.toml").write_text(
        hooks_toml("UserPromptSubmit", f"touch {ran}")
        + hooks_toml("SessionStart", f"touch {ran}"))
    monkeypatch.chdir(project)
    path = config(tmp_path, fake_llm, "")
    fake_llm.push(Reply(text="hello"), Reply(text="hello again"))
    first = ok(run(capsys, path, "hi"))
    assert not ran.exists()
    assert "hooks = UserPromptSubmit: touch" in first.err  # the warning lists them
    ok(run(capsys, path, "hi", "--trust-project"))
    assert ran.exists()


def test_post_tool_use_failure_gets_the_call_and_its_error(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A call that fails fires PostToolUseFailure (not PostToolUse) with Claude Code's
    input: ``tool_name``, ``tool_input``, ``tool_use_id`` and the ``error`` the model
    reads; its context joins that result."""
    log = script(tmp_path, "failed.py", "#!/usr/bin/env python3\nimport json, sys\n"
                 "data = json.load(sys.stdin)\n"
                 f"open({str(tmp_path / 'seen.jsonl')!r}, 'a').write(json.dumps(data) + "
                 "'\\n')\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': "
                 "data['hook_event_name'], 'additionalContext': 'check the types'}}))\n")
    path = config(tmp_path, fake_llm, hooks_toml("PostToolUseFailure", str(log), "mcp__t__add")
                  + hooks_toml("PostToolUse", str(log), "mcp__t__add"))
    fake_llm.push(call("t__add", {"a": "two", "b": 3}, "f1"), Reply(text="sorry"))
    result = ok(run(capsys, path, "go"))
    (failed,) = result.of("tool_result")
    assert failed["is_error"] and failed["text"].endswith(
        "\n\n[PostToolUseFailure hook] check the types")
    (heard,) = seen(tmp_path)
    assert (heard["hook_event_name"], heard["tool_name"], heard["tool_input"],
            heard["tool_use_id"]) == ("PostToolUseFailure", "mcp__t__add",
                                      {"a": "two", "b": 3}, "f1")
    assert heard["error"] and failed["text"].startswith(heard["error"])
    assert "tool_response" not in heard and heard["session_id"] == result.session


def test_no_permission_prompt_notification_where_no_person_is_asked(
        capsys: pytest.CaptureFixture[str], fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``--approve auto`` and ``--approve deny`` answer for the person: the Notification
    hooks of a ``permission_prompt`` do not fire (the app's modal fires them:
    tests/ui/test_hooks_app.py)."""
    told = tmp_path / "told.jsonl"
    notify = script(tmp_path, "notify.sh",
                    f"#!/bin/bash\nINPUT=$(cat)\necho \"$INPUT\" >> {told}\n")
    hooks = hooks_toml("Notification", str(notify)) + hooks_toml("Stop", str(notify))
    path = config(tmp_path, fake_llm, hooks)
    for answer in ("auto", "deny"):
        fake_llm.push(call("t__echo", {"text": "hi"}), Reply(text="done"))
        result = ok(run(capsys, path, "go", "--approve", answer))
        (approval,) = result.of("approval")
        assert approval["by"] == f"--approve {answer}"
    events = [json.loads(line)["hook_event_name"] for line in told.read_text().splitlines()]
    assert events == ["Stop", "Stop"]  # the hooks ran, and no Notification among them
