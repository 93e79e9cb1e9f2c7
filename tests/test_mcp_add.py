"""``tui-agent mcp add`` end to end: a real process writes the user's config file (its
comments and layout kept byte for byte), starts the server it added once over a real
transport (stdio, streamable HTTP) and prints the ``servers`` report; bad words leave
the file exactly as it was."""

from __future__ import annotations

import os
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from tests.mcp_kit import COMMENTED, fake_words, machine
from tests.reference import free_port, http_server

pytestmark = pytest.mark.slow


def test_a_stdio_server_is_added_after_the_comments_and_its_tools_listed(
        tmp_path: Path) -> None:
    box = machine(tmp_path)
    done = box.mcp("add", "echo", "--auto", "echo", *fake_words("--name", "added"))
    assert done.returncode == 0, done.stderr
    text = box.user_config.read_text()
    assert text.startswith(COMMENTED), "the person's file is kept byte for byte"
    assert "[servers.echo]" in text[len(COMMENTED):]
    server = tomllib.loads(text)["servers"]["echo"]
    assert server["command"] == sys.executable and server["auto"] == ["echo"]
    assert server["args"] == ["-m", "tests.fakes.mcp_server", "--name", "added"]
    lines = done.stdout.splitlines()
    line = text.splitlines().index("[servers.echo]") + 1
    assert lines[0].startswith(f"added echo in {box.user_config}:{line} (user): ")
    assert "echo  connected  stdio" in done.stdout and "(added 1.0" in done.stdout
    assert any(ln.split()[:2] == ["echo__echo", "auto"] for ln in lines)
    assert any(ln.split()[:2] == ["echo__add", "ask"] for ln in lines)


