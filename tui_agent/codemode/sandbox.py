"""Run one Starlark script in a child process whose tool calls come back to us.

The script runs in ``child.py`` under ``RLIMIT_AS`` and ``RLIMIT_CPU`` with a
wall-clock deadline: Starlark cannot interrupt one huge builtin operation, so only
a separate process makes the memory and CPU caps hard. Each tool call the script
makes is a message to this process, which hands it to the :class:`Bridge` the
core supplies (the approval gate, then the hub) and sends back the value or the
error. The UI's event loop only ever awaits pipes here; it never runs a script.

Time the bridge reports as ``paused`` (a person deciding on a call) does not count
against the deadline; tool calls themselves do, and a call still running at the
deadline is cancelled (the server is told) and named as such to the model. A script
starts only when :data:`~tui_agent.codemode.budget.BUDGET` has room for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui_agent.codemode import spare, wire
from tui_agent.codemode.budget import BUDGET, NoRoom
from tui_agent.codemode.errors import ErrorKind, ScriptError, cpu, died, parse
from tui_agent.config.models import CodeModeSettings

CHILD = spare.CHILD
GRACE = 2.0
"""Seconds past the deadline before the child is killed (it stops itself first)."""
STDERR_TAIL = 4096
MB = spare.MB


def _wire(limits: CodeModeSettings) -> dict[str, Any]:
    """What the child needs of the limits (it imports nothing of ours)."""
    return {"timeout": limits.timeout, "max_depth": limits.max_depth,
            "max_output": limits.max_output, "max_memory_mb": limits.max_memory_mb,
            "max_cpu": cpu(limits), "max_transfer": limits.max_transfer_mb * MB}


class CallFailed(Exception):
    """Raised by a :class:`Bridge` when a call is not run or fails; the script stops
    with ``message``, which names the call."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


class Bridge(Protocol):
    """The core's side: one call, already through the gate. ``paused`` is the total of
    seconds spent waiting on people so far, a wait still going on included."""

    @property
    def paused(self) -> float: ...

    async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any: ...


@dataclass
class ScriptOutcome:
    """What a script gave back: ``result`` (the top-level ``result`` variable) and the
    ``print()`` logs, or an error, with the logs printed before it and what became of
    its tool calls."""

    result: Any = None
    logs: list[str] = field(default_factory=list)
    error: ScriptError | None = None
    calls: int = 0
    duration: float = 0.0
    completed: list[str] = field(default_factory=list)
    """Calls that ran to their end (an error from the tool included), in order."""
    cancelled: str | None = None
    """The call that was still running when the script was stopped."""

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
        if self.error is not None and self.error.kind == "limit" and self.calls:
            parts.append(self._fate())
        if self.logs:
            label = "logs" if self.error is None else "logs printed before the failure"
            parts.append(f"{label}:\n" + "\n".join(self.logs))
        return "\n".join(parts)

    def _fate(self) -> str:
        """Which calls of a stopped script completed, which was cut short, which never ran."""
        done = ", ".join(f"{name} ×{n}" if n > 1 else name
                         for name, n in Counter(self.completed).items()) or "none"
        lines = [f"completed: {done}"]
        if self.cancelled:
            lines.append(f"cancelled while running: {self.cancelled} (the server was told "
                         "to stop; what it did before that may have happened)")
        lines.append("not started: every call after that point in the script")
        return "\n".join(lines)


async def run(code: str, bindings: dict[str, dict[str, str]], bridge: Bridge,
              limits: CodeModeSettings | None = None, *, warm: bool = False) -> ScriptOutcome:
    """Run ``code`` with ``bindings`` (``{global: {attribute: key}}``); never raises for
    anything the script does. Cancelling the caller kills the child. ``warm``: take the
    spare child started ahead (:mod:`.spare`), and start the next one after."""
    limits = limits or CodeModeSettings()
    try:
        async with BUDGET.room(limits):
            return await _run(code, bindings, bridge, limits, warm)
    except NoRoom as exc:
        return ScriptOutcome(error=ScriptError("limit", str(exc)))
    finally:
        if warm:
            spare.prepare(limits)


async def _run(code: str, bindings: dict[str, dict[str, str]], bridge: Bridge,
               limits: CodeModeSettings, warm: bool) -> ScriptOutcome:
    outcome = ScriptOutcome()
    started = time.monotonic()
    proc = (await spare.take(limits) if warm else None) or await spare.spawn(limits)
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


