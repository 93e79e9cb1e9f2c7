"""Run one Starlark script in a child process whose tool calls come back to us.

The script runs in ``child.py`` under ``RLIMIT_AS`` and ``RLIMIT_CPU`` with a
wall-clock deadline: Starlark cannot interrupt one huge builtin operation, so only
a separate process makes the memory and CPU caps hard. Each tool call the script
makes is a message to this process, which hands it to the :class:`Bridge` the
core supplies (the approval gate, then the hub) and sends back the value or the
error. The UI's event loop only ever awaits pipes here; it never runs a script.

Time the bridge reports as ``paused`` (a person deciding on a call) does not count
against the deadline; tool calls themselves do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tui_agent.config.models import CodeModeSettings

CHILD = Path(__file__).with_name("child.py")
GRACE = 2.0
"""Seconds past the deadline before the child is killed (it stops itself first)."""
STDERR_TAIL = 4096
MAX_STACK_LINES = 12

ErrorKind = Literal["syntax", "runtime", "tool", "denied", "limit"]


def _wire(limits: CodeModeSettings) -> dict[str, Any]:
    """What the child needs of the limits (it imports nothing of ours)."""
    return {"timeout": limits.timeout, "max_depth": limits.max_depth,
            "max_output": limits.max_output, "max_memory_mb": limits.max_memory_mb,
            "max_cpu": _cpu(limits)}


def _cpu(limits: CodeModeSettings) -> float:
    return limits.max_cpu or limits.timeout + 1


class CallFailed(Exception):
    """Raised by a :class:`Bridge` when a call is not run or fails; the script stops
    with ``message``, which names the call."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


class Bridge(Protocol):
    """The core's side: one call, already through the gate. ``paused`` is the total of
    seconds spent waiting on people so far."""

    paused: float

    async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any: ...


@dataclass(frozen=True, slots=True)
class ScriptError:
    kind: ErrorKind
    message: str
    line: int | None = None
    column: int | None = None
    source_line: str | None = None
    stack: tuple[str, ...] = ()


@dataclass
class ScriptOutcome:
    """What a script gave back: ``result`` (the top-level ``result`` variable) and the
    ``print()`` logs, or an error, with the logs printed before it."""

    result: Any = None
    logs: list[str] = field(default_factory=list)
    error: ScriptError | None = None
    calls: int = 0
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        """The outcome as the model reads it."""
        parts: list[str] = []
        if self.error is None and self.result is None:
            parts.append("result: None (set the top-level variable `result` to return a value)")
        elif self.error is None:
            parts.append("result: " + json.dumps(self.result, ensure_ascii=False, indent=1))
        else:
            e = self.error
            where = f" at line {e.line}, column {e.column}" if e.line else ""
            parts.append(f"error ({e.kind}){where}: {e.message}")
            if e.source_line is not None:
                parts.append(f"  {e.line} | {e.source_line}")
            if e.stack:
                parts.append("Starlark call stack (innermost last):\n" + "\n".join(e.stack))
        parts.append(f"tool calls made: {self.calls}")
        if self.logs:
            label = "logs" if self.error is None else "logs printed before the failure"
            parts.append(f"{label}:\n" + "\n".join(self.logs))
        return "\n".join(parts)


async def run(code: str, bindings: dict[str, dict[str, str]], bridge: Bridge,
              limits: CodeModeSettings | None = None) -> ScriptOutcome:
    """Run ``code`` with ``bindings`` (``{global: {attribute: key}}``); never raises for
    anything the script does. Cancelling the caller kills the child."""
    limits = limits or CodeModeSettings()
    outcome = ScriptOutcome()
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", str(CHILD), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=limits.max_output * 4 + (1 << 20), start_new_session=True, env=_child_env())
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    tail = bytearray()
    reader = asyncio.create_task(_drain(proc.stderr, tail))
    try:
        _write(proc, {"op": "run", "code": code, "bindings": bindings, "limits": _wire(limits)})
        await _converse(proc, bridge, limits, outcome, started)
        if outcome.error is None and outcome.result is _PENDING:
            outcome.error = await _died(proc, tail, reader, limits)
    finally:
        await _reap(proc)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    if outcome.result is _PENDING:
        outcome.result = None
    outcome.duration = time.monotonic() - started
    return outcome


