"""What of a call the editor is shown, the same in the ``tool_call`` update and in the
permission question: its arguments and the file change it makes, with every secret
masked and control characters removed (a file, or the model's arguments, may hold both).
"""

from __future__ import annotations

from typing import Any

from tui_agent.config.interpolate import mask
from tui_agent.core.diffs import FileChange
from tui_agent.core.events import masked
from tui_agent.tools.text import clean


def shown_input(arguments: Any, secrets: frozenset[str]) -> Any:
    """The call's arguments (``raw_input``): masked, and each string cleaned."""
    return _cleaned(masked(arguments, secrets))


def shown_change(change: FileChange, secrets: frozenset[str]
                 ) -> tuple[str, str, str | None]:
    """``(path, new text, old text or None for a new file)`` of a write, to show as a diff."""
    where = str(change.local) if change.local is not None else change.path

    def safe(text: str) -> str:
        return clean(mask(text, secrets))

    return safe(where), safe(change.new), None if change.new_file else safe(change.old)


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(k)): _cleaned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    return value