def test_a_remote_server_is_added_with_its_header_hidden(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    port = free_port()
    server = [sys.executable, "-m", "tests.fakes.mcp_server", "--transport", "http",
              "--port", str(port), "--name", "remote"]
    with http_server(server, port, {"PYTHONPATH": str(Path.cwd())}, "/mcp") as url:
        done = box.mcp("add", "web", "--url", url, "--header",
                       "Authorization: Bearer sekrit-token-123")
        shown = box.mcp("get", "web")
    assert done.returncode == 0, done.stderr
    assert "web  connected  http" in done.stdout and "web__echo" in done.stdout
    assert "header Authorization: ********" in done.stdout
    assert ("tip: Authorization is written into the file as given; to keep it out, write "
            "${WEB_AUTHORIZATION} instead and set WEB_AUTHORIZATION in your environment") \
        in done.stdout
    for out in (done.stdout, done.stderr, shown.stdout):
        assert "sekrit-token-123" not in out
    assert 'headers: { Authorization = "********" }' in shown.stdout
    written = tomllib.loads(box.user_config.read_text())["servers"]["web"]
    assert written == {"url": url, "headers": {"Authorization": "Bearer sekrit-token-123"}}


def test_the_urls_password_and_query_values_are_never_printed(tmp_path: Path) -> None:
    """A token in the URL (``user:pw@``, ``?api_key=``) is a secret like a header's: the
    line saying what was added shows the URL as ``mcp get`` does, masked."""
    box = machine(tmp_path)
    url = "https://user:pw123456@h.test/mcp?api_key=sk-SECRET123&mode=x"
    done = box.mcp("add", "q", "--no-start", "--url", url)
    assert done.returncode == 0, done.stderr
    assert "https://user:********@h.test/mcp?api_key=********&mode=********" in done.stdout
    for secret in ("pw123456", "sk-SECRET123"):
        assert secret not in done.stdout + done.stderr
    assert tomllib.loads(box.user_config.read_text())["servers"]["q"] == {"url": url}


def test_a_variable_reference_is_written_as_such_and_its_value_never_shown(
        tmp_path: Path) -> None:
    box = machine(tmp_path)
    box.env["ADDED_TOKEN"] = "value-of-the-token-42"
    done = box.mcp("add", "tok", "--env", "TOKEN=${ADDED_TOKEN}", "--env",
                   "PLAIN=literal-secret-77", *fake_words())
    assert done.returncode == 0, done.stderr
    assert "env TOKEN=${ADDED_TOKEN}" in done.stdout and "env PLAIN=********" in done.stdout
    assert "value-of-the-token-42" not in done.stdout + done.stderr
    assert "literal-secret-77" not in done.stdout + done.stderr
    env = tomllib.loads(box.user_config.read_text())["servers"]["tok"]["env"]
    assert env["TOKEN"] == "${ADDED_TOKEN}"
    passed = box.mcp("add", "passed", "--env", "ADDED_TOKEN", *fake_words())  # as docker -e
    assert passed.returncode == 0, passed.stderr
    assert "env ADDED_TOKEN=${ADDED_TOKEN}" in passed.stdout
    assert "value-of-the-token-42" not in passed.stdout + passed.stderr
    env = tomllib.loads(box.user_config.read_text())["servers"]["passed"]["env"]
    assert env["ADDED_TOKEN"] == "${ADDED_TOKEN}"


def test_a_server_that_fails_to_start_stays_added_and_the_exit_code_says_so(
        tmp_path: Path) -> None:
    """As ``claude mcp add`` does: the entry is kept (the person may be about to fix
    it), the failure is told in the ``servers`` words with how to fix or remove it, and
    the exit code is 1 so a script notices."""
    box = machine(tmp_path)
    done = box.mcp("add", "broken", "--", sys.executable, "-c",
                   "import sys; print('no such module: missing_dep', file=sys.stderr); "
                   "sys.exit(3)")
    assert done.returncode == 1
    assert "broken  failed  stdio  0 tools" in done.stdout
    assert "stderr: no such module: missing_dep" in done.stdout
    report = done.stdout.partition("\n")[2]  # after the line that shows the command
    assert report.count("no such module: missing_dep") == 1, "the server's words once"
    line = box.user_config.read_text().splitlines().index("[servers.broken]") + 1
    assert (f"broken is kept in {box.user_config}:{line}: fix it there, or remove it with "
            "'tui-agent mcp remove broken'") in done.stdout
    assert "broken" in tomllib.loads(box.user_config.read_text())["servers"]


def test_force_replaces_a_server_where_it_stood(tmp_path: Path) -> None:
    box = machine(tmp_path)
    first = box.mcp("add", "mine", "--no-start", "--", sys.executable, "-V")
    assert first.returncode == 2 and "already configured at" in first.stderr
    assert f"{box.user_config}:6" in first.stderr, "the file and line of the one there"
    done = box.mcp("add", "mine", "--force", "--no-start", "--", sys.executable, "-V")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"replaced mine in {box.user_config}:6 (user)")
    text = box.user_config.read_text()
    head, _, tail = COMMENTED.partition("[servers.mine]")
    assert text.startswith(head + "[servers.mine]\n")
    assert text.endswith("\n[agent]\nmax_depth = 7   # deeper than the default\n")
    assert tomllib.loads(text)["servers"]["mine"] == {"command": sys.executable,
                                                       "args": ["-V"]}


