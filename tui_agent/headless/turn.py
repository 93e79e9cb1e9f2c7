"""One turn on a plain terminal or a pipe: drive it to its end, print every event,
and give the exit code; and where the prompt comes from."""

from __future__ import annotations

from contextlib import aclosing
from pathlib import Path
from typing import IO, Any

from tui_agent.core.agent import Agent
from tui_agent.core.attachments import (
    AttachError,
    Prepared,
    prepare,
    read_attachment,
    refuse_images,
)
from tui_agent.core.events import ErrorOccurred, TurnDone
from tui_agent.core.llm import ChatModel
from tui_agent.core.llm.errors import LLMError
from tui_agent.headless.printers import Printer

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


async def one_turn(agent: Agent, prompt: str | list[dict[str, Any]], printer: Printer) -> int:
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


def attached(prompt: str | None, images: list[Path], llm: ChatModel) -> Prepared:
    """The prompt with the files its ``@path`` references name and the ``--image`` files,
    read (relative to the working directory); :class:`AttachError` for the first that
    cannot go, or an image for a model that reads none."""
    if prompt is None:
        if images:
            raise AttachError("--image needs a PROMPT to go with")
        return Prepared("")
    extra = [read_attachment(path, str(path), image_only=True) for path in images]
    prepared = prepare(prompt, Path.cwd(), extra)
    if prepared.images:
        takes = getattr(llm, "takes", None)
        refuse_images(prepared, llm.model or "", takes is not None and "image" in takes())
    return prepared
