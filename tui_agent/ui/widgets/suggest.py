"""The server's suggestions in a form's text input (``completion/complete``): the first
value the server completes that continues what is typed shows greyed after the cursor,
and ``→`` takes it. The resource-template form and a prompt's argument form both use
it; the asking is :func:`tui_agent.tools.completion.complete`'s."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.suggester import Suggester

Complete = Callable[[str, str, dict[str, str]], Awaitable[list[str]]]
"""``(argument, typed, filled so far)`` -> the server's suggestions."""

TAKE_HINT = "type; → takes the server's suggestion"
"""The placeholder of an input with suggestions: the key is not otherwise in sight."""


class ServerSuggester(Suggester):
    """The first of the server's suggestions for argument ``name`` that continues what is
    typed; ``filled`` gives the form's other values, which the server may use."""

    def __init__(self, name: str, complete: Complete,
                 filled: Callable[[], dict[str, str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.name, self.complete, self.filled = name, complete, filled

    async def get_suggestion(self, value: str) -> str | None:
        try:
            found = await self.complete(self.name, value, self.filled())
        except Exception:  # a server that fails to suggest leaves the typing alone
            return None
        return next((s for s in found if s.startswith(value) and s != value), None)