_PENDING: Any = object()


def _child_env() -> dict[str, str]:
    """A script cannot read its environment, but the child gets none of our secrets
    anyway: only the locale, PATH, and our own ``TUI_AGENT_*`` settings."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
    return {k: v for k, v in os.environ.items() if k in keep or k.startswith("TUI_AGENT_")}


async def _converse(proc: asyncio.subprocess.Process, bridge: Bridge, limits: CodeModeSettings,
                    outcome: ScriptOutcome, started: float) -> None:
    assert proc.stdout is not None
    outcome.result = _PENDING
    deadline = started + limits.timeout + GRACE
    log_bytes = 0
    while True:
        try:
            line = await asyncio.wait_for(proc.stdout.readline(),
                                          max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            proc.kill()
            outcome.error = ScriptError("limit", f"timeout: the script ran longer than "
                                        f"{limits.timeout:g} s (code_mode timeout) and was stopped")
            return
        except ValueError:  # a line over the reader's limit: only a broken child sends one
            proc.kill()
            outcome.error = ScriptError("limit", "the script sent more output than max_output")
            return
        if not line:
            return  # the child is gone; the caller looks at why
        try:
            message = json.loads(line)
        except ValueError:  # a line cut short by the child's death
            proc.kill()
            return
        op = message.get("op")
        if op == "log":
            log_bytes += len(message["text"]) + 1
            if log_bytes <= limits.max_output * 2:
                outcome.logs.append(str(message["text"]))
        elif op == "call":
            before = bridge.paused
            reply = await _call(bridge, message, outcome, limits)
            paused = bridge.paused - before
            deadline += paused
            _write(proc, {**reply, "op": "reply", "paused": paused})
        elif op == "done":
            outcome.result = message.get("result")
            return
        elif op == "error":
            outcome.result = None
            outcome.error = _error(message, limits)
            return


async def _call(bridge: Bridge, message: dict[str, Any], outcome: ScriptOutcome,
                limits: CodeModeSettings) -> dict[str, Any]:
    name = str(message.get("name", "?"))
    if outcome.calls >= limits.max_calls:
        return {"ok": False, "error": {"kind": "limit", "message": (
            f"tool-call limit: {name} would be call {outcome.calls + 1}, over the limit of "
            f"{limits.max_calls} calls per script (code_mode max_calls)")}}
    outcome.calls += 1
    args = message.get("args")
    try:
        value = await bridge.call(str(message.get("key")), name,
                                  args if isinstance(args, dict) else {})
    except CallFailed as exc:
        return {"ok": False, "error": {"kind": exc.kind, "message": exc.message}}
    return {"ok": True, "value": value}


def _write(proc: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(ConnectionError, RuntimeError):
        proc.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())


async def _drain(stream: asyncio.StreamReader, tail: bytearray) -> None:
    while chunk := await stream.read(65536):
        tail.extend(chunk)
        del tail[:-STDERR_TAIL]


async def _died(proc: asyncio.subprocess.Process, tail: bytearray, reader: asyncio.Task[None],
                limits: CodeModeSettings) -> ScriptError:
    """Why a child ended without an answer."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), 5.0)
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(reader), 1.0)
    stderr = tail.decode(errors="replace")
    code = proc.returncode
    if code == -signal.SIGXCPU or code == -signal.SIGKILL and "memory" not in stderr:
        return ScriptError("limit", f"CPU limit: the script used more than {_cpu(limits):g} s "
                           "of CPU and was stopped")
    if "memory" in stderr or code == -signal.SIGABRT:
        return ScriptError("limit", f"memory limit: the script needed more than "
                           f"{limits.max_memory_mb} MB (code_mode max_memory_mb) and was stopped")
    last = stderr.strip().splitlines()[-1:] or [f"exit status {code}"]
    return ScriptError("runtime", f"the sandbox process ended unexpectedly ({last[0][:300]})")


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Kill the child (and anything in its session) and wait for it, even when cancelled."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    waiter = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.shield(waiter)
    except asyncio.CancelledError:
        await asyncio.wait_for(waiter, 5.0)
        raise


