"""The stand-in for the ``tui-agent`` command that the suite runs (``python -S launch.py
SOCKET ARGS...``, or ``... SOCKET --module=NAME ARGS...`` for ``python -m NAME
ARGS...``): it hands its own stdin, stdout and stderr, environment, working
directory and arguments to the zygote listening on SOCKET, which forks a ready-loaded
``tui-agent`` for it (:mod:`tests.zygote.server`), and then stands for that child: a
SIGINT, SIGTERM or SIGHUP it receives goes on to the child, and it ends as the child
ended (the same exit code, or death by the same signal).

Only ``os``, ``signal``, ``socket`` and ``sys`` are imported, and ``-S`` skips ``site``:
this costs ~20 ms where the real command costs seconds of CPU importing litellm. When no
zygote listens (it is off, or died), or the zygote declines a request it could not serve
faithfully (see :func:`tests.zygote.server.fallback_reason`), the launcher becomes the
real command with ``exec``.

The wire format, shared with the server: the launcher sends one ``sendmsg`` carrying its
fds 0, 1, 2 and an 8-byte length, then that many bytes of NUL-separated fields (the
fields of :func:`encode`; argv and environment are bytes without NUL, as the OS already
requires). The zygote answers with lines: ``P <pid>`` once the child runs, then ``S
<wait status>`` when it has ended; or ``F <reason>`` for "run the real command".
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time

RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def encode(argv: list[bytes], env: dict[bytes, bytes], cwd: bytes, umask: int,
           session: str, ignored: list[int]) -> bytes:
    """The request: working directory, umask, how the launcher stands in its session
    (``session``: ``leader`` when it leads a session, ``group`` when it leads only its
    process group, else ``member``), the signals it inherited as ignored, argv, env."""
    fields = [cwd, b"%d" % umask, session.encode(), b",".join(b"%d" % s for s in ignored),
              b"%d" % len(argv), *argv, *(k + b"=" + v for k, v in env.items())]
    return b"\0".join(fields)


def decode(data: bytes) -> tuple[list[bytes], dict[bytes, bytes], bytes, int, str, list[int]]:
    """The inverse of :func:`encode`."""
    fields = data.split(b"\0")
    cwd, umask, session, ignored, count = fields[:5]
    argv = fields[5:5 + int(count)]
    env = dict(entry.split(b"=", 1) for entry in fields[5 + int(count):] if b"=" in entry)
    return argv, env, cwd, int(umask), session.decode(), [int(s) for s in ignored.split(b",")
                                                           if s]


MODULE = "--module="
"""A first argument ``--module=NAME`` asks for ``python -m NAME`` with the rest as its
arguments instead of ``tui-agent`` (the suite's fake MCP servers and the conformance
client: hundreds of processes that each spent ~0.8 s of CPU importing the MCP SDK)."""


def real_command(args: list[str], ignored: list[int]) -> None:
    """Become the real ``tui-agent``, or ``python -m NAME`` (never returns), with the
    signals the launcher inherited as ignored ignored again (exec resets the relay's
    handlers to the default; it keeps what is ignored)."""
    for signum in ignored:
        signal.signal(signum, signal.SIG_IGN)
    if args and args[0].startswith(MODULE):
        os.execv(sys.executable, [sys.executable, "-m", args[0][len(MODULE):], *args[1:]])
    os.execv(sys.executable, [sys.executable, "-m", "tui_agent", *args])


def session_role() -> str:
    pid = os.getpid()
    if os.getsid(0) == pid:
        return "leader"
    return "group" if os.getpgid(0) == pid else "member"


def request(args: list[str], ignored: list[int]) -> bytes:
    umask = os.umask(0)
    os.umask(umask)
    return encode([a.encode("utf-8", "surrogateescape") for a in args], dict(os.environb),
                  os.getcwdb(), umask, session_role(), ignored)


class Relay:
    """Signals that arrive before the child's pid is known wait for it."""

    def __init__(self) -> None:
        self.pid = 0
        self.pending: list[int] = []
        self.ended = False
        """The zygote reaped the child: its pid may already be another process's."""

    def __call__(self, signum: int, frame: object) -> None:
        if self.ended:
            return
        if self.pid:
            try:  # noqa: SIM105 (contextlib is one import more for a launcher kept light)
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass
        else:
            self.pending.append(signum)

    def start(self, pid: int) -> None:
        self.pid = pid
        for signum in self.pending:
            self(signum, None)


def alive(pid: int) -> bool:
    """Whether ``pid`` (the zygote's child, not ours to wait for) still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve(sock: socket.socket, args: list[str], relay: Relay, ignored: list[int]) -> int:
    """Run through the zygote; the child's wait status, or -1 for "exec the real one"."""
    body = request(args, ignored)
    socket.send_fds(sock, [len(body).to_bytes(8, "big")], [0, 1, 2])
    sock.sendall(body)
    buffer = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            if not relay.pid:
                return -1  # the zygote died before the child ran: start the real command
            # It died with the child running: running the command again would make two
            # agents on one test's stdio and files. Wait for that child; say it failed.
            while alive(relay.pid):
                time.sleep(0.05)
            sys.stderr.write("tests/zygote: the fork server died during the run\n")
            return 1 << 8
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            kind, _, value = line.decode().partition(" ")
            if kind == "F":
                return -1
            if kind == "P":
                relay.start(int(value))
            elif kind == "S":
                relay.ended = True
                return int(value)


def finish(status: int) -> None:
    """End as the child ended: its exit code, or death by its signal."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal that does not kill (none of ours): say it anyway
    os._exit(os.waitstatus_to_exitcode(status))


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    relay = Relay()
    # A signal inherited as ignored (SIGINT under a shell's ``cmd &``) starts ignored in
    # the child too, as in a fresh process; but the command may take it over (the app
    # handles SIGINT), so the launcher relays it all the same: a launcher that kept it
    # ignored dropped the SIGINT the app would have handled.
    ignored = [int(s) for s in RELAYED if signal.getsignal(s) == signal.SIG_IGN]
    for signum in RELAYED:
        signal.signal(signum, relay)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        real_command(args, ignored)
    status = serve(sock, args, relay, ignored)
    if status < 0:
        sock.close()
        real_command(args, ignored)
    finish(status)


if __name__ == "__main__":
    main()
