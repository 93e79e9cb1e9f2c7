"""``--approve``: the gate of a headless run. ``ask`` asks on the controlling terminal
(even when stdin is a pipe), ``auto`` approves every allowed tool, ``deny`` denies every
tool that is not auto-approved."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from typing import IO, TypeVar

from tui_agent.core.permissions import ApproveAll, Decision, DenyAll, Gate, PendingCall
from tui_agent.tools.text import clean

T = TypeVar("T")


class TerminalGate:
    """``--approve ask``: asks on the controlling terminal, even when stdin is a pipe."""

    asks_person = True

    def __init__(self, tty_path: str = "/dev/tty") -> None:
        self.tty_path = tty_path

    async def decide(self, call: PendingCall) -> Decision:
        return await in_daemon_thread(
            lambda: self._ask(call),
            lambda exc: Decision.deny(f"could not ask on the terminal: {exc}"),
            "approval-prompt")

    def _ask(self, call: PendingCall) -> Decision:
        try:  # a tty is not seekable, so "r+" cannot open it: one handle each way
            tty_in = open(self.tty_path, encoding="utf-8")  # noqa: SIM115
            tty = open(self.tty_path, "w", encoding="utf-8")  # noqa: SIM115
        except OSError:
            return Decision.deny("no terminal to ask on (use --approve auto or deny)")
        with tty_in, tty:
            return self._dialogue(call, tty_in, tty)

    def _dialogue(self, call: PendingCall, tty_in: IO[str], tty: IO[str]) -> Decision:
        args = clean(json.dumps(call.arguments, indent=2, ensure_ascii=False))
        asker = f" for the agent {clean(call.agent)}" if call.agent else ""
        tty.write(f"\n? {clean(call.server)} wants to run {clean(call.tool)}{asker} "
                  f"({clean(call.why)})\n")
        if call.description:
            tty.write(f"  {clean(call.description).splitlines()[0][:200]}\n")
        if call.hints:
            tty.write(f"  the server says it is: {', '.join(call.hints)}\n")
        arguments = "  arguments: " + args.replace("\n", "\n  ") + "\n"
        change = call.change
        if change is None:
            tty.write(arguments)
        else:
            what = "creates" if change.new_file else "changes"
            tty.write(f"  {what} {clean(change.summary())}\n")
            tty.writelines(f"  ⚠ {clean(warning)}\n" for warning in change.warnings)
            tty.write("".join(f"  {line}" for line in clean(change.diff).splitlines(True)))
        if call.parent:
            tty.write(f"  called by the script {clean(call.parent)} (shown above)\n")
            tty.writelines(f"  {line}\n" for line in call.script_scope("[s]"))
        while True:
            always = "  [a] always allow" if call.fingerprint else ""
            script = "  [s] approve the listed tools" if call.script_approvable else ""
            shown = "  [d] show the arguments" if change is not None else ""
            tty.write(f"  [y] approve once{always}{script}{shown}  [n] deny  "
                      "[r] deny with a reason: ")
            tty.flush()
            answer = tty_in.readline()
            if not answer:
                return Decision.deny("no answer (end of input)")
            choice = answer.strip().lower()
            if choice in ("y", "yes"):
                return Decision.approve()
            if choice in ("a", "always") and always:
                return Decision.approve("always allowed", always=True)
            if choice in ("s", "script") and script:
                return Decision.whole_script()
            if choice in ("d", "arguments") and change is not None:
                tty.write(arguments)
                continue
            if choice in ("n", "no", ""):
                return Decision.deny()
            if choice in ("r", "reason"):
                tty.write("  reason: ")
                tty.flush()
                return Decision.deny(tty_in.readline().strip() or None)


def make_gate(mode: str) -> Gate:
    if mode == "auto":
        return ApproveAll()
    if mode == "deny":
        return DenyAll()
    return TerminalGate()


async def in_daemon_thread(ask: Callable[[], T], failed: Callable[[Exception], T],
                           name: str) -> T:
    """``ask()`` (a dialogue on the terminal) in a daemon thread, not the default
    executor: if the turn is cancelled while the prompt waits, the blocked read is
    abandoned instead of holding up the exit. A broken terminal gives ``failed(exc)``:
    it must not hang the turn."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T] = loop.create_future()

    def run() -> None:
        try:
            result = ask()
        except Exception as exc:
            result = failed(exc)

        def deliver() -> None:
            if not answer.done():  # the turn may have been cancelled meanwhile
                answer.set_result(result)

        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(deliver)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await answer
