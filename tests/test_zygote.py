"""The suite's ``tui-agent`` through the zygote (tests/zygote) behaves as the real command:
each test runs the same thing both ways and compares what a caller can see (output,
exit status, environment, working directory, signals), or checks what only the zygote
could get wrong (its child outliving a killed launcher, a request it must refuse)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests import zygote
from tests.fakes.llm_server import FakeLLM, Reply

BOTH = pytest.mark.parametrize("command", [zygote.REAL, zygote.LAUNCH], ids=["real", "zygote"])

pytestmark = pytest.mark.skipif(not zygote.ENABLED, reason="the zygote is off")


def run(command: list[str], *args: str, input: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120,
                          input=input, env=env, cwd=cwd)


def zygote_children() -> list[int]:
    """The processes the zygote forked and has not reaped yet."""
    assert zygote._State.proc is not None
    pid = zygote._State.proc.pid
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def wait_for(check: object, what: str, timeout: float = 180) -> None:
    """Until ``check()``; a bound, not a speed test: a real ``tui-agent run`` imports
    litellm before its request (10 s of CPU on its own; it took over 60 s in a round of the
    suite run beside four other engineers' tests)."""
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_launcher_reaches_the_zygote() -> None:
    """The suite's command is the launcher, and a run through it is a forked child (the
    zygote's log names no refusal): otherwise every test below compares real with real."""
    assert zygote.TUI_AGENT == zygote.LAUNCH and zygote.running()
    before = zygote.log()
    done = run(zygote.TUI_AGENT, "--version")
    assert done.returncode == 0 and done.stdout.startswith("tui-agent ")
    assert "real command" not in zygote.log()[len(before):]
    assert "ready in" in zygote.log()


@BOTH
def test_output_and_exit_codes_match_the_real_command(command: list[str]) -> None:
    usage = run(command, "run", "--no-such-flag")
    assert usage.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in usage.stderr
    assert usage.stderr.startswith("usage: tui-agent")  # argv[0] as the real one has it
    helped = run(command, "servers", "--help")
    assert helped.returncode == 0 and "usage: tui-agent servers" in helped.stdout


@BOTH
def test_environment_cwd_and_stdin_are_the_callers(command: list[str], tmp_path: Path,
                                                   fake_llm: FakeLLM) -> None:
    """A relative ``--config`` is found in the caller's working directory, the session
    lands under the caller's XDG_DATA_HOME, the prompt comes from its stdin."""
    fake_llm.push(Reply(text="seen"))
    (tmp_path / "conf.toml").write_text(
        f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
        'api_key = "sk-x"\nmax_retries = 0\n')
    data = tmp_path / "elsewhere"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    done = run(command, "run", "--config", "conf.toml", input="the question on stdin",
               env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "seen\n"
    assert "the question on stdin" in str(fake_llm.requests[0]["messages"])
    (session,) = (data / "tui-agent" / "sessions").glob("*.jsonl")
    assert "the question on stdin" in session.read_text()


@BOTH
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_command_stops_the_run(command: list[str], signum: int,
                                               fake_llm: FakeLLM) -> None:
    """The launcher relays the signal; the run ends as the real one does (its own
    message and code, 130)."""
    fake_llm.push(Reply(text="never", hang=True))
    proc = subprocess.Popen([*command, "run", "--model", "openai/fake-model", "--api-base",
                             fake_llm.base_url, "hello"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: fake_llm.requests, "the run never reached the model")
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "tui-agent: interrupted" in err


@BOTH
def test_a_sigint_inherited_as_ignored_still_reaches_the_run(command: list[str],
                                                            fake_llm: FakeLLM) -> None:
    """Under a shell's ``cmd &`` SIGINT starts out ignored; ``run`` installs its own
    handler, so a SIGINT still ends it (130). The launcher relays it all the same."""
    fake_llm.push(Reply(text="never", hang=True))
    proc = subprocess.Popen([*command, "run", "--model", "openai/fake-model", "--api-base",
                             fake_llm.base_url, "hello"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        wait_for(lambda: fake_llm.requests, "the run never reached the model")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "tui-agent: interrupted" in err


def hanging_run(fake_llm: FakeLLM) -> subprocess.Popen[bytes]:
    """``run`` through the launcher, waiting on a model that never answers (returned once
    its request has arrived)."""
    fake_llm.push(Reply(text="never", hang=True))
    proc = subprocess.Popen([*zygote.LAUNCH, "run", "--model", "openai/fake-model",
                             "--api-base", fake_llm.base_url, "hello"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: fake_llm.requests, "the run never reached the model")
    except BaseException:
        proc.kill()
        raise
    return proc


def test_a_child_killed_by_a_signal_kills_its_launcher_alike(fake_llm: FakeLLM) -> None:
    """The launcher dies by the signal that killed the child (a SIGKILL of the agent
    reads as ``returncode == -9`` to the test, as with the real process)."""
    proc = hanging_run(fake_llm)
    try:
        (child,) = zygote_children()
        os.kill(child, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == -signal.SIGKILL


def test_a_killed_launcher_takes_its_child_along(fake_llm: FakeLLM) -> None:
    """A test that SIGKILLs the command (a timeout's clean-up) must not leave the forked
    agent running: the zygote sees the launcher's end of the socket close."""
    proc = hanging_run(fake_llm)
    try:
        assert len(zygote_children()) == 1
    finally:
        proc.kill()
        proc.wait(30)
    wait_for(lambda: not zygote_children(), "the forked agent outlived its launcher", 30)


def test_a_new_session_is_the_childs_too(fake_llm: FakeLLM) -> None:
    """``start_new_session=True`` (no controlling terminal): the child leads a session
    of its own, as the real process would."""
    fake_llm.push(Reply(text="never", hang=True))
    proc = subprocess.Popen([*zygote.LAUNCH, "run", "--model", "openai/fake-model",
                             "--api-base", fake_llm.base_url, "hello"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: fake_llm.requests, "the run never reached the model")
        (child,) = zygote_children()
        assert os.getsid(child) == child
        assert os.getsid(0) != child
    finally:
        proc.kill()
        proc.wait(30)


def test_what_the_zygote_cannot_stand_for_runs_the_real_command() -> None:
    """An interpreter setting the zygote started without (here ``PYTHONDEVMODE``): the
    zygote declines, the launcher execs the real command, and the run still works."""
    before = zygote.log()
    done = run(zygote.LAUNCH, "--version", env={**os.environ, "PYTHONDEVMODE": "1"})
    assert done.returncode == 0 and done.stdout.startswith("tui-agent ")
    assert "the real command runs (PYTHONDEVMODE differs)" in zygote.log()[len(before):]


def test_a_program_under_the_worker_reaches_its_zygote() -> None:
    """A process the worker started (as Node starts the conformance client) finds the
    worker's zygote through the environment, not through a socket named by its own pid."""
    script = "from tests.zygote import command; print(command()[-1])"
    done = subprocess.run([zygote.REAL[0], "-c", script], capture_output=True, text=True,
                          cwd=zygote.ROOT, timeout=60)
    assert done.stdout.strip() == zygote.SOCKET


MODULE_BOTH = pytest.mark.parametrize("through", [False, True], ids=["real", "zygote"])


@MODULE_BOTH
def test_a_module_runs_as_python_m_does(through: bool, tmp_path: Path) -> None:
    """``module(NAME, ...)`` is ``python -m NAME ...``: arguments, stdin, stdout, the
    exit status of a failure and its message alike either way (``json.tool`` as NAME)."""
    command = zygote.module("json.tool", "--sort-keys") if through else [
        *zygote.REAL[:2], "json.tool", "--sort-keys"]
    assert (command[-2] == "--module=json.tool") == through
    before = zygote.log()
    good = run(command, input='{"b": 1, "a": [2]}')
    assert good.returncode == 0, good.stderr
    assert good.stdout == '{\n    "a": [\n        2\n    ],\n    "b": 1\n}\n'
    bad = run(command, input="{nope")
    assert bad.returncode == 1 and "Expecting property name" in bad.stderr
    assert "real command" not in zygote.log()[len(before):]


def test_a_fake_server_through_the_zygote_is_its_child_and_ends_with_the_hub(
        tmp_path: Path) -> None:
    """The suite's fake MCP servers come from the zygote (no MCP SDK import of their own),
    serve their tools over the launcher's stdio, and leave no child of the zygote behind
    when the client closes."""
    import anyio

    from tests.conftest import fake_server
    from tui_agent.tools.hub import Hub

    config = fake_server()
    assert config.args[0] == "-S" and "--module=tests.fakes.mcp_server" in config.args
    seen: list[list[int]] = []

    async def go() -> list[str]:
        async with Hub({"f": config}, log_dir=tmp_path, default_timeout=20) as hub:
            await hub.wait_all()
            seen.append(zygote_children())
            return sorted(spec.name for spec in hub.specs())

    names = anyio.run(go)
    assert "f__echo" in names
    assert len(seen[0]) == 1, "the server is one child of the zygote"
    wait_for(lambda: seen[0][0] not in zygote_children(), "the server's end", timeout=30)


def test_without_a_zygote_a_module_is_the_plain_command(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.delenv(zygote.SOCKET_VAR)
    assert zygote.module("tests.fakes.mcp_server", "--x") == [
        zygote.REAL[0], "-m", "tests.fakes.mcp_server", "--x"]
