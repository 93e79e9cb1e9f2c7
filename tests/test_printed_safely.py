"""What the command line prints of a hostile config or server (issue 46, items 12, 19-21):
no escape sequence reaches the terminal from a server's name (OSC 52 clipboard writes,
CSI screen clears), and no secret from a server's URL (a password, a token given as the
user name, ``?token=``), its env or its stderr shows in ``servers``, ``run``'s notes (text
and JSONL), ``config --show``, ``mcp list/get/import/remove`` or the untrusted-project
warning. ``main()`` and real processes, on real config files; the servers fail for real
(a port that refuses, a process that exits)."""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.mcp_kit import machine
from tui_agent.cli import main
from tui_agent.config import ConfigError, load
from tui_agent.config.printable import clean, quoted, safe_name
from tui_agent.config.urls import mask_url, url_secrets

HOSTILE = "evil\x1b]52;c;aGk=\x07\x1b[2J\x1b[31mname\x9b1m\x7f\u202e"
"""A server name that writes the clipboard (OSC 52), clears the screen and colours the
rest (CSI, also in its 8-bit form), with a DEL and a bidi override."""
TOML_NAME = json.dumps(HOSTILE)  # a TOML basic string: the escapes are TOML's own
USER_TOKEN = "ghp_abcdefghijklmnop1234"
QUERY_TOKEN = "tok-secret-123456"
PASSWORD = "pass-word-9876"
API_KEY = "keykeykey123"
STDERR_TOKEN = "stderr-secret-55555"
SECRETS = (USER_TOKEN, QUERY_TOKEN, PASSWORD, API_KEY, STDERR_TOKEN)
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e")


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port bound but not listening: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def hostile_config(path: Path, port: int) -> Path:
    path.write_text(
        f'[servers.remote]\nurl = "http://{USER_TOKEN}@127.0.0.1:{port}/sse?token='
        f'{QUERY_TOKEN}&x=1"\ntransport = "sse"\n'
        f'[servers.pw]\nurl = "http://alice:{PASSWORD}@127.0.0.1:{port}/mcp?api_key={API_KEY}"\n'
        f'[servers.{TOML_NAME}]\ncommand = "sh"\n'
        'args = ["-c", "echo token=$MY_TOKEN >&2; exit 3"]\n'
        f'env = {{ MY_TOKEN = "{STDERR_TOKEN}" }}\n', encoding="utf-8")
    return path


