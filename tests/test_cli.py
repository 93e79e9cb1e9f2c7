"""``tui-agent`` as a user runs it: the headless contract, exit codes, sessions, export."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.zygote import TUI_AGENT
from tui_agent.cli import main
from tui_agent.config import paths
from tui_agent.core.session import load

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def keep_signals() -> Iterator[None]:
    before = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, before)


@pytest.fixture(autouse=True)
def piped_stdin(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    stdin = io.StringIO("")
    monkeypatch.setattr(sys, "stdin", stdin)
    return stdin


def cli(fake: FakeLLM, *args: str) -> list[str]:
    return ["run", "--model", "openai/fake-model", "--api-base", fake.base_url, *args]


def test_run_prints_the_reply(fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="Paris is the capital."))
    assert main(cli(fake_llm, "capital", "of", "France?")) == 0
    out = capsys.readouterr()
    assert out.out == "Paris is the capital.\n"
    assert fake_llm.requests[0]["messages"][-1] == {"role": "user",
                                                    "content": "capital of France?"}


def test_jsonl_output_is_the_event_contract(fake_llm: FakeLLM,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="one two", chunk_chars=4))
    assert main(cli(fake_llm, "--output", "jsonl", "count")) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "session" and types[-1] == "done"
    assert set(types[1:-1]) == {"context", "text"} and types[1] == "context"
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "one two"
    done = events[-1]
    assert done["reason"] == "end"
    assert {"type": "context", **done["context"]} == events[1]  # the turn's last request
    assert done["context"]["tokens"] > 0 and done["context"]["window"] is None
    assert set(done["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens", "cost",
                                  "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}
    assert done["usage"]["cost"] is None


def test_prompt_from_stdin(fake_llm: FakeLLM, piped_stdin: io.StringIO) -> None:
    fake_llm.push(Reply(text="a"), Reply(text="b"))
    piped_stdin.write("from a pipe\n")
    piped_stdin.seek(0)
    assert main(cli(fake_llm, "-")) == 0
    assert fake_llm.requests[0]["messages"][-1]["content"] == "from a pipe\n"
    piped_stdin.seek(0)
    assert main(cli(fake_llm)) == 0  # no PROMPT and stdin is not a terminal: read it
    assert fake_llm.requests[1]["messages"][-1]["content"] == "from a pipe\n"


def test_resume_continues_the_conversation(fake_llm: FakeLLM,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="Noted: 42."), Reply(text="It was 42."), Reply(text="Yes."))
    assert main(cli(fake_llm, "remember 42")) == 0
    assert main(cli(fake_llm, "--resume", "what was it?")) == 0
    sent = fake_llm.requests[1]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == ["remember 42", "Noted: 42.",
                                                                  "what was it?"]
    assert main(cli(fake_llm, "-c", "sure?")) == 0
    sessions = list(paths.sessions_dir().glob("*.jsonl"))
    assert len(sessions) == 1
    assert len(load(sessions[0]).messages) == 6


def test_resume_by_id_and_session_file(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(text="first"), Reply(text="second"), Reply(text="third"))
    target = tmp_path / "mine.jsonl"
    assert main(cli(fake_llm, "--session", str(target), "one")) == 0
    assert main(cli(fake_llm, "--session", str(target), "two")) == 0
    assert [m["content"] for m in load(target).messages] == ["one", "first", "two", "second"]
    assert main(cli(fake_llm, "--resume", str(target), "three")) == 0
    assert len(load(target).messages) == 6


def test_no_model_shows_the_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "hello"]) == 2
    err = capsys.readouterr().err
    assert "no model is configured" in err
    assert "OPENAI_API_KEY" in err and "ollama/" in err and "--api-base" in err
    assert main([]) == 2  # without a terminal, bare tui-agent is a script's run
    assert "no model is configured" in capsys.readouterr().err


def test_piped_input_without_a_model_fails() -> None:
    """`echo hi | tui-agent` with no model: the help, and exit 2 as `run` gives (a script
    must not take it for an answer)."""
    done = subprocess.run([*TUI_AGENT], input=b"hi\n", capture_output=True, timeout=120)
    assert done.returncode == 2, done
    assert b"no model is configured" in done.stderr and b"Traceback" not in done.stderr


def test_bad_config_exits_2_naming_file_and_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[model]\nname = "openai/x"\ntemprature = 0.3\n')
    assert main(["run", "--config", str(cfg), "hi"]) == 2
    err = capsys.readouterr().err
    assert str(cfg) in err and "line 3" in err and "did you mean 'temperature'" in err
    assert "Traceback" not in err
    # flags before the command count too
    assert main(["--config", str(tmp_path / "missing.toml"), "run", "hi"]) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_missing_api_key_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--model", "openai/gpt-4o-mini", "hi"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_unreachable_api_base_exits_1(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[model]\nname = "openai/x"\napi_base = "http://127.0.0.1:{port}/v1"\n'
                   "max_retries = 1\nretry_backoff = 0.01\n")
    assert main(["run", "--config", str(cfg), "hi"]) == 1
    err = capsys.readouterr().err
    assert f"cannot reach openai at http://127.0.0.1:{port}/v1: connection refused" in err
    assert "retry 1/1" in err


def test_stream_cut_exits_1_and_keeps_the_text(fake_llm: FakeLLM,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="abcdefghijkl", chunk_chars=3, cut_after=3))
    assert main(cli(fake_llm, "x")) == 1
    out = capsys.readouterr()
    assert out.out == "abcdef\n"
    assert "cut off mid-stream" in out.err


def test_untrusted_text_is_cleaned_and_secrets_masked(fake_llm: FakeLLM, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-live-abcdef123456")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                   'api_key_env = "MY_KEY"\n')
    fake_llm.push(Reply(text="key sk-live-abcdef123456 \x1b]52;c;aGk=\x07 \x1b[2J\u202edone",
                        chunk_chars=200), Reply(text="again sk-live-abcdef123456"))
    assert main(["run", "--config", str(cfg), "leak it"]) == 0
    assert capsys.readouterr().out == "key ***  done\n"
    assert main(["run", "--config", str(cfg), "--output", "jsonl", "again"]) == 0
    out = capsys.readouterr().out
    assert "sk-live" not in out and "***" in out
    assert all("sk-live" not in p.read_text() for p in paths.sessions_dir().glob("*.jsonl"))


def test_sessions_list_and_export(fake_llm: FakeLLM, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 0
    assert "no conversations yet" in capsys.readouterr().out
    fake_llm.push(Reply(text="Hello **there**."))
    assert main(cli(fake_llm, "greet me")) == 0
    capsys.readouterr()
    assert main(["sessions"]) == 0
    listing = capsys.readouterr().out
    session_id = listing.split()[0]
    assert "greet me" in listing and "openai/fake-model" in listing and "2 msgs" in listing
    assert main(["export", session_id[:10]]) == 0
    md = capsys.readouterr().out
    assert "## You\n\ngreet me" in md and "Hello **there**." in md
    target = tmp_path / "out.md"
    assert main(["export", session_id, "-o", str(target)]) == 0
    assert target.read_text() == md
    assert main(["export", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err


def test_config_path_and_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(paths.default_config_file())
    with pytest.raises(SystemExit) as info:
        main(["run", "--output", "xml", "hi"])
    assert info.value.code == 2
    assert main(["run", "--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1",
                 "--max-depth", "0", "hi"]) == 2


def test_module_entry_point_and_version() -> None:
    out = subprocess.run([*TUI_AGENT, "--version"], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert out.stdout.startswith("tui-agent ")


def test_jsonl_masks_secrets_even_when_json_escapes_them(fake_llm: FakeLLM, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("ODD_KEY", 'sk-"quoted"\\key')
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                   'api_key_env = "ODD_KEY"\n')
    fake_llm.push(Reply(status=401, error_message='rejected key sk-"quoted"\\key'))
    assert main(["run", "--config", str(cfg), "--output", "jsonl", "hi"]) == 1
    out = capsys.readouterr().out
    assert "quoted" not in out and "***" in out


def test_configured_servers_are_not_silently_ignored(fake_llm: FakeLLM, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A server that cannot start is named, with why, and the turn still runs."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('[servers.ghost]\ncommand = "no-such-server-cmd"\n'
                   '[servers.off]\ncommand = "x"\ndisabled = true\n')
    fake_llm.push(Reply(text="ok"))
    assert main(["--config", str(cfg), *cli(fake_llm, "hi")]) == 0
    err = capsys.readouterr().err
    assert "note: MCP server 'ghost' is not available: command not found: no-such-server-cmd" \
        in err
    assert "off" not in err

def test_p_is_the_short_form_of_run(fake_llm: FakeLLM,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``tui-agent -p PROMPT``, as Claude Code and gemini-cli spell it: one turn headless,
    with run's flags before and after it."""
    fake_llm.push(Reply(text="Paris."), Reply(text="Rome."))
    assert main(["--model", "openai/fake-model", "-p", "capital of France?",
                 "--api-base", fake_llm.base_url]) == 0
    assert capsys.readouterr().out == "Paris.\n"
    assert main(["--print", "capital of Italy?", "--model", "openai/fake-model",
                 "--api-base", fake_llm.base_url, "--output", "jsonl"]) == 0
    assert '"type": "done"' in capsys.readouterr().out
    assert [r["messages"][-1]["content"] for r in fake_llm.requests] == [
        "capital of France?", "capital of Italy?"]