BAD = {
    # Said by `mcp add` with its own usage, not the whole program's.
    "an unknown flag": (["x", "--bogus", "--", "echo"],
                        "tui-agent mcp add: error: unrecognized arguments: --bogus"),
    "a command not on PATH": (["x", "--", "no-such-program-here"],
                              "command 'no-such-program-here' was not found on PATH"),
    "a URL where nothing listens": (["x", "--url", "http://127.0.0.1:9/mcp"],
                                    "nothing answers at http://127.0.0.1:9/mcp"),
    "a name that is taken": (["mine", "--", "echo"],
                             "a server named 'mine' is already configured at"),
    "a name with a dot": (["my.server", "--", "echo"], "'my.server' is not a server name"),
    "a command and a URL": (["x", "--url", "http://127.0.0.1:9/", "--", "echo"],
                            "give a command or --url, not both"),
    "nothing to run": (["x"], "say what to run"),
    "an env that is neither": (["x", "--env", "sk-not a name", "--", "echo"],
                               "--env ********: expected KEY=VALUE (or the NAME of a"),
    # A token pasted without its name looks like one: never repeated back.
    "an env NAME that is not set": (["x", "--env", "ghp_R4nd0mT0kenValue1234", "--", "echo"],
                                    "--env ********: expected KEY=VALUE (or the NAME of a "
                                    "variable set in your environment)"),
    "a header for a program": (["x", "--header", "A: b", "--", "echo"],
                               "--header goes with --url"),
    "an ftp URL": (["x", "--url", "ftp://127.0.0.1/"], "is not an http(s) URL"),
    # urlsplit refuses these: named as any other URL that is not one, never a traceback.
    "an unclosed IPv6 address": (["x", "--url", "http://[::1"],
                                 "'http://[::1' is not an http(s) URL"),
    "a port that is no number": (["x", "--url", "http://me:R4nd0mT0kenValue@h:abc/"],
                                 "'http://me:********@h:abc/' is not an http(s) URL"),
    # The config would then not load at all: every command would stop on it.
    "an unset variable": (["x", "--url", "http://127.0.0.1:9/mcp", "--header",
                           "Authorization: Bearer ${NOT_SET_TOKEN_Q}"],
                          "${NOT_SET_TOKEN_Q} is not set in the environment"),
    "unset variables in env and args": (["x", "--env", "A=${NOT_SET_A}", "--", "echo",
                                         "${NOT_SET_B}"],
                                        "${NOT_SET_B}, ${NOT_SET_A} are not set"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_words_are_named_and_the_file_is_left_as_it_was(tmp_path: Path,
                                                            case: str) -> None:
    box = machine(tmp_path)
    before = box.user_config.read_bytes()
    words, said = BAD[case]
    done = box.mcp("add", *words)
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert "R4nd0mT0ken" not in done.stderr
    assert box.user_config.read_bytes() == before
    assert not list(box.user_config.parent.glob(".config.toml.*")), "no temporary file left"


def test_a_path_to_no_file_is_said_to_be_missing_not_off_path(tmp_path: Path) -> None:
    box = machine(tmp_path)
    before = box.user_config.read_bytes()
    done = box.mcp("add", "foo", "--", "/nonexistent/server")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "mcp add foo: the file '/nonexistent/server' does not exist" in done.stderr
    assert "PATH" not in done.stderr
    plain = tmp_path / "server.txt"
    plain.write_text("not a program")
    done = box.mcp("add", "foo", "--", str(plain))
    assert f"the file '{plain}' is not executable" in done.stderr
    assert box.user_config.read_bytes() == before


def test_a_command_found_only_in_our_own_venv_is_written_as_its_full_path(
        tmp_path: Path) -> None:
    """The README's ``.venv/bin/tui-agent`` with the venv active: a program found there
    alone would fail in a shell where it is not, so its full path is what is written."""
    scripts = Path(sysconfig.get_path("scripts"))
    if sys.prefix == sys.base_prefix or not (scripts / "tui-agent").exists():
        pytest.skip("the suite is not running in a virtual environment with tui-agent")
    box = machine(tmp_path)
    box.env["PATH"] = os.pathsep.join([str(scripts), "/usr/bin", "/bin"])
    done = box.mcp("add", "ours", "--no-start", "--", "tui-agent", "acp")
    assert done.returncode == 0, done.stdout + done.stderr
    full = str(scripts / "tui-agent")
    assert tomllib.loads(box.user_config.read_text())["servers"]["ours"] == {
        "command": full, "args": ["acp"]}
    assert (f"note: 'tui-agent' was found only in tui-agent's own virtual environment "
            f"({scripts})") in done.stdout
    box.env["PATH"] = "/usr/bin:/bin"  # the venv not active: the way to it is offered
    done = box.mcp("add", "other", "--no-start", "--", "tui-agent")
    assert done.returncode == 2
    assert ("command 'tui-agent' was not found on PATH; tui-agent's own virtual "
            f"environment has it: give its full path, {full}") in done.stderr