def assert_safe(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal:\n{text!r}"
    for secret in SECRETS:
        assert secret not in text, f"{secret} printed:\n{text}"


def test_servers_masks_urls_and_stderr_and_escapes_names(
        tmp_path: Path, refusing_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    config = hostile_config(tmp_path / "c.toml", refusing_port)
    assert main(["servers", "--config", str(config)]) == 1
    out = capsys.readouterr()
    assert_safe(out.out + out.err)
    lines = out.out.splitlines()
    assert f"  error: could not reach http://********@127.0.0.1:{refusing_port}/sse?token=" \
        "********&x=******** (ConnectError: All connection attempts failed)" in lines
    assert f"  error: could not reach http://alice:********@127.0.0.1:{refusing_port}/mcp?" \
        "api_key=******** (ConnectError: All connection attempts failed)" in lines
    assert "  stderr: token=***" in lines  # the server's stderr, masked as run masks it
    assert any(line.startswith(safe_name(HOSTILE) + "  failed  stdio") for line in lines)
    assert "evil\\x1b]52;c;aGk=\\x07\\x1b[2J" in out.out  # shown, never live
    # Item 12: neither remote server uses OAuth (nothing answered): no login line at all.
    assert not any("login:" in line for line in lines), out.out


def test_run_notes_mask_urls_in_text_and_jsonl(
        tmp_path: Path, refusing_port: int, fake_llm: FakeLLM,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = hostile_config(tmp_path / "c.toml", refusing_port)
    run = ["--config", str(config), "run", "--model", "openai/fake-model",
           "--api-base", fake_llm.base_url]
    fake_llm.push(Reply(text="ok"), Reply(text="ok"))
    assert main([*run, "hi"]) == 0
    text = capsys.readouterr()
    assert_safe(text.out + text.err)
    assert "note: MCP server 'remote' is not available: could not reach http://********@" \
        in text.err
    assert f"note: MCP server '{safe_name(HOSTILE)}' is not available" in text.err
    assert main([*run, "--output", "jsonl", "hi"]) == 0
    jsonl = capsys.readouterr().out
    assert_safe(jsonl)
    notices = [json.loads(line)["message"] for line in jsonl.splitlines()
               if json.loads(line)["type"] == "notice"]
    assert any("'pw' is not available" in n for n in notices), notices
    assert_safe("\n".join(notices))  # decoded: no secret hid behind a JSON escape


def test_config_show_hides_url_credentials_and_escapes_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = hostile_config(tmp_path / "c.toml", 9)
    assert main(["config", "--show", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    assert 'url = "http://********@127.0.0.1:9/sse?token=********&x=********"' in out
    assert 'url = "http://alice:********@127.0.0.1:9/mcp?api_key=********"' in out
    assert f"[servers.{quoted(HOSTILE)}]" in out and "\\u009b" in out and "\\u007f" in out


def test_a_header_with_a_line_break_is_refused_naming_server_and_header(
        tmp_path: Path) -> None:
    """An HTTP library would refuse it later and quote the value (a secret) in its error."""
    config = tmp_path / "c.toml"
    config.write_text('[servers.api]\nurl = "http://h.test/mcp"\n'
                      'headers = { X-Api = "ok\\r\\nX-Evil: value-secret-777" }\n')
    with pytest.raises(ConfigError) as caught:
        load(config)
    said = str(caught.value)
    assert f"invalid configuration in {config}: line 3: servers.api.headers.X-Api: a header " \
        "cannot hold a line break (CR or LF)" in said
    assert "value-secret-777" not in said


def test_mcp_commands_print_hostile_names_escaped(tmp_path: Path) -> None:
    box = machine(tmp_path, config=f'[servers.{TOML_NAME}]\ncommand = "x"\n'
                                   f'[servers.tok]\nurl = "http://{USER_TOKEN}@h.test/mcp'
                                   f'?token={QUERY_TOKEN}"\n')
    imported = box.project / "other.json"
    imported.write_text(json.dumps({"mcpServers": {
        HOSTILE: {"command": "x"}, "bad\x1b[1m": {"command": 5},
        "leaky": {"url": f"http://alice:{PASSWORD}@h.test/mcp?api_key={API_KEY}"}}}))
    listing = box.mcp("list")
    got = box.mcp("get", "tok")
    removed = box.mcp("remove", "nosuch")
    shown = box.mcp("import", "--from", str(imported))
    refused = box.mcp("import", "--from", str(imported), safe_name(HOSTILE))
    for done in (listing, got, removed, shown, refused):
        assert_safe(done.stdout + done.stderr)
    assert listing.stdout.startswith(safe_name(HOSTILE) + "  stdio")
    assert "url: http://********@h.test/mcp?token=********" in got.stdout
    assert removed.returncode == 2
    assert f"(the servers: {safe_name(HOSTILE)}, tok)" in removed.stderr
    assert f"cannot import: '{safe_name(HOSTILE)}' is not a server name" in shown.stdout
    assert "bad\\x1b[1m " in shown.stdout
    assert refused.returncode == 2


def test_the_untrusted_project_warning_escapes_names_and_hides_credentials(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        HOSTILE: {"command": "x", "args": ["\x1b]8;;http://evil\x07link"],
                  "env": {"A": "\x1b[2Jb"}},
        "remote": {"url": f"http://{USER_TOKEN}@h.test/mcp?token={QUERY_TOKEN}"}}}))
    monkeypatch.chdir(project)
    assert main(["servers"]) == 0
    err = capsys.readouterr().err
    assert "not trusted yet" in err
    assert_safe(err)
    assert f"server '{safe_name(HOSTILE)}' (.mcp.json" in err
    assert "connect to http://********@h.test/mcp?token=******** (http)" in err


@pytest.mark.parametrize(("url", "printed", "secrets"), [
    (f"https://{USER_TOKEN}@h.test/mcp", "https://********@h.test/mcp", [USER_TOKEN]),
    # A token as the user name with an empty password: the user name is the credential.
    ("http://ghp_abcdefgh1234:@h.test/mcp", "http://********@h.test/mcp",
     ["ghp_abcdefgh1234"]),
    ("https://u:p%40ss@h.test/?sig=a%2Fb&v=1", "https://u:********@h.test/?sig=********&v="
     "********", ["p%40ss", "a%2Fb", "p@ss", "a/b"]),
    # Every value is hidden in print; only a secret-named one is a secret to mask.
    ("https://h.test/mcp?workspace=production&version=2025-03-26&api_key=k1234567",
     "https://h.test/mcp?workspace=********&version=********&api_key=********",
     ["k1234567"]),
    ("https://h.test/cb#access_token=FRAGTOKEN12345&token_type=bearer&state=xyz",
     "https://h.test/cb#access_token=********&token_type=********&state=********",
     ["FRAGTOKEN12345"]),
    ("https://h.test/docs#section-2", "https://h.test/docs#section-2", []),
    # Malformed (urlsplit refuses them): hidden all the same.
    (f"http://{USER_TOKEN}@[::1", "http://********@[::1", [USER_TOKEN]),
    ("http://[::1/mcp?token=MALFORMEDTOKEN123&x=1", "http://[::1/mcp?token=********&x="
     "********", ["MALFORMEDTOKEN123"]),
    ("http://u:pw123456@[::1/mcp#code=abcdef123", "http://u:********@[::1/mcp#code=********",
     ["pw123456", "abcdef123"]),
    ("https://h.test/mcp", "https://h.test/mcp", []),
])
def test_mask_url_hides_a_lone_user_name_as_a_credential(url: str, printed: str,
                                                         secrets: list[str]) -> None:
    """git and curl send a user name given alone (or with an empty password) as the
    credential (a GitHub token). A printed URL hides every query and fragment value;
    the secrets masked everywhere are only the credentials among them."""
    assert mask_url(url) == printed
    assert url_secrets(url) == secrets


def test_the_one_sanitiser() -> None:
    assert clean(f"a{HOSTILE}b\tc\n") == "aevilnameb\tc\n"
    assert safe_name(HOSTILE) == "evil\\x1b]52;c;aGk=\\x07\\x1b[2J\\x1b[31mname\\x9b1m" \
        "\\x7f\\u202e"
    assert safe_name("line\nbreak\ttab") == "line\\nbreak\\ttab"
    assert safe_name("plain-name_1") == "plain-name_1"
    assert all(c.isprintable() for c in quoted(HOSTILE))


def test_masked_streams_write_what_they_are_given_safe() -> None:
    from tui_agent.headless.masked import masked

    sink = io.StringIO()
    stream = masked(sink, frozenset({STDERR_TOKEN}))
    stream.write(f"x {STDERR_TOKEN} \x1b[2Jy\n")
    assert sink.getvalue() == "x *** y\n"
    assert stream.isatty() is False  # the stream's own



FREE_TEXT = ("token=abc123def", "api_key=sk-live-999", "password=hunter22",
             "Authorization: Bearer xyzsecret77")


def test_servers_prints_stderr_once_and_masks_free_text_secrets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failing server's stderr line shows once (not also quoted in the error, here one
    whose retries are paused: "; next try in"), and secrets it writes in free text
    (``token=``, ``api_key=``, ``password=``, a Bearer credential) or takes from its env
    are masked in ``servers`` and in its log file on disk."""
    said = " ".join(FREE_TEXT)
    config = tmp_path / "c.toml"
    config.write_text(
        '[servers.leaky]\ncommand = "sh"\n'
        f'args = ["-c", "echo starting >&2; echo \'auth failed: {said}\' >&2; '
        'echo \\"env: $DB_PASS\\" >&2; exit 3"]\n'
        'env = { DB_PASS = "plain-env-value-42" }\nmax_attempts = 1\nbackoff = 0\n',
        encoding="utf-8")
    assert main(["servers", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    masked = "auth failed: token=*** api_key=*** password=*** Authorization: Bearer ***"
    assert f"  stderr: {masked}" in lines, out
    assert out.count("auth failed") == 1, out  # once: the error does not quote it again
    assert "  error: the server exited; next try in" in out, out
    log = Path(next(line for line in lines if line.startswith("  log: "))[len("  log: "):])
    on_disk = log.read_text(encoding="utf-8")
    assert masked in on_disk and "env: ***" in on_disk, on_disk
    for secret in ("abc123def", "sk-live-999", "hunter22", "xyzsecret77",
                   "plain-env-value-42"):
        assert secret not in out and secret not in on_disk, secret
