"""``tui-agent run``: one turn (or a line-mode chat) without the TUI.

Output is the event stream, as text (the reply on stdout, tool activity and
errors on stderr) or as JSON lines. Exit codes: 0 done, 1 the turn failed or
stopped early, 2 bad usage or configuration, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tui_agent.core.agent import Agent
from tui_agent.core.attachments import AttachError
from tui_agent.core.events import SessionStarted
from tui_agent.core.llm.errors import LLMError
from tui_agent.core.session import SessionError
from tui_agent.headless import init
from tui_agent.headless.drive import STOP_SIGNALS, drive
from tui_agent.headless.gate import make_gate
from tui_agent.headless.login import terminal_logins
from tui_agent.headless.options import Run as Run
from tui_agent.headless.printers import JsonPrinter, Printer, TextPrinter
from tui_agent.headless.turn import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    attached,
)
from tui_agent.tools.text import clean
from tui_agent.tools.transports import stopping
from tui_agent.wiring import build
from tui_agent.wiring.subagents import local_agents

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub


def execute(run: Run, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """Run the turn(s) and return the exit code. Prints problems itself."""
    if run.max_depth is not None:
        if run.max_depth < 1:
            err.write("tui-agent: --max-depth must be at least 1\n")
            return EXIT_USAGE
        run.settings.config.agent = run.settings.config.agent.model_copy(
            update={"max_depth": run.max_depth})
    if run.compact and run.resume is None and run.session_file is None:
        err.write("tui-agent: --compact needs a conversation to compact: add --resume [ID] "
                  "(or --session FILE)\n")
        return EXIT_USAGE
    if run.prompt is not None and not init.wanted(run.prompt) \
            and not _user_command(run, err):
        return EXIT_USAGE
    # One loop for the whole run: the stdio servers are spawned first, and load while
    # litellm does (the model's check below waits for it); the rest start in drive().
    # A Ctrl-C (or SIGTERM) before the turn ends it there: the servers are stopped at once.
    with asyncio.Runner() as runner:
        made: list[Agent] = []
        hub = runner.run(_hub(run, err, made))
        try:
            if hub is not None:
                runner.run(hub.start_early())
            return _prepared(run, runner, hub, made, out, err)
        except BaseException:
            stopping.hurry()  # the run ends: no server gets the polite seconds to stop
            raise
        finally:
            if hub is not None:  # closed by drive() if it ran: then this is a no-op
                try:
                    runner.run(hub.close())
                except KeyboardInterrupt:  # a second one: leave at once
                    stopping.end_now()
                    raise


async def _hub(run: Run, err: IO[str], made: list[Agent]) -> Hub | None:
    """The run's MCP servers (None: none configured), not started yet. A remote server
    that needs a login (or a wider scope, for a call) gets one as ``--login`` says (by
    default on a terminal only: the browser opens); without one it is reported and the
    turn goes on without it. ``made`` will hold the agent."""
    from tui_agent.headless.elicit import TerminalAsker
    from tui_agent.headless.sampling import terminal_sampler
    from tui_agent.tools.frontdesk import FrontDesk

    complete = build.sampling_complete(lambda: run.settings,
                                       lambda: made[0].llm.model, lambda: run.settings.secrets)
    hub = build.open_hub(run.settings, logins=lambda: terminal_logins(err, run.login),
                         desk=FrontDesk(ask=TerminalAsker(run.elicit, err), project=Path.cwd(),
                                        shared_roots=list(run.settings.config.agent.roots),
                                        sampler=terminal_sampler(run.sampling, complete, err)))
    return hub


def _prepared(run: Run, runner: asyncio.Runner, hub: Hub | None, made: list[Agent],
              out: IO[str], err: IO[str]) -> int:
    """The model checked, the prompt's files read, the session opened, the agent made;
    then the turn(s), in ``runner``'s loop."""
    llm = build.llm(run.settings)
    try:
        llm.check()
    except LLMError as exc:
        err.write(f"tui-agent: {exc}\n")
        return EXIT_USAGE if exc.is_config else EXIT_FAILED
    try:
        files = attached(run.prompt, run.images, llm)
    except AttachError as exc:
        err.write(f"tui-agent: {exc}; nothing was sent\n")
        return EXIT_USAGE
    run.prompt = files.text if run.prompt is not None else None
    run.files = files.attachments
    try:
        writer, conv = build.open_session(run.settings, llm.model, resume=run.resume,
                                          session_file=run.session_file)
    except SessionError as exc:
        err.write(f"tui-agent: {exc}\n")
        return EXIT_USAGE
    printer = printer_for(run, out, err)
    agent = build.agent(run.settings, llm, make_gate(run.approve),
                        build.policy_from(run.settings, run.tool_filter), session=writer,
                        history=conv)
    made.append(agent)
    build.local_skills(run.settings, agent.skills)
    for problem in agent.skills.problems:  # a broken skill is skipped: the run goes on
        err.write(f"tui-agent: warning: skill not offered: {clean(problem)}\n")
    local_agents(run.settings, agent)
    for trouble in agent.subagents.problems:  # a broken agent file: the others are offered
        err.write(f"tui-agent: warning: agent file: {clean(str(trouble))}\n")
    printer.show(SessionStarted(writer.id, str(writer.path), resumed=conv is not None))
    try:
        code = runner.run(drive(run, agent, hub, printer, out, err))
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
        stopping.hurry()
        _wind_down(runner)  # drive's own ending first (SessionEnd, the servers' close)
    finally:
        writer.close()
    if code == EXIT_INTERRUPTED and writer.blank:  # its file is gone: nothing to resume
        err.write("\ntui-agent: interrupted before anything was said; nothing is kept\n")
    elif code == EXIT_INTERRUPTED:
        err.write("\ntui-agent: interrupted; the conversation so far is saved "
                  f"(tui-agent run --resume {writer.id} ...)\n")
    return code


