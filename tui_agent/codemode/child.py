"""The code-mode child process: runs one Starlark script under hard limits.

Started by :mod:`tui_agent.codemode.sandbox` as ``python -I -S child.py DIR``, DIR
being where ``starlark`` is installed (``-S`` skips ``site``, which costs more than the
rest of the start). It imports only the standard library and ``starlark``, so it starts
in about 20 milliseconds and shares nothing with the app. Messages are JSON lines:

parent → child: ``{"op": "run", "code", "bindings", "limits"}`` once, then one
``{"op": "reply", "ok", "value" | "error", "paused"}`` per call.

child → parent: ``{"op": "call", "key", "args", "name"}``, ``{"op": "log", "text"}``,
and last ``{"op": "done", "result"}`` or ``{"op": "error", "text", "failure"}``.

The address-space and CPU limits are set here, after the imports, so the memory
limit is what the script itself may use. A script that allocates past it dies
(Rust aborts); one that spins past the CPU limit gets SIGXCPU: the parent reports
both. The wall clock is checked by Starlark every ~1,000 instructions. :func:`harden`
also makes the process die with its parent and takes away new processes, files,
privileges, programs and sockets (seccomp, on Linux).
"""

from __future__ import annotations

import contextlib
import json
import math
import resource
import sys
import time

TYPE_CHECKING = False  # typing itself costs 2 ms of the child's start
if TYPE_CHECKING:
    from typing import Any

if len(sys.argv) > 1:
    sys.path.insert(0, sys.argv[1])
import starlark as sl  # noqa: E402 (found through the directory given)

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


class ToolCallFailed(Exception):
    """Raised inside a binding; Starlark stops the script with its message."""


def too_big(size: int, max_output: int) -> dict[str, Any]:
    return {"op": "error", "type": "limit", "text": "", "failure": {
        "kind": "limit", "message": f"the result is {size:,} bytes as JSON, over the "
        f"max_output limit of {max_output:,} bytes: return less (a summary, a count, a slice)"}}


MB = 1 << 20
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
DENIED = {  # execve, execveat, ptrace, socket, socketpair, connect, fork, vfork
    "x86_64": (0xC000003E, (59, 322, 101, 41, 53, 42, 57, 58)),
    "aarch64": (0xC00000B7, (221, 281, 117, 198, 199, 203)),
}
"""Per machine: its audit architecture and the system calls a script's process is refused."""
X32 = 0x40000000


def harden(limits: dict[str, Any]) -> None:
    """Once the imports are done: die with the parent, and take away what a script's
    process never needs (more processes or files, writing files, new privileges, running
    programs, sockets, tracing others). Each step that the system does not offer is
    skipped; the memory and CPU limits are always set."""
    cpu = max(1, math.ceil(float(limits["max_cpu"])))
    memory = vm_size() + int(limits["max_memory_mb"]) * MB
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    for which, value in ((resource.RLIMIT_NPROC, 0), (resource.RLIMIT_NOFILE, 16),
                         (resource.RLIMIT_FSIZE, 0)):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (value, value))
    if not sys.platform.startswith("linux"):
        return  # elsewhere the child ends at the end of its input: the parent's death
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() != int(os.environ.get("TUI_AGENT_SANDBOX_PARENT", os.getppid())):
        os._exit(3)  # the parent died before the line above: nobody to answer to
    machine = os.uname().machine
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or machine not in DENIED:
        return
    arch, calls = DENIED[machine]
    libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(seccomp_filter(arch, calls)))


def seccomp_filter(arch: int, calls: tuple[int, ...]) -> Any:
    """A classic-BPF program: kill a call from another architecture, refuse ``calls``
    with EPERM, allow the rest."""
    import ctypes

    class Rule(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Rule))]

    load, jeq, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET
    allow, refuse, kill = 0x7FFF0000, 0x00050000 | 1, 0x80000000  # ALLOW, ERRNO(EPERM), KILL
    rules = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, kill), (load, 0, 0, 0),
             (0x35, len(calls) + 1, 0, X32)]  # BPF_JGE: x86's x32 numbering, refused
    for n, call in enumerate(calls):
        rules.append((jeq, len(calls) - n, 0, call))
    rules += [(ret, 0, 0, allow), (ret, 0, 0, refuse)]
    array = (Rule * len(rules))(*(Rule(*r) for r in rules))
    program = Program(len(rules), array)
    program._keep = array
    return program


