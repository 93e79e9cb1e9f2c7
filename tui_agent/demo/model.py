"""The demo's scripted model: a guided tour, streamed like a real reply.

It reads the conversation to know where the tour is (the last message, and the
tool results it got), streams its Markdown a few words at a time, and asks for
the ``notes`` server's tools by the names the hub offered, so the call passes
the real policy, the approval modal and the real MCP server. Its last step sends
a code-mode script (once the user turns code mode on with ``/code``), which runs
in the real sandbox, its calls asking through the same gate.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from tui_agent.core.compaction import COMPACT_SYSTEM
from tui_agent.core.events import Retrying, TextDelta, Usage
from tui_agent.core.llm import Reply, ToolCallRequest
from tui_agent.demo import DEMO_MODEL

INTRO = """\
## Welcome to tui-agent

This is the **offline demo**: the model answering you is a *scripted tour*, not an
AI. Everything else is real: the MCP server, the approval gate, the session file.

What you can do here:

- chat with any model [litellm](https://docs.litellm.ai) can reach;
- use tools from **MCP servers** (stdio, SSE, HTTP, Docker);
- decide which tool calls run: nothing runs without your say.

| key | does |
|---|---|
| `enter` | send the message (`ctrl+j` for a new line) |
| `esc` | stop the reply, or the tool, in flight |
| `ctrl+s` | the servers screen |
| `ctrl+p` | every command |

A config that points at a local model looks like this:

```toml
[model]
name = "ollama/llama3.1"

[servers.notes]
command = "python"
args = ["-m", "tui_agent.demo.server", "~/notes"]
auto = ["list_notes", "read_note"]
```

Now a tool call. `save_note` writes a file, so it is not auto-approved:
the approval gate will ask you first. Press `y` to let it run, `n` to refuse.
"""

SUMMARY = ("(The demo's scripted summary.) The user is taking the tour of tui-agent: the "
           "offline demo, the notes server, the approval gate and code mode.")

AFTER_SAVE = """\
The note is saved: the call went through the gate, to the `notes` MCP server,
and its result came back to me. Its card above shows the arguments, the time it
took, and the result (click it, or focus it and press `enter`, to fold it).

Next, `list_notes`. It is read-only and listed under `auto` in the demo's
config, so it runs without asking.
"""

AFTER_DENY = """\
You said no, so nothing was written: the server never saw the call. A refusal
with a reason (`r`) would have told me why, so a real model can change course.

Next, `list_notes`. It is read-only and listed under `auto` in the demo's
config, so it runs without asking.
"""

CODE_INTRO = """\
Notes so far: {notes}.

Last stop: **code mode**. Instead of one tool call per round trip, the model
reads `.pyi` stubs of the tools and writes one small Starlark script that makes
many calls. The script runs in a sandboxed child process, and *every* call it
makes still passes the approval gate.

Type `/code` to turn code mode on, then send `script`.
"""

CODE_OFF = """\
Code mode is off, so I cannot send a script yet. Type `/code` to turn it on,
then send `script` again.
"""

SCRIPT_TEXT = """\
Here is the script. It reads every note and counts its words (those tools are
auto-approved), then saves the counts as a new note: that call asks you, with
the script beside it. Press `y` to let it run. (Where a script calls tools its
server marks read-only, `s` approves them for the rest of the script's run;
a call that writes asks every time.)
"""

SCRIPT = """\
titles = [t for t in notes.list_notes().splitlines() if t != "(no notes yet)"]
counts = {}
for title in titles:
    counts[title] = notes.word_count(text=notes.read_note(title=title))
print("counted", len(titles), "notes")
notes.save_note(title="word counts", text=json.encode(counts))
result = counts
"""

DONE = """\
That is the tour. {outcome}

To use a real model, quit (`ctrl+q`) and start tui-agent with one:

- a hosted model: `export OPENAI_API_KEY=...` then `tui-agent --model openai/gpt-4o-mini`;
- a local Ollama: `tui-agent --model ollama/llama3.1`;
- any OpenAI-compatible server: `tui-agent --model openai/NAME --api-base http://HOST:PORT/v1`.

Or type `/model` here to pick one for the next turn.
"""

FALLBACK = """\
I am the demo's scripted tour, so I cannot answer that. Type `/model` to choose a
real model, or `/help` to see every command. Send `tour` to walk through again.
"""


ASKS = ("save_note", "executeToolCode")
"""The tour's calls that stop at the approval gate (the others are auto-approved)."""
READ_PAUSE = 2.5
"""Seconds the text that explains a call which asks stays in view, whole, before the
call is made: the approval modal would otherwise cover the explanation the moment its
last word arrived."""


class ScriptedTour:
    """A :class:`~tui_agent.core.llm.ChatModel` that plays the tour. ``pace`` is the pause
    between streamed pieces (0 in tests that do not watch the stream); ``read_pause`` the
    one after the text, before a call that asks (see :data:`READ_PAUSE`)."""

    def __init__(self, pace: float = 0.02, read_pause: float = READ_PAUSE) -> None:
        self.pace = pace
        self.read_pause = read_pause

    @property
    def model(self) -> str:
        return DEMO_MODEL

    async def stream(self, messages: Sequence[dict[str, Any]],
                     tools: Sequence[dict[str, Any]] = ()
                     ) -> AsyncGenerator[TextDelta | Retrying | Reply, None]:
        text, call = self._next(messages, [t["function"]["name"] for t in tools])
        for piece in re.findall(r"\S*\s*", text):
            if piece:
                yield TextDelta(piece)
                await asyncio.sleep(self.pace)
        calls = [call] if call is not None else []
        if call is not None and call.name.endswith(ASKS):  # let the explanation be read
            await asyncio.sleep(self.read_pause)
        yield Reply(text, calls, "tool_calls" if calls else "stop",
                    Usage(0, len(text.split()), len(text.split()), 0.0))

    def _next(self, messages: Sequence[dict[str, Any]],
              tools: list[str]) -> tuple[str, ToolCallRequest | None]:
        last = messages[-1] if messages else {}
        if messages and str(messages[0].get("content")).startswith(COMPACT_SYSTEM[:40]):
            return SUMMARY, None  # /compact in the demo
        if last.get("role") == "tool":
            called = _called(messages, str(last.get("tool_call_id")))
            result = str(last.get("content", ""))
            if called.endswith("save_note"):
                denied = result.startswith("The user denied")
                return (AFTER_DENY if denied else AFTER_SAVE), self._call(tools, "list_notes", {})
            if called == "executeToolCode":
                outcome = ("The script's card above shows what it called, and its result."
                           if result.startswith("result:") else
                           "The script stopped early (its card says why): that is what a "
                           "denied call does to a script.")
                return DONE.format(outcome=outcome), None
            return CODE_INTRO.format(notes=_notes(result)), None
        content = str(last.get("content") or "").strip().lower()
        if content in ("script", "code", "code mode"):
            if "executeToolCode" not in tools:
                return CODE_OFF, None
            return SCRIPT_TEXT, ToolCallRequest(f"demo-{uuid.uuid4().hex[:12]}",
                                                "executeToolCode", json.dumps({"code": SCRIPT}))
        first = sum(1 for m in messages if m.get("role") == "user") == 1
        if first or content in ("tour", "demo", "again"):
            return INTRO, self._call(tools, "save_note", {
                "title": "tui-agent tour",
                "text": "Seen: streaming Markdown, a tool call, the approval gate."})
        return FALLBACK, None

    def _call(self, tools: list[str], tool: str, args: dict[str, Any]) -> ToolCallRequest | None:
        name = next((t for t in tools if t.endswith(f"__{tool}")), None)
        if name is None:
            return None
        return ToolCallRequest(f"demo-{uuid.uuid4().hex[:12]}", name, json.dumps(args))


def _called(messages: Sequence[dict[str, Any]], call_id: str) -> str:
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == call_id:
                return str(call["function"]["name"])
    return ""


def _notes(result: str) -> str:
    found = [line.strip() for line in result.splitlines() if line.strip()]
    return ", ".join(f"`{n}`" for n in found) if found else "none"
