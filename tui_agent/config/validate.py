"""One TOML config file checked against the schema: every problem a
:class:`ConfigError` naming the file, the line and the key.

A project that is not trusted yet is the exception for keys the schema does not know:
its settings beyond the allow-list are not applied until the person agrees to the
project, so a key of a newer tui-agent (or a typo) in a cloned project must not stop
every command run in it. Such keys are set aside with the rest of what is held, and
counted in the project's digest like them; once the project is trusted the file is
checked whole, and the same key is the error it is in any other config.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_agent.config.errors import ConfigError
from tui_agent.config.models import Config
from tui_agent.config.reading import Locator, Origin, describe

Unknown = dict[str, tuple[Any, Origin]]
"""Keys the schema does not know, by dotted name, with their value and where they are."""


def validate(data: Mapping[str, Any], locate: Locator, file: Path,
             unknown: Unknown | None = None) -> Config:
    """``data`` as a :class:`Config`. With ``unknown`` (a project not trusted yet), the
    keys the schema does not know are moved there instead of refused; any other problem
    is refused all the same."""
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        extra = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
        if unknown is None or not extra:
            raise ConfigError(describe(exc, locate), file) from None
    kept = copy.deepcopy(dict(data))
    for loc in extra:
        unknown[".".join(str(part) for part in loc)] = (
            _take(kept, loc), Origin(file, tuple(str(p) for p in loc), locate))
    return validate(kept, locate, file)


def _take(data: dict[str, Any], loc: tuple[int | str, ...]) -> Any:
    """Remove the value at ``loc`` from ``data`` and return it."""
    *parents, last = loc
    table: Any = data
    for part in parents:
        table = table[part]
    return table.pop(last)
