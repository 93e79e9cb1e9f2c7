"""The code-mode child process: runs one Starlark script under hard limits.

Started by :mod:`tui_agent.codemode.sandbox` as ``python -I child.py``. It imports
only the standard library and ``starlark``, so it starts in a few tens of
milliseconds and shares nothing with the app. Messages are JSON lines:

parent → child: ``{"op": "run", "code", "bindings", "limits"}`` once, then one
``{"op": "reply", "ok", "value" | "error", "paused"}`` per call.

child → parent: ``{"op": "call", "key", "args", "name"}``, ``{"op": "log", "text"}``,
and last ``{"op": "done", "result"}`` or ``{"op": "error", "text", "failure"}``.

The address-space and CPU limits are set here, after the imports, so the memory
limit is what the script itself may use. A script that allocates past it dies
(Rust aborts); one that spins past the CPU limit gets SIGXCPU: the parent reports
both. The wall clock is checked by Starlark every ~1,000 instructions.
"""

from __future__ import annotations

import json
import math
import resource
import sys
import time
from typing import Any

import starlark as sl

OUT = sys.stdout


def send(message: dict[str, Any]) -> None:
    OUT.write(json.dumps(message, ensure_ascii=False) + "\n")
    OUT.flush()


def receive() -> dict[str, Any]:
    line = sys.stdin.readline()
    if not line:  # the parent is gone: nothing left to do
        sys.exit(3)
    message: dict[str, Any] = json.loads(line)
    return message


def vm_size() -> int:
    """Bytes of address space in use now."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for row in status:
                if row.startswith("VmSize:"):
                    return int(row.split()[1]) * 1024
    except OSError:
        pass
    return 0


def show(value: Any) -> str:
    """A value as Starlark's ``str()`` would print it."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False).replace("null", "None") \
        .replace("true", "True").replace("false", "False")


class ToolCallFailed(Exception):
    """Raised inside a binding; Starlark stops the script with its message."""


def measure(module: Any, dialect: Any, globals_: Any) -> int:
    """The result's size as JSON, measured inside Starlark, so a huge result is refused
    without copying it into Python (0 when it cannot be measured: checked again later)."""
    try:
        size = sl.eval(module, sl.parse("size.star", "len(json.encode(result))", dialect),
                       globals_)
    except sl.StarlarkError:
        return 0
    return size if isinstance(size, int) else 0


def too_big(size: int, max_output: int) -> dict[str, Any]:
    return {"op": "error", "type": "limit", "text": "", "failure": {
        "kind": "limit", "message": f"the result is {size:,} bytes as JSON, over the "
        f"max_output limit of {max_output:,} bytes: return less (a summary, a count, a slice)"}}


def main() -> None:
    job = receive()
    limits: dict[str, Any] = job["limits"]
    max_output = int(limits["max_output"])
    cpu = max(1, math.ceil(float(limits["max_cpu"])))
    memory = vm_size() + int(limits["max_memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    deadline = time.monotonic() + float(limits["timeout"])
    failures: list[dict[str, Any]] = []
    logged = 0

    def log(*args: Any, sep: str = " ", **_: Any) -> None:
        nonlocal logged
        if logged > max_output:
            return
        text = sep.join(show(a) for a in args)
        logged += len(text.encode()) + 1
        if logged > max_output:
            text = "[logs cut: over the max_output limit of the script]"
        send({"op": "log", "text": text})

    def binding(key: str, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal deadline
            if args:
                raise ToolCallFailed(f"{name}() takes keyword arguments only, e.g. "
                                     f"{name}(name=value); see its stub with readToolFile")
            send({"op": "call", "key": key, "name": name, "args": kwargs})
            reply = receive()
            deadline += float(reply.get("paused", 0.0))
            if reply.get("ok"):
                return reply.get("value")
            failures.append(reply["error"])
            raise ToolCallFailed(reply["error"]["message"])
        return call

    dialect = sl.Dialect.standard()
    dialect.enable_top_level_stmt = True
    dialect.enable_f_strings = True
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.Json, sl.LibraryExtension.StructType,
                                       sl.LibraryExtension.Map, sl.LibraryExtension.Filter,
                                       sl.LibraryExtension.Partial])
    module = sl.Module()
    module.add_callable("print", log)
    prelude = []
    for n, (server, tools) in enumerate(sorted(job["bindings"].items())):
        fields = []
        for m, (tool, key) in enumerate(sorted(tools.items())):
            handle = f"_tool_{n}_{m}"
            module.add_callable(handle, binding(key, f"{server}.{tool}"))
            fields.append(f"{tool} = {handle}")
        prelude.append(f"{server} = struct({', '.join(fields)})")
    options = sl.EvalOptions(check_cancelled=lambda: time.monotonic() > deadline,
                             max_callstack_size=int(limits["max_depth"]))
    try:
        if prelude:
            sl.eval(module, sl.parse("prelude.star", "\n".join(prelude), dialect), globals_)
        ast = sl.parse("script.star", job["code"], dialect)
        sl.eval_with(options, module, ast, globals_)
        size = measure(module, dialect, globals_)
        if size > max_output:
            send(too_big(size, max_output))
            return
        result = module["result"]
        encoded = json.dumps(result, ensure_ascii=False)
    except BaseException as exc:  # StarlarkError, PanicException (a BaseException), MemoryError
        if isinstance(exc, SystemExit):
            raise
        send({"op": "error", "text": str(exc)[-20_000:], "type": type(exc).__name__,
              "failure": failures[-1] if failures else None})
        return
    if len(encoded.encode()) > max_output:
        send(too_big(len(encoded.encode()), max_output))
        return
    OUT.write('{"op": "done", "result": ' + encoded + "}\n")
    OUT.flush()


if __name__ == "__main__":
    main()
