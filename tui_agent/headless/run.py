"""``tui-agent run``: one turn (or a line-mode chat) without the TUI.

Output is the event stream, as text (the reply on stdout, tool activity and
errors on stderr) or as JSON lines. Exit codes: 0 done, 1 the turn failed or
stopped early, 2 bad usage or configuration, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from tui_agent.config import Settings, mask, paths
from tui_agent.config.interpolate import StreamMasker, mask_json
from tui_agent.core.agent import Agent
from tui_agent.core.approval import (
    ApprovalStore,
    ApproveAll,
    Decision,
    DenyAll,
    Gate,
    PendingCall,
    Policy,
    ServerRules,
)
from tui_agent.core.events import (
    ApprovalDecided,
    ErrorOccurred,
    Event,
    Notice,
    Retrying,
    SessionStarted,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnDone,
)
from tui_agent.core.filters import ToolFilter
from tui_agent.core.llm import LLM, LLMError
from tui_agent.core.scripts import CodeMode
from tui_agent.core.session import Conversation, SessionError, SessionStore, SessionWriter, load
from tui_agent.core.tools import NoTools, ToolSource
from tui_agent.tools.metrics import write_report
from tui_agent.tools.text import StreamCleaner, clean

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
LATEST = "\0latest"
"""``--resume`` given without an id."""


class Printer(Protocol):
    def show(self, event: Event) -> None: ...


@dataclass
class TextPrinter:
    """The reply on stdout as it streams; tool activity, notices and errors on stderr."""

    out: IO[str]
    err: IO[str]
    secrets: frozenset[str] = frozenset()
    _mid_line: bool = field(default=False, init=False)
    _masker: StreamMasker = field(init=False)
    _cleaner: StreamCleaner = field(init=False, default_factory=StreamCleaner)
    _inner: set[str] = field(init=False, default_factory=set)
    """Ids of calls made by scripts: their lines are indented under the script."""

    def __post_init__(self) -> None:
        self._masker = StreamMasker(self.secrets)

    def _text(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()
            self._mid_line = not text.endswith("\n")

    def _note(self, text: str) -> None:
        self._text(self._masker.feed(self._cleaner.flush()) + self._masker.flush())
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
        self.err.write(mask(text, self.secrets) + "\n")
        self.err.flush()

    def show(self, event: Event) -> None:
        match event:
            case TextDelta(delta=delta):
                self._text(self._masker.feed(self._cleaner.feed(delta)))
            case ToolCallStarted(name="executeToolCode", arguments={"code": str(code)},
                                 parent=None):
                lines = clean(code).splitlines()
                shown = "".join(f"\n    | {row}" for row in lines[:40])
                more = f"\n    | ... {len(lines) - 40} more lines" if len(lines) > 40 else ""
                self._note(f"→ executeToolCode (a script):{shown}{more}")
            case ToolCallStarted(id=call_id, name=name, arguments=args, parent=parent):
                shown = clean(json.dumps(args, ensure_ascii=False))
                indent = "    " if parent else ""
                if parent:
                    self._inner.add(call_id)
                self._note(f"{indent}→ {clean(name)} {shown[:300]}"
                           f"{'…' if len(shown) > 300 else ''}")
            case ApprovalDecided(decision="denied", reason=reason):
                self._note(f"  denied{f': {clean(reason)}' if reason else ''}")
            case ToolResult(id=call_id, is_error=is_error, text=text):
                first = clean(text).strip().splitlines()[0][:200] if text.strip() else "(empty)"
                indent = "      " if call_id in self._inner else "  "
                self._note(f"{indent}{'✗' if is_error else '←'} {first}")
            case Retrying(attempt=n, max_attempts=total, delay=delay, reason=reason):
                self._note(f"retry {n}/{total} in {delay:.1f} s: {reason}")
            case ErrorOccurred(message=message):
                self._note(f"error: {clean(message)}")
            case Notice(message=message):
                self._note(f"note: {clean(message)}")
            case TurnDone():
                self._text(self._masker.feed(self._cleaner.flush()) + self._masker.flush())
                if self._mid_line:
                    self.out.write("\n")
                    self._mid_line = False
                self.out.flush()


@dataclass
class JsonPrinter:
    """One JSON object a line, the ``--output jsonl`` contract."""

    out: IO[str]
    secrets: frozenset[str] = frozenset()
    _masker: StreamMasker = field(init=False)

    def __post_init__(self) -> None:
        self._masker = StreamMasker(self.secrets)

    def show(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            text = self._masker.feed(event.delta)
            if text:
                self._line(TextDelta(text).to_json())
            return
        held = self._masker.flush()
        if held:
            self._line(TextDelta(held).to_json())
        self._line(event.to_json())

    def _line(self, payload: dict[str, Any]) -> None:
        self.out.write(mask_json(json.dumps(payload), self.secrets) + "\n")
        self.out.flush()


class TerminalGate:
    """``--approve ask``: asks on the controlling terminal, even when stdin is a pipe."""

    def __init__(self, tty_path: str = "/dev/tty") -> None:
        self.tty_path = tty_path

    async def decide(self, call: PendingCall) -> Decision:
        # A daemon thread, not the default executor: if the turn is cancelled while the
        # prompt waits, the blocked read is abandoned instead of holding up the exit.
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Decision] = loop.create_future()

        def ask() -> None:
            try:
                result = self._ask(call)
            except Exception as exc:  # a broken terminal denies; it must not hang the turn
                result = Decision.deny(f"could not ask on the terminal: {exc}")
            def deliver() -> None:
                if not answer.done():  # the turn may have been cancelled meanwhile
                    answer.set_result(result)

            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(deliver)

        threading.Thread(target=ask, name="approval-prompt", daemon=True).start()
        return await answer

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
        tty.write(f"\n? {clean(call.server)} wants to run {clean(call.tool)} "
                  f"({clean(call.why)})\n")
        if call.description:
            tty.write(f"  {clean(call.description).splitlines()[0][:200]}\n")
        tty.write("  arguments: " + args.replace("\n", "\n  ") + "\n")
        if call.parent:
            tty.write(f"  called by the script {clean(call.parent)} (shown above)\n")
        while True:
            always = "  [a] always allow" if call.fingerprint else ""
            rest = "  [s] approve all calls of this script" if call.parent else ""
            tty.write(f"  [y] approve once{always}{rest}  [n] deny  [r] deny with a reason: ")
            tty.flush()
            answer = tty_in.readline()
            if not answer:
                return Decision.deny("no answer (end of input)")
            choice = answer.strip().lower()
            if choice in ("y", "yes"):
                return Decision.approve()
            if choice in ("a", "always") and always:
                return Decision.approve("always allowed", always=True)
            if choice in ("s", "script") and rest:
                return Decision.whole_script()
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


def policy_from(settings: Settings, tool_filter: ToolFilter | None = None) -> Policy:
    """The config's per-server rules. "Always allow" answers are written back to the file
    each server came from, and the definitions they trust are pinned in the state dir."""
    from tui_agent.config.loader import retrust
    from tui_agent.config.writeback import edit_list

    def persist(server: str, field: str, tool: str, add: bool) -> None:
        origin = settings.origins.get(server)
        if origin is not None:
            edit_list(origin, field, tool, add=add)
            if settings.project is not None and origin.file in settings.project.files:
                retrust(settings)

    return Policy({name: ServerRules(tuple(s.allow), tuple(s.auto), tuple(s.ask), tuple(s.deny))
                   for name, s in settings.config.servers.items()},
                  ApprovalStore(paths.state_dir() / "approvals.json"), persist,
                  tool_filter or ToolFilter())


@dataclass
class Run:
    """Everything one headless run needs, built from the parsed command line."""

    settings: Settings
    prompt: str | None
    approve: str
    output: str
    session_file: Path | None = None
    resume: str | None = None
    tools: ToolSource = field(default_factory=NoTools)
    tool_filter: ToolFilter = field(default_factory=ToolFilter)


def open_session(run: Run, model: str | None) -> tuple[SessionWriter, Conversation | None]:
    """The session to write: resumed (``--resume``), named (``--session``), or new."""
    secrets = run.settings.secrets
    store = SessionStore(paths.sessions_dir())
    conv: Conversation | None = None
    if run.resume is not None:
        conv = load(store.find(None if run.resume == LATEST else run.resume))
    elif run.session_file is not None and run.session_file.exists():
        conv = load(run.session_file)
    if conv is not None:
        return SessionWriter.resume(conv, secrets), conv
    path = run.session_file or store.new_path()
    return SessionWriter.create(path, {"model": model, "cwd": os.getcwd()}, secrets), None


def execute(run: Run, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """Run the turn(s) and return the exit code. Prints problems itself."""
    model = run.settings.config.model
    llm = LLM(model)
    try:
        llm.check()
    except LLMError as exc:
        err.write(f"tui-agent: {exc}\n")
        return EXIT_USAGE if exc.is_config else EXIT_FAILED
    try:
        writer, conv = open_session(run, model.name)
    except SessionError as exc:
        err.write(f"tui-agent: {exc}\n")
        return EXIT_USAGE
    printer: Printer = (JsonPrinter(out, run.settings.secrets) if run.output == "jsonl"
                        else TextPrinter(out, err, run.settings.secrets))
    agent = Agent(llm, run.tools, make_gate(run.approve), settings=run.settings.config.agent,
                  policy=policy_from(run.settings, run.tool_filter), session=writer,
                  system_prompt=model.system_prompt,
                  history=conv.messages if conv else (),
                  code_mode=CodeMode(run.settings.config.code_mode, run.settings.config.servers))
    printer.show(SessionStarted(writer.id, str(writer.path), resumed=conv is not None))
    try:
        code = asyncio.run(_drive(run, agent, printer, out))
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    finally:
        writer.close()
    if code == EXIT_INTERRUPTED:
        err.write("\ntui-agent: interrupted; the conversation so far is saved "
                  f"(tui-agent run --resume {writer.id} ...)\n")
    return code


async def _drive(run: Run, agent: Agent, printer: Printer, out: IO[str]) -> int:
    """The run inside one event loop: MCP servers start in the background, the turn (or
    the line-mode chat) runs, and every server is closed however it ends. SIGTERM and
    SIGHUP cancel like Ctrl-C does, so the closing still happens; a second one exits at
    once."""
    hub = open_hub(run.settings)
    check: asyncio.Task[None] | None = None
    if hub is not None:
        hub.start()
        agent.tools = hub
        if run.tool_filter.tools is not None or run.tool_filter.exclude_tools:
            check = asyncio.create_task(_check_tool_patterns(hub, run.tool_filter, printer))
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    signals = [0]

    def stop() -> None:  # the first signal cancels the turn; a second leaves at once
        signals[0] += 1
        if signals[0] > 1:
            os._exit(EXIT_INTERRUPTED)  # every message is on disk already
        if main is not None:
            main.cancel()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop)
    try:
        if run.prompt is None:
            from tui_agent.repl import chat_loop

            return await chat_loop(agent, printer, out)
        return await one_turn(agent, run.prompt, printer)
    except asyncio.CancelledError:
        return EXIT_INTERRUPTED
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        if check is not None:
            check.cancel()
        if hub is not None:
            await hub.close()
            if agent.session is not None:
                with contextlib.suppress(OSError):
                    write_report(agent.session.path, hub.stats())


async def _check_tool_patterns(hub: Hub, tool_filter: ToolFilter, printer: Printer) -> None:
    """Once every server has listed its tools: say which ``--tools`` / ``--exclude-tools``
    patterns matched none (a typo would otherwise just leave the model without tools)."""
    await hub.wait_all()
    unmatched = tool_filter.unmatched_tools((s.server, s.tool) for s in hub.specs())
    if unmatched:
        known = ", ".join(sorted(s.name for s in hub.specs())) or "none"
        printer.show(Notice(f"tool pattern(s) {', '.join(map(repr, unmatched))} match no "
                            f"tool of the started servers (their tools: {known})"))


def open_hub(settings: Settings, *, with_disabled: bool = False) -> Hub | None:
    """A hub for the enabled servers of ``settings`` (and the disabled ones, in their
    ``disabled`` state, for a front end that can switch them on); None when there are none."""
    servers = {n: s for n, s in settings.config.servers.items()
               if with_disabled or not s.disabled}
    if not servers:
        return None
    from tui_agent.tools.hub import Hub

    return Hub(servers, log_dir=paths.state_dir() / "logs",
               default_timeout=settings.config.agent.tool_timeout)


async def one_turn(agent: Agent, prompt: str, printer: Printer) -> int:
    """Drive one turn to its end, printing every event; the exit code of the turn."""
    code = EXIT_FAILED
    async with aclosing(agent.run_turn(prompt)) as events:
        async for event in events:
            printer.show(event)
            if isinstance(event, ErrorOccurred) and event.kind in LLMError.CONFIG_KINDS:
                code = EXIT_USAGE
            elif isinstance(event, TurnDone) and event.reason == "end":
                code = EXIT_OK
    return code


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a run like Ctrl-C does (SIGINT is asyncio's own)."""


def install_sigterm() -> None:
    """SIGTERM and SIGHUP end a run like Ctrl-C does: the turn is cancelled, the servers
    are closed and the session kept."""
    def raise_interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        signal.signal(sig, raise_interrupt)


def read_prompt(words: list[str], stdin: IO[str]) -> str | None:
    """The prompt from the arguments, or from stdin for ``-``; None means line-mode chat."""
    if words == ["-"]:
        return stdin.read()
    if words:
        return " ".join(words)
    return None
