"""What a new user tripped on in ``tui-agent mcp ...`` (tryout 2): a config file that is
not TOML, a bad server entry, a server command given without ``--``, a NAME of two words,
tables wider than the terminal, a failing server's words told twice. Real processes on
real config files; the wide table on a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from tests.mcp_kit import COMMENTED, fake_words, machine
from tests.zygote import command
from tui_agent.config import ConfigError, load
from tui_agent.headless.width import cells
from tui_agent.wiring.mcp_add import AddError, parse_add

pytestmark = pytest.mark.slow

BROKEN = COMMENTED + "oops = \n"
"""A config as the tryout left it: a key with no value on its last line (line 12)."""

VERBS = {"list": ["list"], "get": ["get", "mine"], "remove": ["remove", "mine"],
         "add": ["add", "other", "--no-start", "--", sys.executable, "-V"],
         "add elsewhere": ["add", "other", "--scope", "project", "--no-start", "--",
                           sys.executable, "-V"],
         "import": ["import", "--all"]}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_config_that_is_not_toml_stops_every_mcp_command(tmp_path: Path,
                                                           verb: str) -> None:
    """As ``run`` refuses it: the file, the line, exit 2; never "no servers", never a
    name "not found" in a file that was not read, and nothing written anywhere (a name
    the broken file may hold cannot be checked, so not even another file is)."""
    box = machine(tmp_path, config=BROKEN)
    done = box.mcp(*VERBS[verb])
    assert done.returncode == 2, done.stdout + done.stderr
    assert (f"tui-agent: invalid configuration in {box.user_config}: not valid TOML: "
            "Invalid value (at line 12, column 8)") in done.stderr
    assert "no MCP servers are configured" not in done.stdout
    assert "no server named" not in done.stderr and "warning" not in done.stderr
    assert box.user_config.read_text() == BROKEN
    assert not (box.project / ".tui-agent").exists()


def test_add_creates_the_file_tui_agent_config_names(tmp_path: Path) -> None:
    """``$TUI_AGENT_CONFIG`` names a file not there yet: ``add`` writes it (a file that
    does not exist is no broken file), and ``list`` then reads it."""
    box = machine(tmp_path, config=None)
    target = tmp_path / "fresh" / "config.toml"
    box.env["TUI_AGENT_CONFIG"] = str(target)
    done = box.mcp("add", "t", "--no-start", "--", sys.executable, "-V")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[servers.t]" in target.read_text(encoding="utf-8")
    listed = box.mcp("list")
    assert listed.returncode == 0 and "t" in listed.stdout, listed.stdout + listed.stderr


def test_a_project_json_that_is_not_json_is_named_with_its_line(tmp_path: Path) -> None:
    box = machine(tmp_path)
    (box.project / ".mcp.json").write_text('{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    done = box.mcp("list")
    assert done.returncode == 2
    assert (f"invalid configuration in {box.project / '.mcp.json'}: line 2, column 24: "
            "not valid JSON: Expecting property name enclosed in double quotes"
            ) in done.stderr


@pytest.mark.parametrize("verb", ["mcp", "run"])
def test_a_json_number_past_pythons_limit_is_a_config_error(tmp_path: Path,
                                                            verb: str) -> None:
    """An integer of 5,000 digits: json's own ValueError, not a JSONDecodeError (it was a
    traceback): named as the file that is not valid JSON, with the number's line, exit 2."""
    box = machine(tmp_path)
    (box.project / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x", "n": '
                                           + "9" * 5000 + "}}}")
    if verb == "mcp":
        done = box.mcp("list")
    else:
        done = subprocess.run([*command(), "run", "hi"], cwd=box.project, env=box.env,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert (f"{box.project / '.mcp.json'}: line 1, column 44: not valid JSON: a number of "
            "5000 digits (Python reads at most 4300)") in done.stderr


BAD_ENTRIES = COMMENTED + """
[servers.x]
comand = "npx"

[servers.everything]
command = "npx"
args = "-y @modelcontextprotocol/server-everything"
"""


def test_a_bad_entry_is_worded_as_run_words_it(tmp_path: Path) -> None:
    """``mcp list`` and ``mcp get`` say what ``run`` says of the same file (its lines,
    keys and "did you mean"), not pydantic's own text."""
    box = machine(tmp_path, config=BAD_ENTRIES)
    with pytest.raises(ConfigError) as refused:
        load(box.user_config, project=False)
    said = refused.value.problems
    assert said == ["line 14: servers.x: unknown key 'comand' (did you mean 'command'?)",
                    "line 18: servers.everything.args: expected a valid list (got '-y "
                    "@modelcontextprotocol/server-everything')"]
    listed = box.mcp("list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    row = lines.index(next(ln for ln in lines if ln.startswith("x ")))
    assert lines[row].split()[:4] == ["x", "invalid", "user", f"{box.user_config}:13"]
    assert lines[row + 1] == f"    invalid: {said[0]}"
    assert f"    invalid: {said[1]}" in lines
    assert "Extra inputs" not in listed.stdout and "Input should be" not in listed.stdout
    got = box.mcp("get", "x")
    assert got.returncode == 1
    assert f"  invalid: {said[0]}\n" in got.stdout


def test_a_server_command_without_dashes_is_shown_with_them(tmp_path: Path) -> None:
    box = machine(tmp_path)
    done = box.mcp("add", "t3", "python3", "-m", "tests.fakes.mcp_server")
    assert done.returncode == 2
    assert "unrecognized arguments: -m tests.fakes.mcp_server" in done.stderr
    assert ("put -- before the server's command: tui-agent mcp add t3 -- python3 -m "
            "tests.fakes.mcp_server") in done.stderr
    flag_between = box.mcp("add", "t5", "--no-start", "python3", "x.py")
    assert ("put -- before the server's command: tui-agent mcp add t5 --no-start -- "
            "python3 x.py") in flag_between.stderr
    assert box.user_config.read_text() == COMMENTED


def test_a_name_of_two_words_is_refused_as_such(tmp_path: Path) -> None:
    box = machine(tmp_path)
    done = box.mcp("add", "bad", "name", "--", "x")
    assert done.returncode == 2
    assert "NAME is one word, but 'bad name' came before --" in done.stderr
    assert "not found on PATH" not in done.stderr
    assert box.user_config.read_text() == COMMENTED


@pytest.mark.parametrize(("words", "said"), [
    (["t3", "python3", "-m", "x"], "unknown option -m; put -- before the server's "
                                   "command: mcp add t3 -- python3 -m x"),
    (["bad", "name", "--", "x"], "NAME is one word, but 'bad name' came before --"),
    (["slow", "--startup-timeout", "0", "--", "x"],
     "--startup-timeout 0: give the seconds, more than 0"),
    (["slow", "--startup-timeout", "nan", "--", "x"],
     "--startup-timeout nan: give the seconds, more than 0"),
])
def test_the_apps_mcp_add_says_the_same(words: list[str], said: str) -> None:
    with pytest.raises(AddError) as refused:
        parse_add(words)
    assert said in str(refused.value)


LONG = ("Echo the text back, and say a great deal more about it than any table has room "
        "for: every word of this description is here to overflow the line")


def _table(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(("long ", "  long__"))]


@pytest.mark.parametrize(("columns", "width"), [("80", 80), (None, 100)])
def test_the_tool_table_of_mcp_add_fits_the_width(tmp_path: Path, columns: str | None,
                                                  width: int) -> None:
    """``$COLUMNS`` when set; a fixed width when the output is a pipe. Each row is cut
    with an ellipsis, never left to wrap mid-word."""
    box = machine(tmp_path)
    box.env.pop("COLUMNS", None)
    if columns:
        box.env["COLUMNS"] = columns
    done = box.mcp("add", "long", *fake_words("--description", LONG))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _table(done.stdout)
    assert len(rows) > 10
    assert max(sum(cells(c) for c in row) for row in rows) == width
    echo = next(row for row in rows if row.split()[0] == "long__echo")
    assert echo.endswith("…") and echo.startswith("  long__echo")


def test_servers_fits_the_terminal_it_prints_to(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    added = box.mcp("add", "long", "--no-start", *fake_words("--description", LONG))
    assert added.returncode == 0, added.stderr
    env = {k: v for k, v in box.env.items() if k != "COLUMNS"}
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 72, 0, 0))
    got: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(leader, got))
    reader.start()
    try:
        done = subprocess.run([*command(), "servers"], cwd=box.project, env=env,
                              stdin=subprocess.DEVNULL, stdout=follower,
                              stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(follower)
        reader.join(timeout=30)
        os.close(leader)
    assert done.returncode == 0, done.stderr
    rows = _table(b"".join(got).decode().replace("\r\n", "\n"))
    assert len(rows) > 10
    assert max(sum(cells(c) for c in row) for row in rows) == 72
    assert any(row.endswith("…") for row in rows)


def _read_all(leader: int, got: list[bytes]) -> None:
    """Everything the terminal is sent, until its other end is closed (EIO), for at most
    two minutes (the run itself is bounded so)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not select.select([leader], [], [], 0.5)[0]:
            continue
        try:
            piece = os.read(leader, 4096)
        except OSError:
            return
        if not piece:
            return
        got.append(piece)
