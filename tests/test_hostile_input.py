"""What a hostile tester fed ``tui-agent`` (issue 46, item 24): JSON nested ~990 deep, an
integer of thousands of digits, a lone surrogate, unclosed ``/*`` comments and a 50 MB
string for the comment-stripping reader, ``mcp import --from`` a FIFO or ``/dev/zero``,
and words of the command line that are not UTF-8. Each is a clear error naming the file
(and line) or the argument, exit 2, within a bound: never a traceback or a hang. Real
processes, real files."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from tests.mcp_kit import machine
from tests.zygote import command
from tui_agent.config import jsonc

pytestmark = pytest.mark.slow

DEEP = '{"mcpServers": {"a": {"command": "x", "extra": ' + "[" * 990 + "]" * 990 + "}}}"

HOSTILE: dict[str, tuple[str | bytes, str]] = {
    "nested 990 deep": (DEEP, "line 1, column 145: not valid JSON: nested more than 100 "
                              "levels deep"),
    "an integer of 5,000 digits": (
        '{"mcpServers": {\n"a": {"command": "x", "timeout": ' + "9" * 5000 + "}}}",
        "line 2, column 34: not valid JSON: a number of 5000 digits (Python reads at "
        "most 4300)"),
    "a lone surrogate": ('{"mcpServers": {\n"evil\\ud800": {"command": "x"}}}',
                         "line 2: a string holds \\ud800, half of a surrogate pair"),
    "an unclosed comment": ('{"mcpServers": {\n  /* never closed\n "a": {"command": "x"}}}',
                            "line 2, column 3: not valid JSON: a /* comment is never "
                            "closed"),
    "a byte that is not UTF-8": (b'{"mcpServers": {\n"a": {"command": "\xff"}}}',
                                 "line 2: not UTF-8 text (byte 0xff)"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_mcp_import_from_a_hostile_file_names_the_file_and_line(tmp_path: Path,
                                                                case: str) -> None:
    box = machine(tmp_path)
    text, said = HOSTILE[case]
    hostile = tmp_path / "hostile.json"
    if isinstance(text, bytes):
        hostile.write_bytes(text)
    else:
        hostile.write_text(text, encoding="utf-8")
    done = box.mcp("import", "--from", str(hostile), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"invalid configuration in {hostile}: {said}" in done.stderr


@pytest.mark.parametrize("verb", ["mcp list", "config --show", "run"])
def test_a_project_mcp_json_nested_990_deep_is_a_config_error(tmp_path: Path,
                                                               verb: str) -> None:
    box = machine(tmp_path)
    (box.project / ".mcp.json").write_text(DEEP, encoding="utf-8")
    done = subprocess.run([*command(), *verb.split(), *(["hi"] if verb == "run" else [])],
                          cwd=box.project, env=box.env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert (f"{box.project / '.mcp.json'}: line 1, column 145: not valid JSON: nested "
            "more than 100 levels deep") in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_import_from_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    """A FIFO would wait for a writer forever; /dev/zero would be read until memory ran
    out. Both are refused at once (the test's timeout bounds the wait)."""
    box = machine(tmp_path)
    source = {"fifo": tmp_path / "pipe", "device": Path("/dev/zero"),
              "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(source)
    done = box.mcp("import", "--from", str(source), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert (f"invalid configuration in {source}: not a regular file (a pipe, a device or "
            "a directory): give a config file") in done.stderr


def test_a_word_that_is_not_utf8_is_named_not_a_traceback(tmp_path: Path) -> None:
    box = machine(tmp_path)
    for words, said in (([b"mcp", b"import", b"caf\xff"], "argument 3, 'caf\\xff'"),
                        ([b"mcp", b"add", b"x", b"--", b"echo", b"\xed\xa0\x80"],
                         "argument 6, '\\xed\\xa0\\x80'"),
                        ([b"-p", b"hi \xff"], "argument 2, 'hi \\xff'")):
        done = subprocess.run([*map(os.fsencode, command()), *words], cwd=box.project,
                              env=box.env, capture_output=True, timeout=60)
        err = done.stderr.decode("utf-8", "replace")
        assert done.returncode == 2, err
        assert f"tui-agent: error: {said}, is not UTF-8 text: give it in UTF-8" in err
        assert "Traceback" not in err


def test_the_comment_reader_is_linear_in_time_and_memory() -> None:
    """125 KB of unclosed ``/*`` took 21 s (backtracking patterns); a 50 MB string took
    6.1 GB. Both bounded now: the first fails at once, the second parses in one pass."""
    started = time.monotonic()
    with pytest.raises(json.JSONDecodeError, match="a /\\* comment is never closed"):
        jsonc.loads("/*x\n" * 31_250)
    assert time.monotonic() - started < 2
    closed = '{"a": 1, ' + "/* note */ // line\n" * 6_000 + "}"
    started = time.monotonic()
    assert jsonc.loads(closed) == {"a": 1}
    assert time.monotonic() - started < 2
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    big = '{"a": "' + "x" * 50_000_000 + '", /* c */ "b": [1, 2,],}'
    assert jsonc.loads(big)["b"] == [1, 2]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 600, f"{grown_mb:.0f} MB for a 50 MB string"
    del big


def test_importing_many_servers_parses_the_config_a_bounded_number_of_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,500 servers took 78 s: the growing file was parsed twice per server added (and
    each name looked up by reading every file again). Now a bounded number of parses,
    whatever the count, and the file holds them all, each at its header's line."""
    import tomllib

    from tui_agent.config import server_edit

    config = tmp_path / "config.toml"
    config.write_text('# mine\n[model]\nname = "openai/x"\n', encoding="utf-8")
    parses = 0
    real = tomllib.loads

    def counted(text: str) -> dict[str, object]:
        nonlocal parses
        parses += 1
        return real(text)

    monkeypatch.setattr(tomllib, "loads", counted)
    tables = [(f"s{i}", {"command": "echo", "args": ["a", str(i)], "env": {"K": "v"}})
              for i in range(1_500)]
    lines = server_edit.add_servers(config, tables, replace=False)
    assert parses <= 3, parses
    text = config.read_text(encoding="utf-8")
    assert text.startswith('# mine\n[model]\nname = "openai/x"\n\n[servers.s0]\n')
    assert len(real(text)["servers"]) == 1_500
    rows = text.splitlines()
    assert all(rows[line - 1] == f"[servers.s{i}]" for i, line in enumerate(lines))
    finder = server_edit.place_finder([("user", config)])
    parses = 0
    assert [str(finder(f"s{i}")[0]) for i in (0, 1_499)] == [
        f"{config}:{lines[0]}", f"{config}:{lines[-1]}"]
    assert parses == 0  # the file was read once, when the finder was made


def test_mcp_import_of_1500_servers_ends_in_bounded_time(tmp_path: Path) -> None:
    box = machine(tmp_path)
    source = tmp_path / "many.json"
    source.write_text(json.dumps({"mcpServers": {
        f"s{i}": {"command": "echo", "args": [str(i)]} for i in range(1_500)}}))
    done = box.mcp("import", "--from", str(source), "--all", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("imported s") == 1_500
    listed = box.mcp("import", "--from", str(source), timeout=120)
    assert listed.stdout.count("already configured at") == 1_500
