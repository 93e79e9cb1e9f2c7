"""What a script's failure says: the child's Starlark error text, parsed into a kind, a
position, the source line and a folded call stack the model can act on."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import Any, Literal

from tui_agent.config.models import CodeModeSettings

MAX_STACK_LINES = 12

ErrorKind = Literal["syntax", "runtime", "tool", "denied", "limit"]


@dataclass(frozen=True, slots=True)
class ScriptError:
    kind: ErrorKind
    message: str
    line: int | None = None
    column: int | None = None
    source_line: str | None = None
    stack: tuple[str, ...] = ()


def died(code: int | None, stderr: str, limits: CodeModeSettings) -> ScriptError:
    """Why a child ended without an answer: its exit status and the end of its stderr."""
    memory = (f"memory limit: the script needed more than {limits.max_memory_mb} MB "
              "(code_mode max_memory_mb) and was stopped")
    if code == -signal.SIGXCPU or code == -signal.SIGKILL and "memory" not in stderr:
        return ScriptError("limit", f"CPU limit: the script used more than {cpu(limits):g} s "
                           "of CPU and was stopped")
    if "memory" in stderr or code == -signal.SIGABRT and "stack" not in stderr:
        return ScriptError("limit", memory)
    if code in (-signal.SIGSEGV, -signal.SIGBUS) or "overflowed its stack" in stderr:
        return ScriptError("limit", "depth or memory limit: a value nested too deep or too "
                           "big for the sandbox stopped the script (code_mode max_depth is "
                           f"{limits.max_depth}, max_memory_mb {limits.max_memory_mb}): build "
                           "flatter or smaller values, or raise those limits")
    last = stderr.strip().splitlines()[-1:] or [f"exit status {code}"]
    return ScriptError("runtime", f"the sandbox process ended unexpectedly ({last[0][:300]})")


def cpu(limits: CodeModeSettings) -> float:
    """CPU seconds a script may use."""
    return limits.max_cpu or limits.timeout + 1


_LOCATION = re.compile(r"-->\s*script\.star:(\d+):(\d+)")
_FRAME = re.compile(r"^\s*\*\s*script\.star:(\d+), in (\S+)")


def parse(message: dict[str, Any], limits: CodeModeSettings) -> ScriptError:
    failure = message.get("failure")
    text = str(message.get("text", ""))
    line, column = _position(text)
    if failure:
        kind = failure.get("kind", "tool")
        return ScriptError(kind if kind in ("tool", "denied", "limit", "runtime") else "tool",
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
