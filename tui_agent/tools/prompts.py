"""A server's prompt as its definition says (``prompts/list``): its arguments, which are
required, and what each is for; and the check made before a prompt is asked for
(``prompts/get``), so that one called without a required argument is told by name
(:class:`MissingArguments`) instead of with the server's raw ``-32602``.

The front ends decide what to do with the missing ones: the app asks for them in a form,
headless prints the error. Everything here came from a server: cleaned.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.tools.paging import pages
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

if TYPE_CHECKING:
    from tui_agent.tools.hub import Hub

MAX_TEXT = 500
"""Longest description kept of a prompt or an argument."""


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    server: str
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.server}:{self.name}"


class MissingArguments(ValueError):
    """A prompt called without arguments its definition requires; the message names the
    prompt, its server and each missing argument with what it is for."""

    def __init__(self, prompt: PromptInfo, missing: tuple[PromptArgument, ...]) -> None:
        self.prompt, self.missing = prompt, missing
        named = ", ".join(a.name + (f" ({a.description})" if a.description else "")
                          for a in missing)
        give = " ".join(f"{a.name}=VALUE" for a in missing)
        super().__init__(f"prompt '{prompt.name}' of server '{prompt.server}' needs "
                         f"{counted(len(missing), 'argument')} not given: {named}; add "
                         f"{give} after {prompt.ref}")


def prompt_info(server: str, prompt: Any) -> PromptInfo:
    """A ``Prompt`` of ``prompts/list`` as plain, cleaned values."""
    return PromptInfo(server, clean(str(prompt.name)), _text(prompt.description),
                      tuple(PromptArgument(clean(str(a.name)), _text(a.description),
                                           bool(a.required))
                            for a in prompt.arguments or ()))


async def find_prompt(hub: Hub | None, server: str, name: str) -> PromptInfo | None:
    """The definition of ``server``'s prompt ``name``; None when the server is unknown,
    cannot list its prompts, or does not list this one (``prompts/get`` then says why)."""
    conn = hub.connections.get(server) if hub is not None else None
    if conn is None:
        return None
    try:
        async with aclosing(pages(conn, "list_prompts", "prompts")) as listed:
            async for page in listed:
                for prompt in page:
                    if prompt.name == name:  # the pages after it are not asked for
                        return prompt_info(server, prompt)
    except Exception:  # its prompts/get will fail too, and say it in the server's words
        return None
    return None


def missing_arguments(prompt: PromptInfo,
                      given: Mapping[str, str]) -> tuple[PromptArgument, ...]:
    """The required arguments of ``prompt`` that ``given`` lacks (or leaves empty)."""
    return tuple(a for a in prompt.arguments if a.required and not given.get(a.name))


def _text(text: Any) -> str:
    return clean(str(text))[:MAX_TEXT] if text else ""
