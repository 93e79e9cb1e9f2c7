"""The zygote: ``python -m tests.zygote.server SOCKET`` imports what ``tui-agent`` needs
once (:mod:`tests.zygote.preload`), then forks a child per launcher that connects
(:mod:`tests.zygote.launch`), and the child becomes that launcher's ``tui-agent``, or
the ``python -m NAME`` it asked for (:mod:`tests.zygote.child`).

One thread, one ``select`` loop: a fork copies only the thread that forks, so the
zygote never has a second one. The loop watches the listening socket (a request:
fork), each running child's launcher connection (EOF: the launcher was killed, so its
child is too, as the real process would have been), a SIGCHLD wake-up pipe (reap the
child, send its wait status to its launcher), and its own stdin (EOF: the test worker
that started it is gone; exit).

The socket listens before the imports start: a launcher that comes early waits in the
backlog rather than finding no zygote.
"""

from __future__ import annotations

import contextlib
import gc
import os
import selectors
import signal
import socket
import sys
import time

from tests.zygote import child, launch

INTERPRETER_VARS = ("PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE",
                    "PYTHONDEVMODE", "PYTHONWARNINGS", "PYTHONOPTIMIZE", "PYTHONHASHSEED",
                    "PYTHONFAULTHANDLER", "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME",
                    "PYTHONMALLOC", "PYTHONVERBOSE", "PYTHONINSPECT", "PYTHONUTF8",
                    "PYTHONCOERCECLOCALE")
"""Variables a fresh interpreter reads as it starts (or litellm as it is imported, the
``LITELLM_`` ones): a request that sets one otherwise than the zygote had it is run by
the real command instead."""


def fallback_reason(env: dict[str, str]) -> str:
    """Why the zygote cannot stand in for a fresh process with ``env``; empty if it can."""
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", **env}  # the command's own default
    for key in {*INTERPRETER_VARS, *(k for k in env if k.startswith("LITELLM_")),
                *(k for k in os.environ if k.startswith("LITELLM_"))}:
        if env.get(key) != os.environ.get(key):
            return f"{key} differs"
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or "C"
    if locale not in ("C", "POSIX") and "utf" not in locale.lower().replace("-", ""):
        return f"locale {locale}"
    return ""


class Zygote:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        os.set_blocking(self.wake_r, False)
        self.children: dict[int, socket.socket] = {}
        self.running = True

    def serve(self) -> None:
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "reap")
        self.selector.register(0, selectors.EVENT_READ, "parent")
        while self.running or self.children:
            for key, _ in self.selector.select(timeout=1.0):
                self.dispatch(key)
            self.reap()

    def dispatch(self, key: selectors.SelectorKey) -> None:
        if key.data == "accept":
            conn, _ = self.listener.accept()
            self.start(conn)
        elif key.data == "reap":
            while len(os.read(self.wake_r, 512)) == 512:
                pass
        elif key.data == "parent":
            if not os.read(0, 512):
                self.selector.unregister(0)
                self.stop()
        else:  # a launcher's connection: readable only at EOF, when the launcher died
            self.selector.unregister(key.fileobj)
            with contextlib.suppress(ProcessLookupError):
                os.kill(key.data, signal.SIGKILL)

    def start(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            head, fds, _, _ = socket.recv_fds(conn, 8, 3)
            size = int.from_bytes(head, "big")
            body = b""
            while len(body) < size:
                chunk = conn.recv(size - len(body))
                if not chunk:
                    raise ConnectionError("the launcher went away")
                body += chunk
        except (OSError, ValueError) as exc:
            print(f"zygote: a bad request: {exc}", file=sys.stderr)
            conn.close()
            return
        if len(fds) != 3:
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        self.fork(conn, launch.decode(body), fds)

    def fork(self, conn: socket.socket, request: tuple[list[bytes], dict[bytes, bytes], bytes,
             int, str, list[int]], fds: list[int]) -> None:
        argv, envb, cwd, umask, session, ignored = request
        reason = fallback_reason({os.fsdecode(k): os.fsdecode(v) for k, v in envb.items()})
        if reason:
            print(f"zygote: the real command runs ({reason})", file=sys.stderr)
            self.answer(conn, f"F {reason}")
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        module = child.MAIN
        if argv and argv[0].startswith(launch.MODULE.encode()):
            module, argv = os.fsdecode(argv[0][len(launch.MODULE):]), argv[1:]
        pid = os.fork()
        if pid == 0:
            self.in_child(conn, [module.encode(), *argv], envb, cwd, umask, session, ignored,
                          fds, module)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn
        self.answer(conn, f"P {pid}")
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, pid)

    def in_child(self, conn: socket.socket, argv: list[bytes], envb: dict[bytes, bytes],
                 cwd: bytes, umask: int, session: str, ignored: list[int],
                 fds: list[int], module: str) -> None:
        """Never returns: whatever happens, the child must not fall back into the loop."""
        code = 1
        try:
            self.selector.close()
            self.listener.close()
            for other in (conn, *self.children.values()):
                other.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            child.become(argv, envb, cwd, umask, session, ignored, fds)
            code = child.run_main(module)
        except BaseException as exc:
            os.write(2, f"zygote child: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(code)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            self.answer(conn, f"S {status}")
            if conn.fileno() >= 0 and conn.fileno() in self.selector.get_map():
                self.selector.unregister(conn)
            conn.close()

    def answer(self, conn: socket.socket, line: str) -> None:
        try:
            conn.setblocking(True)
            conn.sendall(line.encode() + b"\n")
        except OSError:
            pass  # the launcher is gone; nobody is waiting for the answer

    def stop(self) -> None:
        self.running = False
        self.selector.unregister(self.listener)
        self.listener.close()


def main() -> None:
    path = sys.argv[1]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    started = time.monotonic()
    from tests.zygote import preload

    failed = preload.load()
    others = preload.threads()
    if others:  # forking now would hand every child locks nobody can release
        print(f"zygote: threads {others} run after the imports; not serving",
              file=sys.stderr)
        listener.close()
        os.unlink(path)
        return
    print(f"zygote {os.getpid()}: ready in {time.monotonic() - started:.1f} s"
          f"{'; could not import ' + ', '.join(failed) if failed else ''}", file=sys.stderr,
          flush=True)
    gc.freeze()  # the imported objects stay in pages the children share
    Zygote(listener).serve()


if __name__ == "__main__":
    main()
