"""The one error type configuration raises: it always says which file, where, and what."""

from __future__ import annotations

from pathlib import Path


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI prints it and exits 2.

    Args:
        problems: one line each, already naming the key and what was expected.
        file: the file the problems are in, when there is one.
    """

    def __init__(self, problems: list[str] | str, file: Path | str | None = None) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.file = str(file) if file is not None else None
        super().__init__(self.render())

    def render(self) -> str:
        head = f"invalid configuration in {self.file}" if self.file else "invalid configuration"
        if len(self.problems) == 1:
            return f"{head}: {self.problems[0]}"
        return head + ":\n" + "\n".join(f"  - {p}" for p in self.problems)
