"""A text stream that prints every write through the one masking path
(:func:`~tui_agent.config.printable.shown`): the secrets it is given masked, control
characters removed. The command-line outputs that print what a server or a config file
said (``servers``, ``mcp list/get/import/remove``) write through one, so a line that
forgot to clean or mask a value still reaches the terminal safe."""

from __future__ import annotations

from typing import IO, Any, cast

from tui_agent.config.printable import shown


class Masked:
    """``out`` whose every write is masked with ``secrets`` and cleaned; everything else
    (``flush``, ``isatty``, ``fileno``) is the stream's own."""

    def __init__(self, out: IO[str], secrets: frozenset[str] = frozenset()) -> None:
        self.out, self.secrets = out, secrets

    def write(self, text: str) -> int:
        return self.out.write(shown(text, self.secrets))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)


def masked(out: IO[str], secrets: frozenset[str] = frozenset()) -> IO[str]:
    """``out`` as a :class:`Masked` stream, typed as the stream it wraps."""
    return cast("IO[str]", Masked(out, secrets))