PRINT = ('def print(*args, sep = " ", **_options):\n'
         '    _log(sep.join([str(a) for a in args]))')
"""``print`` turns its values to text in Starlark itself, so ``nan`` stays "nan" and the
string "null" is not rewritten."""


def main() -> None:
    # What needs no job is done before waiting for one (a spare child waits here).
    import ctypes  # noqa: F401 (for harden, loaded ahead)

    dialect = sl.Dialect.standard()
    dialect.enable_top_level_stmt = True
    dialect.enable_f_strings = True
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.Json, sl.LibraryExtension.StructType,
                                       sl.LibraryExtension.Map, sl.LibraryExtension.Filter,
                                       sl.LibraryExtension.Partial])
    job = receive()
    limits: dict[str, Any] = job["limits"]
    max_output = int(limits["max_output"])
    max_transfer = int(limits["max_transfer"])
    harden(limits)

    deadline = time.monotonic() + float(limits["timeout"])
    failures: list[dict[str, Any]] = []
    logged = 0

    def log(text: str) -> None:
        nonlocal logged
        if logged > max_output:
            return
        logged += len(text.encode()) + 1
        if logged > max_output:
            text = "[logs cut: over the max_output limit of the script]"
        send({"op": "log", "text": text})

    def fail(kind: str, message: str) -> ToolCallFailed:
        failures.append({"kind": kind, "message": message})
        return ToolCallFailed(message)

    def binding(key: str, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            nonlocal deadline
            if args:
                raise fail("runtime", f"{name}() takes keyword arguments only, e.g. "
                           f"{name}(name=value); see its stub with readToolFile")
            arguments = json.dumps(kwargs, ensure_ascii=False)
            if len(arguments) > max_transfer // 4 and len(arguments.encode()) > max_transfer:
                raise fail("limit", f"{name}(): its arguments are {len(arguments.encode()):,} "
                           f"bytes as JSON, over the {max_transfer // MB} MB one call may "
                           "carry out of a script (code_mode max_transfer_mb)")
            OUT.write(f'{{"op": "call", "key": {json.dumps(key)}, "name": {json.dumps(name)}, '
                      f'"args": {arguments}}}\n')
            OUT.flush()
            reply = receive()
            deadline += float(reply.get("paused", 0.0))
            if reply.get("ok"):
                return reply.get("value")
            failures.append(reply["error"])
            raise ToolCallFailed(reply["error"]["message"])
        return call

    module = sl.Module()
    module.add_callable("_log", log)
    prelude = [PRINT, "result = None"]
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
        sl.eval(module, sl.parse("prelude.star", "\n".join(prelude), dialect), globals_)
        ast = sl.parse("script.star", job["code"], dialect)
        sl.eval_with(options, module, ast, globals_)
        encoded = encode(module, dialect, globals_, max_output)
    except BaseException as exc:  # StarlarkError, PanicException (a BaseException), MemoryError
        if isinstance(exc, SystemExit):
            raise
        send({"op": "error", "text": str(exc)[-20_000:], "type": type(exc).__name__,
              "failure": failures[-1] if failures else None})
        return
    size = encoded if isinstance(encoded, int) else len(encoded.encode())
    if isinstance(encoded, int) or size > max_output:
        send(too_big(size, max_output))
        return
    OUT.write('{"op": "done", "result": ' + encoded + "}\n")
    OUT.flush()


def encode(module: Any, dialect: Any, globals_: Any, max_output: int) -> str | int:
    """The ``result`` variable as JSON, encoded once, by Starlark; only its size when
    that is over ``max_output`` (it is then never copied out of Starlark)."""
    code = "result_json__ = json.encode(result)\nresult_size__ = len(result_json__)"
    sl.eval(module, sl.parse("result.star", code, dialect), globals_)
    size = module["result_size__"]
    return size if isinstance(size, int) and size > max_output else str(module["result_json__"])


if __name__ == "__main__":
    main()
