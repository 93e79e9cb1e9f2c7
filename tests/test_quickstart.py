"""The README's quick start, run as a new user runs it: its three commands, word for word,
in a shell on a terminal, in an empty home. The model is the scripted one; the server is
the real ``mcp-server-time`` from PyPI; the person at the terminal answers the approval.

Only what cannot be real here is replaced, around the commands and never in them: the
provider's address (``OPENAI_BASE_URL``, which litellm reads, points at the scripted
model), ``uvx`` (a stand-in on PATH that runs the ``mcp-server-time`` installed in the
test environment instead of fetching it) and ``tui-agent`` (on PATH, as the README's
activated venv puts it; the real command, not the fork server's child, which has no
controlling terminal for the approval to ask on)."""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.test_progress_lines import read_rest
from tests.test_terminal import read_until
from tests.waits import wait_pid
from tests.zygote import REAL

HEADING = "## Quick start: a first tool call"
REPLY = "It is 21:04 in Tokyo."


def quick_start(readme: str) -> list[str]:
    """The commands of the README's quick start: the one ``sh`` block under its heading,
    which must hold exactly the three steps (a model's key, ``mcp add``, a prompt)."""
    assert f"\n{HEADING}\n" in readme, f"the README has no '{HEADING}' section"
    section = readme.split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert [lang for lang, _ in blocks] == ["sh"], "the quick start has one sh block"
    commands = [line for line in blocks[0][1].splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 3, commands
    key, add, prompt = commands
    assert key.startswith("export ") and "_API_KEY=" in key, key
    assert add.startswith("tui-agent mcp add "), add
    assert prompt.startswith("tui-agent run "), prompt
    return commands


GOOD = (f"intro\n{HEADING}\n\nA key, a server, a prompt:\n\n```sh\n"
        "export OPENAI_API_KEY=sk-...\ntui-agent mcp add time -- uvx mcp-server-time\n"
        'tui-agent run --model openai/gpt-4o-mini "What time is it?"\n```\n\n## Next\n')


@pytest.mark.parametrize("readme", [
    GOOD.replace(HEADING, "## Quick start"),  # the heading renamed
    GOOD.replace("```sh", "```bash"),  # not the sh block looked for
    GOOD.replace("tui-agent run", "tui-agent servers\ntui-agent run"),  # four commands
    GOOD.replace("tui-agent mcp add time -- uvx mcp-server-time\n", ""),  # two
    GOOD.replace("## Next\n", "```sh\ntui-agent\n```\n## Next\n"),  # a second block
], ids=["heading", "language", "four", "two", "two-blocks"])
def test_the_extraction_refuses_a_quick_start_it_cannot_run_as_written(readme: str) -> None:
    assert quick_start(GOOD)[1] == "tui-agent mcp add time -- uvx mcp-server-time"
    with pytest.raises(AssertionError):
        quick_start(readme)


def stand_ins(bin_dir: Path) -> None:
    """``uvx`` and ``tui-agent`` on PATH (see the module's docstring)."""
    bin_dir.mkdir()
    uvx = bin_dir / "uvx"
    uvx.write_text("#!/bin/sh\n"
                   '[ "$1" = mcp-server-time ] || { echo "uvx stand-in: only '
                   'mcp-server-time" >&2; exit 127; }\n'
                   f'shift\nexec {shlex.quote(sys.executable)} -m mcp_server_time "$@"\n')
    agent = bin_dir / "tui-agent"
    agent.write_text(f'#!/bin/sh\nexec {shlex.join(REAL)} "$@"\n')
    for file in (uvx, agent):
        file.chmod(0o755)


@pytest.mark.slow
def test_the_quick_start_reaches_an_approved_tool_call(tmp_path: Path,
                                                      fake_llm: FakeLLM) -> None:
    commands = quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("time__get_current_time",
                                                 {"timezone": "Asia/Tokyo"}, id="t1")]),
                  Reply(text=REPLY))
    home = tmp_path / "home"  # the XDG dirs under it are the conftest's
    work = home / "work"
    work.mkdir()
    stand_ins(tmp_path / "bin")
    script = tmp_path / "quickstart.sh"
    script.write_text("set -e\n" + "\n".join(commands) + "\n")
    env = {**os.environ, "HOME": str(home), "TERM": "xterm", "PYTHONPATH": str(ROOT),
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "OPENAI_BASE_URL": fake_llm.base_url}

    pid, fd = pty.fork()
    if pid == 0:  # the child: a shell on a real terminal, as the person types it
        os.chdir(work)
        os.execve("/bin/sh", ["/bin/sh", str(script)], env)
    try:
        asked = read_until(fd, b"deny with a reason: ", timeout=120)
        os.write(fd, b"y\n")
        shown = asked + read_until(fd, REPLY.encode(), timeout=60)
        status = wait_pid(pid, 60)
        shown += read_rest(fd)
    finally:
        os.close(fd)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]

    # mcp add wrote the server where the user's config lives, and listed its tools.
    config = (home / "config" / "tui-agent" / "config.toml").read_text()
    assert "[servers.time]" in config and '"uvx"' in config, config
    add_output = text[:text.index("wants to run")]
    assert "get_current_time" in add_output, text[-3000:]

    # The call went through the approval gate on the terminal: asked, then approved.
    assert "? time wants to run get_current_time" in text, text[-3000:]

    # The real server's answer went back to the model, which then replied.
    first, second = fake_llm.requests
    assert "time__get_current_time" in [t["function"]["name"] for t in first["tools"]]
    results = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and results[0]["tool_call_id"] == "t1"
    answer = json.dumps(results[0]["content"])
    assert "Asia/Tokyo" in answer and "datetime" in answer, answer
    assert REPLY in text
