"""The conformance suite's client as a user runs it: the real ``tui-agent run`` command
(a subprocess, its config written for the scenario's server, the context's credentials
as the ``[servers.conformance.oauth]`` table a user would write) and a model (the
scripted LLM server, tests/fakes/llm_server.py, in this process) that makes the
scenario's calls (:func:`~tests.conformance.client.planned_calls`: every tool it is
offered, the context's ``toolCalls``, or a schema echoed as the model sees it), then
stops. So a scenario also passes through what
``run`` adds to the hub: its logins (``--login browser``: the page opens without a
terminal, in the stand-in browser tests/fakes/browser.py), approval (``--approve auto``),
elicitation (``--elicit defaults``), the call path's errors.

    python -m tests.conformance.run_client URL   (MCP_CONFORMANCE_SCENARIO / _CONTEXT set)

Exit 0 when the run ended well, the model called the tools it was offered and each call
got the server's answer; 1 (with why, on stderr) if not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.conformance.client import oauth_table, planned_calls, skill_steps
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.zygote import command

ROOT = Path(__file__).resolve().parents[2]
TUI_AGENT = command()
"""The ``tui-agent`` command the scenario runs: the test worker's fork server's launcher
(tests/zygote: litellm already imported) when the worker has one, else the real command."""


ANSWERED = "rejected the call of"
"""What a failed call's result says when the server answered it with an MCP error: the
server's answer (``json-schema-ref-no-deref`` serves no ``tools/call``), not a failure
of the client's, unlike a lost connection or a login that did not finish."""
PREFIX = "conformance__"
"""What the model's tool names start with: the server is ``[servers.conformance]``."""
SKILL_TOOL = "skill"
"""The built-in tool that loads a skill (``{"name": ...}``) and reads its files
(``{"name": ..., "file": ...}``), MCP servers' skills among them."""
REFUSED = "is refused"
"""What a refused skill's result says (:class:`~tui_agent.tools.skills.SkillRefused`): in
the ``sep-2640-client-verify-*`` scenarios the server lies, and a refusal is the answer
the suite wants, not a failure of the run."""


class CallsEveryTool(FakeLLM):
    """A model whose first reply makes the scenario's calls (:func:`planned_calls`: every
    tool of the server it is offered, or those the scenario's context names), with what it
    sees of each tool's schema; then it is done. Where the scenario has a skill loaded
    (:func:`~tests.conformance.client.skill_steps`) and the ``skill`` tool is offered, it
    first loads the skill, then asks for its file, one call a reply."""

    def __init__(self, context: dict[str, Any]) -> None:
        super().__init__()
        self.context = context

    def _next(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            first = len(self.requests) == 1
            turn = len(self.requests) - 1
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        steps = skill_steps(self.context.get("name", "")) if SKILL_TOOL in offered else []
        if steps:
            return Reply(tool_calls=[FakeToolCall(SKILL_TOOL, steps[turn], id=f"skill{turn}")]
                         ) if turn < len(steps) else Reply(text="done")
        seen = {t["function"]["name"].removeprefix(PREFIX): t["function"]
                for t in body.get("tools") or [] if t["function"]["name"].startswith(PREFIX)}
        if not first or not seen:
            return Reply(text="done")
        calls = planned_calls({name: f.get("parameters") or {} for name, f in seen.items()},
                              self.context)
        return Reply(tool_calls=[FakeToolCall(seen[name]["name"], args, id=f"call{i}")
                                 for i, (name, args) in enumerate(calls)])


def config_for(url: str, context: dict[str, Any], llm: FakeLLM) -> str:
    """The config of a user who added the scenario's server (and its credentials)."""
    oauth = oauth_table(context)
    lines = ["[model]", 'name = "openai/fake-model"', f"api_base = {json.dumps(llm.base_url)}",
             'api_key = "sk-test"', "max_retries = 0", "", "[servers.conformance]",
             f"url = {json.dumps(url)}", 'transport = "http"', 'auto = ["*"]',
             "startup_timeout = 25", "timeout = 20", "", "[servers.conformance.oauth]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in oauth.items()]
    return "\n".join(lines) + "\n"


RUN_TIMEOUT = 100.0
"""A guard against a hang, under the suite's own time limit for the client (130 s, set in
tests/test_conformance.py): a run that hangs is reported here with what it wrote, where
the suite would kill this client before it said anything."""


def _said(output: str | bytes | None) -> None:
    text = output.decode(errors="replace") if isinstance(output, bytes) else output or ""
    sys.stderr.write(text)


def main() -> None:
    url = sys.argv[-1]
    context = {"name": os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
               **json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")}
    with tempfile.TemporaryDirectory(prefix="tui-agent-run-conformance-") as state, \
            CallsEveryTool(context) as llm:
        home = Path(state)
        conf = home / "config.toml"
        conf.write_text(config_for(url, context, llm), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT),
               "BROWSER": f"{sys.executable} -m tests.fakes.browser %s",
               **{f"XDG_{d}_HOME": str(home / d.lower()) for d in ("STATE", "CONFIG", "DATA")}}
        try:
            done = subprocess.run(
                [*TUI_AGENT, "run", "--config", str(conf), "--no-project",
                 "--approve", "auto", "--login", "browser", "--elicit", "defaults",
                 "--output", "jsonl", "call every tool"], capture_output=True, text=True,
                timeout=RUN_TIMEOUT, env=env, cwd=ROOT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            _said(exc.stderr)
            _said(exc.stdout)
            print(f"run did not end within {RUN_TIMEOUT:g} s", file=sys.stderr)
            sys.exit(1)
    sys.stderr.write(done.stderr)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    failed = [e for e in events if e["type"] == "error" or (
        e["type"] == "tool_result" and e["is_error"] and ANSWERED not in e["text"]
        and REFUSED not in e["text"])]
    for event in failed:
        print(f"failed: {event.get('text') or event.get('message')}", file=sys.stderr)
    calls = [e for e in events if e["type"] == "tool_call"]
    # The server's tools, or the skill tool where the scenario loads a skill (a built-in
    # tool alone is nothing the scenario asks to be called).
    names = {t["function"]["name"] for body in llm.requests for t in body.get("tools") or []}
    offered = any(name.startswith(PREFIX) for name in names) or (
        SKILL_TOOL in names and bool(skill_steps(context["name"])))
    if done.returncode != 0 or failed or (offered and not calls):
        print(f"run ended {done.returncode}, {len(calls)} call(s), {len(failed)} failure(s)",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
