"""``tui-agent run /init`` (and ``-p /init``): the app's ``/init`` without the TUI. The
turn is an ordinary one with the fixed instruction (the model's tool calls pass the run's
gate as usual); the write of the draft is one more question to the same gate, with its
diff (``--approve auto`` writes, ``deny`` does not, ``ask`` shows the diff on the
terminal). The outcome is one :class:`~tui_agent.core.events.InitDone`: a line on
stderr, or an ``init`` event with ``--output jsonl``.

Exit codes: 0 written, or denied (the person's own answer); 1 the reply held no draft, the
file could not be written, or the turn failed; 2 no project to write in (nothing was
sent to the model).
"""

from __future__ import annotations

from tui_agent.core.agent import Agent
from tui_agent.core.events import InitDone
from tui_agent.core.prompt import init as drafting
from tui_agent.headless.printers import Printer
from tui_agent.headless.turn import EXIT_FAILED, EXIT_OK, EXIT_USAGE, one_turn

CODES = {"written": EXIT_OK, "denied": EXIT_OK, "no_project": EXIT_USAGE}
"""The exit code of each outcome; any other is :data:`EXIT_FAILED`."""


def wanted(prompt: str | None) -> bool:
    """Whether the prompt is ``/init`` (words after it are ignored, as in the app)."""
    return prompt is not None and prompt.strip().split(" ", 1)[0].split("\n", 1)[0] == "/init"


async def init_turn(agent: Agent, printer: Printer) -> int:
    """The ``/init`` turn and the write it drafts, shown on ``printer``; the exit code."""
    reader = agent.prompt.memory_reader
    where = reader.where if reader is not None else None
    path = drafting.target(where) if where is not None else None
    if where is None or path is None:
        printer.show(InitDone("no_project", drafting.NO_PROJECT))
        return EXIT_USAGE
    code = await one_turn(agent, drafting.instruction(path), printer)
    if code != EXIT_OK:
        printer.show(InitDone("failed", f"/init: the turn did not end: {path} not written",
                              str(path)))
        return code
    done = await drafting.settle(agent.gate, where, path,
                                 drafting.last_reply(agent.messages), reads="the next run")
    printer.show(done)
    return CODES.get(done.outcome, EXIT_FAILED)
