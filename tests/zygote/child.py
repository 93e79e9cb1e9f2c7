"""A forked child of the zygote turns into the ``tui-agent`` process its launcher asked
for: everything a fresh ``python -m tui_agent`` would get from its parent (stdio, working
directory, umask, environment, argv, session, signal dispositions) is set from the
request, then the command's ``__main__`` runs as ``python -m`` runs it.

What stays the zygote's: the modules already imported (the point), ``sys.flags``, the
hash seed, ``/proc/<pid>/environ`` (the kernel's copy of the zygote's own environment;
``os.environ`` and what the child's own children inherit are the request's), and the
parent pid (the zygote, which reaps the child and tells the launcher how it ended).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import runpy
import signal
import sys
import traceback
from collections.abc import Iterable, Sequence
from typing import IO, Any

MAIN = "tui_agent"
zygote_pythonpath = os.environ.get("PYTHONPATH", "")
"""Read as the zygote imports this module, before any child replaced the environment."""


def become(argv: list[bytes], env: dict[bytes, bytes], cwd: bytes, umask: int, session: str,
           ignored: Sequence[int], fds: Sequence[int]) -> None:
    """Take on the launcher's process state; the zygote's own fds are closed by then."""
    if session == "leader":
        os.setsid()
    elif session == "group":
        os.setpgid(0, 0)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    reset_signals(ignored)
    os.chdir(cwd)
    os.umask(umask)
    os.environ.clear()
    for key, value in env.items():
        os.environb[key] = value
    sys.argv = [os.fsdecode(a) for a in argv]
    sys.path[:] = search_path(sys.path, os.getcwd(), zygote_pythonpath,
                              os.environ.get("PYTHONPATH", ""))
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    fresh_stdio()


def search_path(path: list[str], cwd: str, old: str, new: str) -> list[str]:
    """``sys.path`` as ``python -m`` in ``cwd`` with ``PYTHONPATH=new`` has it: the
    working directory, then ``new``'s entries, then the zygote's own site directories
    (``path`` without its first entry and its own ``PYTHONPATH``, ``old``)."""
    def entries(value: str) -> list[str]:
        return [p for p in value.split(os.pathsep) if p]
    site = path[1 + len(entries(old)):]
    return [cwd, *entries(new), *site]


def reset_signals(ignored: Iterable[int]) -> None:
    """The dispositions a fresh Python starts with (SIGINT raises KeyboardInterrupt,
    SIGPIPE is ignored so a closed pipe is an error, the rest as the OS gives them),
    except the signals the launcher itself inherited as ignored, which stay ignored."""
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
                   signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGWINCH):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    for number in ignored:
        signal.signal(number, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def fresh_stdio() -> None:
    """New ``sys.stdin``/``stdout``/``stderr`` over the new fds 0, 1, 2, built as CPython
    builds them at start-up: a terminal gets line buffering, stderr always does,
    ``PYTHONUNBUFFERED`` writes through. The zygote's own objects stay open (they wrap
    the same fd numbers): a logging handler made at import time still holds one, and is
    moved to the new object."""
    old = (sys.stdout, sys.stderr)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    encoding = os.environ.get("PYTHONIOENCODING", "").split(":")[0] or "utf-8"
    for name, fd, errors in (("stdin", 0, "strict"), ("stdout", 1, "strict"),
                             ("stderr", 2, "backslashreplace")):
        stream = _stream(fd, f"<{name}>", encoding, errors, unbuffered and fd != 0)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)  # what Textual and our exits reach for
    _move_handlers(dict(zip(old, (sys.stdout, sys.stderr), strict=True)))


def _stream(fd: int, name: str, encoding: str, errors: str,
            unbuffered: bool) -> io.TextIOWrapper:
    writing = fd != 0
    raw = io.FileIO(fd, "wb" if writing else "rb", closefd=False)
    raw.name = name  # settable on FileIO, as CPython's start-up sets it
    buffer: Any = raw if writing and unbuffered else (
        io.BufferedWriter(raw) if writing else io.BufferedReader(raw))
    line_buffering = not unbuffered and (raw.isatty() or fd == 2)
    return io.TextIOWrapper(buffer, encoding, errors, newline="\n",
                            line_buffering=line_buffering, write_through=unbuffered)


def _move_handlers(moves: dict[Any, IO[str]]) -> None:
    loggers = [logging.getLogger(), *(logger for logger in logging.Logger.manager.loggerDict
                                      .values() if isinstance(logger, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream in moves:
                handler.setStream(moves[handler.stream])


def run_main(module: str = MAIN) -> int:
    """The command's ``__main__`` (or ``module``'s), as ``python -m`` runs it; the exit
    code a fresh interpreter would end with when it returns instead of calling
    ``os._exit``."""
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code: int = 0
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except KeyboardInterrupt:
        _flush()  # as CPython does: an unhandled Ctrl-C ends the process by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    _flush()
    return code


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
