"""Which of a URL's values are secrets (review of issue 46, items 19-21): a server URL's
ordinary query values (``?workspace=production``) are hidden where the URL is printed,
but are no secret to mask in the prompt, the reply or the session file; its credentials
(``?token=``, a password) are masked everywhere. The model's ``api_base`` is printed
hidden in ``run``'s retry and error lines, and ``servers`` masks a row before it cuts it
to the width. ``main()`` on real config files, the scripted LLM server, real MCP
servers, ports that refuse."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR
from tests.fakes.llm_server import FakeLLM, Reply
from tui_agent.cli import main
from tui_agent.config import paths

TOKEN = "url-token-0123456789"
PASSWORD = "APIBASEPW123"
QUERY_KEY = "APIQUERYKEY1"


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port bound but not listening: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_ordinary_query_values_are_no_secrets_but_a_token_is(
        tmp_path: Path, refusing_port: int, fake_llm: FakeLLM,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``production`` reaches the provider in the prompt, the terminal in the reply and the
    session file as it is; the URL's token is masked in all three; the URL as printed in
    the note hides every value."""
    config = tmp_path / "c.toml"
    config.write_text(f'[servers.work]\nurl = "http://127.0.0.1:{refusing_port}/mcp?'
                      f'workspace=production&version=2025-03-26&token={TOKEN}"\n',
                      encoding="utf-8")
    fake_llm.push(Reply(text=f"production is up at 2025-03-26; the token was {TOKEN}"))
    prompt = f"deploy to production on 2025-03-26 with {TOKEN}"
    assert main(["--config", str(config), "run", "--model", "openai/fake-model",
                 "--api-base", fake_llm.base_url, prompt]) == 0
    out = capsys.readouterr()
    assert "production is up at 2025-03-26; the token was ***" in out.out
    sent = json.dumps(fake_llm.requests[0]["messages"], ensure_ascii=False)
    assert "deploy to production on 2025-03-26 with ***" in sent
    assert f"http://127.0.0.1:{refusing_port}/mcp?workspace=********&version=********" \
        "&token=********" in out.err
    [session] = paths.sessions_dir().glob("*.jsonl")
    saved = session.read_text(encoding="utf-8")
    assert "deploy to production on 2025-03-26" in saved
    assert "production is up at 2025-03-26" in saved
    assert TOKEN not in out.out + out.err + sent + saved


@pytest.mark.parametrize("where", ["config", "flag"])
def test_run_hides_the_api_base_credentials_in_its_retry_and_error_lines(
        tmp_path: Path, refusing_port: int, where: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    base = f"http://bob:{PASSWORD}@127.0.0.1:{refusing_port}/v1?api-key={QUERY_KEY}"
    config = tmp_path / "c.toml"
    config.write_text('[model]\nname = "openai/x"\nmax_retries = 1\nretry_backoff = 0.01\n'
                      + (f'api_base = "{base}"\n' if where == "config" else ""),
                      encoding="utf-8")
    flag = ["--api-base", base] if where == "flag" else []
    assert main(["run", "--config", str(config), *flag, "hi"]) == 1
    out = capsys.readouterr()
    printed = out.out + out.err
    assert PASSWORD not in printed and QUERY_KEY not in printed, printed
    assert f"cannot reach openai at http://bob:********@127.0.0.1:{refusing_port}/v1?" \
        "api-key=********: " in out.err
    assert "retry 1/1" in out.err


def test_servers_masks_a_row_before_it_cuts_it_to_the_width(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A secret in a tool's description where the row is cut: the ellipsis must not leave
    the secret's start behind (masked first, it is ``***`` or cut away)."""
    secret = "desc-secret-" + "0123456789" * 6
    description = f"use {secret} " + "and a tail of words that overflows the row " * 2
    config = tmp_path / "c.toml"
    config.write_text(
        f'[servers.s]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = ["-m", "tests.fakes.mcp_server", "--description", "{description}"]\n'
        f'env = {{ {TAG_VAR} = "{os.environ[TAG_VAR]}", PYTHONPATH = '
        f'{json.dumps(str(ROOT))}, DESC_TOKEN = "{secret}" }}\n', encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["servers", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    echo = next(line for line in out.splitlines() if line.startswith("  s__echo"))
    assert echo.endswith("…"), out
    assert "desc-secret" not in out, out
