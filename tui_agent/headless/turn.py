"""One turn on a plain terminal or a pipe: drive it to its end, print every event,
and give the exit code; and where the prompt comes from."""

from __future__ import annotations

from contextlib import aclosing
from typing import IO

from tui_agent.core.agent import Agent
from tui_agent.core.events import ErrorOccurred, TurnDone
from tui_agent.core.llm_errors import LLMError
from tui_agent.headless.printers import Printer

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


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


def read_prompt(words: list[str], stdin: IO[str]) -> str | None:
    """The prompt from the arguments, or from stdin for ``-``; None means line-mode chat."""
    if words == ["-"]:
        return stdin.read()
    if words:
        return " ".join(words)
    return None
