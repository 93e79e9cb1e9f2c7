"""DPoP and workload identity through the real commands (``tui-agent login``, ``run``,
``servers``, ``logout``: subprocesses, the scripted model calling the guarded server's
tools), against the OAuth fake with tests/fakes/dpop_guard.py in front: the key is kept
with the tokens and only there (not in the session, the logs, the output, nor sent to the
model), logout forgets it, and a workload's JWT from ``${VAR}`` logs in by itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_dpop import noted, server
from tests.test_login import config, token_file, tui_agent
from tests.test_workload import Platform
from tui_agent.tools.auth.dpop import RECORD, DpopKey

pytestmark = pytest.mark.slow


def run(conf: Path, fake_llm: FakeLLM, env: dict[str, str] | None = None
        ) -> tuple[int, list[dict[str, object]], str]:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("guarded__whoami", {}, id="w1"),
                                    FakeToolCall("guarded__echo_auth", {}, id="e1")]),
                  Reply(text="done"))
    done = tui_agent("run", "--config", str(conf), "--model", "openai/fake-model",
                     "--api-base", fake_llm.base_url, "--output", "jsonl", "who am I?",
                     env=env)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stdout + done.stderr


def results(events: list[dict[str, object]]) -> list[str]:
    return [("error: " if e["is_error"] else "") + str(e["text"]) for e in events
            if e["type"] == "tool_result"]


def test_run_proves_every_request_and_the_key_stays_in_the_store(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    with server(tmp_path, "--dpop", "ES256", "--dpop-nonce", "both") as (url, record):
        conf = config(tmp_path, url, 'auto = ["whoami", "echo_auth"]\n')
        login = tui_agent("login", "guarded", "--config", str(conf))
        assert login.returncode == 0, login.stderr
        report = tui_agent("servers", "--config", str(conf))
        assert "  login: logged in as " in report.stdout and ", DPoP-bound" in report.stdout
        code, events, output = run(conf, fake_llm)
    assert code == 0, output
    said = results(events)
    assert len(said) == 2 and said[0].endswith(" mcp") and said[1] == "you sent Bearer ***"
    kept = json.loads(next(iter(json.loads(token_file().read_text()).values())))
    key = DpopKey.from_record(kept[RECORD])
    assert key is not None
    mcp = [e for e in noted(record, "mcp") if e["scheme"]]
    assert mcp and all(e["scheme"] == "DPoP" and e["jkt"] == key.thumbprint for e in mcp)
    secrets = [kept[RECORD]["jwk"]["d"], kept["tokens"]["access_token"]]
    written = [p for p in (tmp_path / "home").rglob("*") if p.is_file() and p != token_file()]
    assert any(p.suffix == ".jsonl" for p in written)  # the session is among them
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not any(s in text for s in secrets), path
    assert not any(s in output for s in secrets)
    assert not any(s in json.dumps(fake_llm.requests) for s in secrets)
    out = tui_agent("logout", "guarded", "--config", str(conf))
    assert out.stdout == "logged out of guarded\n"
    assert json.loads(token_file().read_text()) == {}  # the key went with the tokens


def test_a_workload_logs_in_with_its_jwt_from_the_environment(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    platform = Platform(tmp_path)
    with server(tmp_path, "--jwt-key", str(platform.public), "--dpop", "ES256") as \
            (url, record):
        jwt = platform.issue(url.removesuffix("/mcp") + "/", "from-env")
        conf = config(tmp_path, url, 'auto = ["whoami", "echo_auth"]\n'
                      '[servers.guarded.oauth]\ngrant = "jwt_bearer"\n'
                      'client_id = "workload"\nassertion = "${WIF_TOKEN}"\n')
        code, events, output = run(conf, fake_llm, env={"WIF_TOKEN": jwt})
    assert code == 0, output
    assert results(events)[0] == "workload mcp", events
    [token] = noted(record, "token")
    assert (token["assertion_jti"], token["token_type"]) == ("from-env", "DPoP")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(jwt in p.read_text(encoding="utf-8", errors="replace") for p in written)
    assert jwt not in output and jwt not in json.dumps(fake_llm.requests)


def test_servers_names_the_assertion_file_it_cannot_read(tmp_path: Path) -> None:
    platform = Platform(tmp_path)
    missing = tmp_path / "var" / "run" / "token"
    with server(tmp_path, "--jwt-key", str(platform.public)) as (url, _):
        conf = config(tmp_path, url, '[servers.guarded.oauth]\ngrant = "jwt_bearer"\n'
                      f'client_id = "workload"\nassertion_file = "{missing}"\n')
        report = tui_agent("servers", "--config", str(conf))
    assert report.returncode == 1
    assert f"the jwt_bearer grant cannot read its assertion_file {missing}: No such file" \
        in report.stdout, report.stdout + report.stderr
