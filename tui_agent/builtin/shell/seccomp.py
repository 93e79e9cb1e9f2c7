"""A seccomp filter, handed to bwrap (``--seccomp FD``), that refuses to create Unix
domain sockets inside the sandbox.

Why: a path socket (``/run/user/UID/bus``, the Docker engine's ``docker.sock``, an ssh
or gpg agent, an IDE's helper) can be connected to through a read-only bind mount, and
``--unshare-net`` does not cover it; what answers on the other side runs outside the
sandbox, with the network (the Docker engine gives root). Hiding the known places is not
enough, since such sockets can live anywhere a command can see, so ``socket(AF_UNIX, ...)``
fails with ``EPERM`` ("Operation not permitted"), as in Claude Code's sandbox.
``socketpair`` (a private pair, no path) still works, so pipes between a command's own
processes do.

The program is a few classic BPF instructions written out here (no libseccomp): on the
machine's own architecture, ``socket`` with ``AF_UNIX`` is refused and x32 system calls are
refused (another way in to ``socket``); system calls of another architecture (32-bit
binaries, whose ``socketcall`` multiplexes ``socket``) are refused too. On an architecture
this module does not know, :func:`program` is None and the sandbox goes without it."""

from __future__ import annotations

import os
import platform
import struct

_ARCHES = {
    # machine: (AUDIT_ARCH_*, the number of the socket system call)
    "x86_64": (0xC000003E, 41),
    "aarch64": (0xC00000B7, 198),
}
_AF_UNIX = 1
_X32_BIT = 0x40000000
_LD_W_ABS = 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35      # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06      # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM = 1
_NR, _ARCH, _ARG0 = 0, 4, 16
"""Offsets in ``struct seccomp_data`` (the first argument's low half on little-endian)."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter as bwrap reads it (``struct sock_filter`` array), or None on an
    architecture without an entry here."""
    known = _ARCHES.get(machine or platform.machine())
    if known is None:
        return None
    arch, socket_nr = known
    deny = _op(_RET_K, _ERRNO | _EPERM)
    allow = _op(_RET_K, _ALLOW)
    return b"".join([
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, arch, 0, 6),          # another architecture: to deny
        _op(_LD_W_ABS, _NR),
        _op(_JGE_K, _X32_BIT, 4, 0),      # x32: to deny
        _op(_JEQ_K, socket_nr, 0, 2),     # not socket(): to allow
        _op(_LD_W_ABS, _ARG0),
        _op(_JEQ_K, _AF_UNIX, 1, 0),      # AF_UNIX: to deny
        allow,
        deny,
    ])


def pipe_with(data: bytes) -> int:
    """A pipe's read end holding ``data`` (the writer closed), for bwrap to read; the
    caller passes it to the child and closes it after the start."""
    read, write = os.pipe()
    try:
        os.write(write, data)  # a few dozen bytes: far below the pipe's buffer
    finally:
        os.close(write)
    return read