def test_config_is_a_layer_and_config_only_reads_that_file_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[model]\nname = "openai/user-model"\ntemperature = 0.25\n')
    only = tmp_path / "only.toml"
    only.write_text('[model]\nname = "openai/only-model"\n')
    monkeypatch.setenv(paths.CONFIG_ENV, str(user))
    with pytest.raises(SystemExit):
        main(["--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "one more config file, read on top of your user config" in said
    assert "--config-only FILE read this config file instead of your user config" in said
    assert main(["config", "--show", "--config", str(only)]) == 0
    layered = capsys.readouterr().out
    assert "openai/only-model" in layered and "temperature = 0.25" in layered
    assert main(["config", "--show", "--config-only", str(only)]) == 0
    alone = capsys.readouterr().out
    assert "openai/only-model" in alone and "0.25" not in alone
    assert str(user) not in alone
    assert os.environ[paths.CONFIG_ENV] == str(user)  # put back once the command ends
    with pytest.raises(SystemExit):
        main(["config", "--show", "--config", str(only), "--config-only", str(only)])
    assert "not both" in capsys.readouterr().err


def test_config_show_labels_each_layer_by_what_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The header of ``config --show`` names each file's layer as the person gave it:
    ``--config-only`` (not "user": the user config is not read then), ``--config``, the
    user config, the project's."""
    user = tmp_path / "user.toml"
    user.write_text('[model]\nname = "openai/user-model"\n')
    other = tmp_path / "other.toml"
    other.write_text('[model]\nname = "openai/other-model"\n')
    proj = tmp_path / "proj"
    (proj / ".tui-agent").mkdir(parents=True)
    (proj / ".tui-agent" / "config.toml").write_text("[agent]\nmax_depth = 4\n")
    monkeypatch.setenv(paths.CONFIG_ENV, str(user))
    monkeypatch.chdir(proj)

    def layers(*flags: str) -> list[tuple[str, str]]:
        assert main(["config", "--show", *flags]) == 0
        header = capsys.readouterr().out.split("\n\n")[0].splitlines()
        return [(line.split()[1], line.split()[2]) for line in header
                if line.startswith("#   ") and "(built in)" not in line]

    assert layers("--config-only", str(other)) == [("--config-only", str(other))]
    assert layers("--config", str(other)) == [
        ("user", str(user)), ("project", str(proj / ".tui-agent" / "config.toml")),
        ("--config", str(other))]