def _wind_down(runner: asyncio.Runner) -> None:
    """Cancel what still runs in ``runner``'s loop and wait for it to end, as leaving
    ``asyncio.run`` would: a Ctrl-C raised out of the turn's loop lets
    :func:`~tui_agent.headless.drive.drive` end (its SessionEnd hooks, the servers'
    close) before the session file is closed."""
    loop = runner.get_loop()
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()

    async def ended() -> None:
        await asyncio.gather(*tasks, return_exceptions=True)

    runner.run(ended())


def _user_command(run: Run, err: IO[str]) -> bool:
    """A prompt ``/name args`` naming a command file is its expanded body (and its
    ``model`` the run's); a ``/name`` that names none is sent as it is, as before. The
    command files that could not be used are said when a prompt starts with ``/``. False
    (said on ``err``) when the command's model cannot be used."""
    from tui_agent.config import ConfigError
    from tui_agent.config.printable import clean
    from tui_agent.wiring import user_commands

    assert run.prompt is not None
    if user_commands.invoked(run.prompt) is None:
        return True
    commands = user_commands.registry(run.settings, built_in=())
    for problem in commands.problems:
        err.write(f"tui-agent: warning: {clean(str(problem))}\n")
    found = user_commands.run(commands, run.prompt)
    if found is None:
        return True
    name, expansion = found
    note = user_commands.unrun_note(name, expansion)
    if note:
        err.write(f"tui-agent: {clean(note)}\n")
    run.prompt = expansion.text
    if expansion.model:
        try:
            flags = run.settings.flags  # --api-base and --reasoning-effort still apply
            run.settings.override(model=expansion.model, api_base=flags.api_base,
                                  reasoning_effort=flags.reasoning_effort)
        except ConfigError as exc:
            err.write(f"tui-agent: /{name} asks for the model {expansion.model}: {exc}\n")
            return False
    return True


def printer_for(run: Run, out: IO[str], err: IO[str]) -> Printer:
    """How ``run`` shows its events (``--output``, ``--verbose``, ``--show-reasoning``)."""
    if run.output == "jsonl":
        return JsonPrinter(out, run.settings.secrets, run.verbose)
    return TextPrinter(out, err, run.settings.secrets, run.verbose,
                       reasoning=run.show_reasoning)


def install_sigterm() -> None:
    """SIGTERM and SIGHUP end a run like Ctrl-C does: the turn is cancelled, the servers
    are closed and the session kept."""
    def raise_interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        signal.signal(sig, raise_interrupt)