def _timeout(limits: CodeModeSettings) -> ScriptError:
    return ScriptError("limit", f"timeout: the script ran longer than {limits.timeout:g} s "
                       "(code_mode timeout) and was stopped")


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
            outcome.error = _timeout(limits)
            return
        except ValueError:  # a line over the reader's limit: only a broken child sends one
            proc.kill()
            outcome.error = ScriptError("limit", "the script's process sent a message over "
                                        "the size limits (code_mode max_transfer_mb)")
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
            reply = await _call_in_time(bridge, message, outcome, limits,
                                        deadline - GRACE)
            if reply is None:  # the deadline came during the call: it was cancelled
                proc.kill()
                outcome.error = _timeout(limits)
                return
            paused = bridge.paused - before
            deadline += paused
            try:  # a child that stops reading its input cannot hold the turn past it
                await asyncio.wait_for(_send(proc, reply, paused),
                                       max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                proc.kill()
                outcome.error = _timeout(limits)
                return
            reply = None  # held no longer than sent: the next call may bring as much
        elif op == "done":
            outcome.result = message.get("result")
            return
        elif op == "error":
            outcome.result = None
            outcome.error = parse(message, limits)
            return


async def _call_in_time(bridge: Bridge, message: dict[str, Any], outcome: ScriptOutcome,
                        limits: CodeModeSettings, deadline: float) -> str | Value | None:
    """One call, cancelled if the script's deadline (moved on by the time a person takes
    to decide) passes first; its reply (a failure as a JSON fragment, or the value), or
    None when cancelled."""
    task = asyncio.ensure_future(_call(bridge, message, outcome, limits))
    before = bridge.paused
    try:
        while True:
            left = deadline + (bridge.paused - before) - time.monotonic()
            if left > 0:
                done, _ = await asyncio.wait({task}, timeout=left)
                if done:
                    return task.result()
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            outcome.cancelled = str(message.get("name", "?"))
            return None
    except asyncio.CancelledError:
        task.cancel()
        raise


async def _call(bridge: Bridge, message: dict[str, Any], outcome: ScriptOutcome,
                limits: CodeModeSettings) -> str | Value:
    name = str(message.get("name", "?"))
    if outcome.calls >= limits.max_calls:
        return _failed("limit", f"tool-call limit: {name} would be call {outcome.calls + 1}, "
                       f"over the limit of {limits.max_calls} calls per script "
                       "(code_mode max_calls)")
    outcome.calls += 1
    args = message.get("args")
    try:
        value = await bridge.call(str(message.get("key")), name,
                                  args if isinstance(args, dict) else {})
    except CallFailed as exc:
        outcome.completed.append(name)
        return _failed(exc.kind, exc.message)
    outcome.completed.append(name)
    limit = limits.max_transfer_mb * MB
    size = wire.size(value)
    if size > limit:
        return _failed("limit", f"{name} returned {size:,} bytes (as JSON), "
                       f"over the {limits.max_transfer_mb} MB one call may bring into a script "
                       "(code_mode max_transfer_mb): ask the tool for less (a page, a "
                       "filter), or raise the limit")
    return Value(value)


@dataclass(slots=True)
class Value:
    """A call's value, to be written to the child as JSON piece by piece
    (:mod:`~tui_agent.codemode.wire`)."""

    value: Any


def _failed(kind: str, message: str) -> str:
    return '"ok": false, "error": ' + json.dumps({"kind": kind, "message": message},
                                                 ensure_ascii=False)


async def _send(proc: asyncio.subprocess.Process, reply: str | Value, paused: float) -> None:
    """The reply to a call: a failure (a JSON fragment), or a value written as JSON piece
    by piece, each piece on its way to the child before the next is made, so a big
    value is never copied whole into a message, its bytes or the pipe's buffer."""
    head = f'{{"op": "reply", "paused": {paused!r}, '
    if isinstance(reply, str):
        _raw(proc, f"{head}{reply}}}\n".encode())
        return
    _raw(proc, f'{head}"ok": true, "value": '.encode())
    for piece in wire.pieces(reply.value):
        _raw(proc, piece.encode())
        if len(piece) > 4096:
            await _drained(proc)
    _raw(proc, b"}\n")


async def _drained(proc: asyncio.subprocess.Process) -> None:
    """Wait until the pipe took what was written (a child that died: nothing to wait for;
    the caller sees its end on the next read)."""
    assert proc.stdin is not None
    with contextlib.suppress(ConnectionError, RuntimeError):
        await proc.stdin.drain()


def _write(proc: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    _raw(proc, (json.dumps(message, ensure_ascii=False) + "\n").encode())


def _raw(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(ConnectionError, RuntimeError):
        proc.stdin.write(data)


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
    return died(proc.returncode, tail.decode(errors="replace"), limits)


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
