"""The README's quick start, run as a new user runs it: its three commands, word for word,
in a shell on a terminal, in an empty home and a project folder with a README. The model
is the scripted one; the tools are the built-in server's (``local__read`` runs unasked)
and then the real ``mcp-server-time`` from PyPI, added and listed by ``mcp add``.

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
REPLY = "It is a demo tool that says hello."
README = "# Demo\nA tool that says hello.\n"


def quick_start(readme: str) -> list[str]:
    """The commands of the README's quick start: the one ``sh`` block under its heading,
    which must hold exactly the three steps (a model's key, a prompt, ``mcp add``)."""
    assert f"\n{HEADING}\n" in readme, f"the README has no '{HEADING}' section"
    section = readme.split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert [lang for lang, _ in blocks] == ["sh"], "the quick start has one sh block"
    commands = [line for line in blocks[0][1].splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 3, commands
    key, prompt, add = commands
    assert key.startswith("export ") and "_API_KEY=" in key, key
    assert prompt.startswith("tui-agent run "), prompt
    assert add.startswith("tui-agent mcp add "), add
    return commands


GOOD = (f"intro\n{HEADING}\n\nA key, a prompt, a server:\n\n```sh\n"
        'export OPENAI_API_KEY=sk-...\ntui-agent run --model openai/gpt-4o-mini "summarise x"\n'
        "tui-agent mcp add time -- uvx mcp-server-time\n```\n\n## Next\n")


@pytest.mark.parametrize("readme", [
    GOOD.replace(HEADING, "## Quick start"),  # the heading renamed
    GOOD.replace("```sh", "```bash"),  # not the sh block looked for
    GOOD.replace("tui-agent run", "tui-agent servers\ntui-agent run"),  # four commands
    GOOD.replace("tui-agent run", "tui-agent mcp add x -- y\n#").replace(  # the wrong order
        "tui-agent mcp add time", 'tui-agent run --model m "hi"\n# tui-agent mcp add time'),
    GOOD.replace("tui-agent mcp add time -- uvx mcp-server-time\n", ""),  # two
    GOOD.replace("## Next\n", "```sh\ntui-agent\n```\n## Next\n"),  # a second block
], ids=["heading", "language", "four", "order", "two", "two-blocks"])
def test_the_extraction_refuses_a_quick_start_it_cannot_run_as_written(readme: str) -> None:
    assert quick_start(GOOD)[2] == "tui-agent mcp add time -- uvx mcp-server-time"
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
def test_the_quick_start_reads_the_readme_then_adds_a_server(tmp_path: Path,
                                                            fake_llm: FakeLLM) -> None:
    commands = quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    fake_llm.push(Reply(tool_calls=[FakeToolCall("local__read", {"path": "README.md"},
                                                 id="r1")]),
                  Reply(text=REPLY))
    home = tmp_path / "home"  # the XDG dirs under it are the conftest's
    work = home / "work"
    work.mkdir()
    (work / "README.md").write_text(README)
    stand_ins(tmp_path / "bin")
    script = tmp_path / "quickstart.sh"
    script.write_text("set -e\n" + "\n".join(commands) + "\n")
    env = {**os.environ, "HOME": str(home), "TERM": "xterm", "PYTHONPATH": str(ROOT),
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "OPENAI_BASE_URL": fake_llm.base_url}
    env.pop("TUI_AGENT_NO_BUILTIN")  # a fresh install has the built-in server on

    pid, fd = pty.fork()
    if pid == 0:  # the child: a shell on a real terminal, as the person types it
        os.chdir(work)
        os.execve("/bin/sh", ["/bin/sh", str(script)], env)
    try:
        shown = read_until(fd, REPLY.encode(), timeout=120)
        shown += read_until(fd, b"get_current_time", timeout=120)
        status = wait_pid(pid, 60)
        shown += read_rest(fd)
    finally:
        os.close(fd)
    text = shown.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text[-3000:]

    # The read ran without a question (reads in the project are auto-approved), and the
    # file's lines went to the model, which then replied.
    assert "wants to run" not in text, text[-3000:]
    first, second = fake_llm.requests
    assert "local__read" in [t["function"]["name"] for t in first["tools"]]
    results = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and results[0]["tool_call_id"] == "r1"
    assert "A tool that says hello." in json.dumps(results[0]["content"])
    assert text.index(REPLY) < text.index("get_current_time")

    # mcp add wrote the server where the user's config lives, and listed its tools.
    config = (home / "config" / "tui-agent" / "config.toml").read_text()
    assert "[servers.time]" in config and '"uvx"' in config, config
