"""``--sampling``: whether a headless run lets MCP servers use its model. ``deny`` (the
default) refuses every request, and says so on stderr; ``allow`` runs each one on the
model (``[model] sampling_model``, else the chat's) and sends the reply back, saying on
stderr what was asked and answered. Nobody can read or edit a request headless: a person
who wants to see them uses the chat app, where each one is a modal."""

from __future__ import annotations

from typing import IO

from tui_agent.tools.sampling import Complete, Sampler, SampleRequest
from tui_agent.tools.wording import counted


def terminal_sampler(mode: str, complete: Complete, err: IO[str]) -> Sampler:
    """The :class:`Sampler` of ``tui-agent run --sampling MODE``."""
    async def review(request: SampleRequest) -> SampleRequest | None:
        asked = f"{request.server} asked the model " \
                f"({counted(len(request.messages), 'message')}, up to " \
                f"{request.max_tokens} tokens)"
        if mode != "allow":
            err.write(f"tui-agent: {asked}: declined (--sampling allow lets servers use "
                      "the model)\n")
            return None
        err.write(f"tui-agent: {asked}\n")
        return request

    async def confirm(request: SampleRequest, reply: str) -> bool:
        err.write(f"tui-agent: the reply to {request.server} went back ({len(reply):,} "
                  "characters)\n")
        return True

    return Sampler(review, confirm, complete)