_LOCATION = re.compile(r"-->\s*script\.star:(\d+):(\d+)")
_FRAME = re.compile(r"^\s*\*\s*script\.star:(\d+), in (\S+)")


def _error(message: dict[str, Any], limits: CodeModeSettings) -> ScriptError:
    failure = message.get("failure")
    text = str(message.get("text", ""))
    line, column = _position(text)
    if failure:
        kind = failure.get("kind", "tool")
        return ScriptError(kind if kind in ("tool", "denied", "limit") else "tool",
                           str(failure.get("message", "")), line, column, None, _stack(text))
    body = _body(text)
    if "Parse error" in text or "error: Parse" in text:
        hint = " (Starlark has no ** operator: write the number out)" if "'**'" in body else ""
        body = body.split(", expected one of")[0] if len(body) > 200 else body
        return ScriptError("syntax", _short(body) + hint, line, column, _source(text, line))
    if "Evaluation cancelled" in text:
        return ScriptError("limit", f"timeout: the script ran longer than {limits.timeout:g} s "
                           "(code_mode timeout) and was stopped", line, column,
                           _source(text, line), _stack(text))
    if "call stack overflow" in text:
        return ScriptError("limit", f"call-stack depth: more than {limits.max_depth} nested "
                           "calls (code_mode max_depth); is a recursion missing its base case?",
                           line, column, _source(text, line), _stack(text))
    if message.get("type") in ("MemoryError", "PanicException") and "memory" in text.lower() \
            or message.get("type") == "MemoryError":
        return ScriptError("limit", f"memory limit: the script needed more than "
                           f"{limits.max_memory_mb} MB (code_mode max_memory_mb)", line, column)
    if "No imports are available" in text:
        return ScriptError("runtime", "load() is not available: a script has no imports; "
                           "every tool is already bound as server.tool", line, column,
                           _source(text, line))
    return ScriptError("runtime", _short(body), line, column, _source(text, line), _stack(text))


def _position(text: str) -> tuple[int | None, int | None]:
    found = _LOCATION.findall(text)
    if not found:
        return None, None
    line, column = found[-1]
    return int(line), int(column)


def _body(text: str) -> str:
    """The ``error: ...`` line of a Starlark message."""
    for row in text.splitlines():
        if row.startswith("error: "):
            return row[len("error: "):]
    return text.strip().splitlines()[0] if text.strip() else "unknown error"


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _source(text: str, line: int | None) -> str | None:
    if line is None:
        return None
    for row in text.splitlines():
        match = re.match(rf"^\s*{line} \| (.*)$", row)
        if match:
            return match.group(1)
    return None


def _stack(text: str) -> tuple[str, ...]:
    """The traceback's frames, repeated runs folded (deep recursion prints hundreds)."""
    frames = [f"line {m.group(1)}, in {m.group(2)}" for m in map(_FRAME.match, text.splitlines())
              if m]
    folded: list[str] = []
    i = 0
    while i < len(frames):
        j = i
        while j + 1 < len(frames) and frames[j + 1] == frames[i]:
            j += 1
        folded.append(frames[i] if j == i else f"{frames[i]} (x{j - i + 1})")
        i = j + 1
    if len(folded) > MAX_STACK_LINES:
        half = MAX_STACK_LINES // 2
        folded = [*folded[:half], f"... {len(folded) - 2 * half} more frames ...",
                  *folded[-half:]]
    return tuple("  " + f for f in folded)
