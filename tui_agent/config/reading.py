"""Where a configuration value stands and how a problem with it is told: the
:class:`Origin` of a value (file, key path, line), pydantic's errors described by line
and key, and reading a config file's text with an error that names it."""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from tui_agent.config.errors import ConfigError
from tui_agent.config.models import (
    SECTION_MODELS,
    Config,
    ModelEntry,
    ServerConfig,
    ShellSettings,
)

Locator = Callable[[Sequence[str | int]], int | None]


@dataclass(frozen=True)
class Origin:
    """Where a server was defined: the file and the key path to it inside that file."""

    file: Path
    path: tuple[str | int, ...]
    locate: Locator

    def where(self, *more: str | int) -> str:
        line = self.locate(self.path + more)
        return f"line {line}: " if line else ""

    def place(self) -> str:
        """``file:line``, or the file alone when the line is not known."""
        line = self.locate(self.path)
        return f"{self.file}:{line}" if line else str(self.file)


Source = Origin | str
"""Where a value came from: a place in a file, or a label (``default``, ``--model``)."""


def _fields_at(loc: tuple[str | int, ...]) -> list[str]:
    model: type[BaseModel] | None = None
    if not loc:
        model = Config
    elif len(loc) == 1 and isinstance(loc[0], str):
        model = SECTION_MODELS.get(loc[0])
    elif len(loc) == 2 and loc[0] == "servers":
        model = ServerConfig
    elif len(loc) == 2 and loc[0] == "models":
        model = ModelEntry
    elif loc == ("tools", "shell"):
        model = ShellSettings
    return list(model.model_fields) if model else []


def _suggest(key: str, options: list[str]) -> str:
    near = difflib.get_close_matches(key, options, n=1, cutoff=0.6)
    if near:
        return f" (did you mean '{near[0]}'?)"
    return f" (expected one of: {', '.join(options)})" if options else ""


def describe(error: ValidationError, locate: Locator, base: tuple[str | int, ...] = (),
             fields: Callable[[tuple[str | int, ...]], list[str]] = _fields_at) -> list[str]:
    """One line per pydantic error: where it is, which key, and what was expected."""
    lines = []
    for err in error.errors():
        loc = base + tuple(err["loc"])
        line = locate(loc)
        where = f"line {line}: " if line else ""
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            # The keys of the table it is in, named by its whole path (``servers.x`` is
            # a server's, whether pydantic checked the whole file or that one entry).
            problem = f"unknown key '{key}'" + _suggest(key, fields(loc[:-1]))
            dotted = ".".join(str(p) for p in loc[:-1]) or "(top level)"
        elif kind == "missing":
            problem = "is required but missing"
        else:
            msg = err["msg"].removeprefix("Value error, ").replace("Input should be", "expected")
            shown = err.get("input")
            got = "" if isinstance(shown, dict | list) or shown is None else f" (got {shown!r})"
            problem = msg + got
        lines.append(f"{where}{dotted}: {problem}")
    return lines


MAX_CONFIG_BYTES = 64 * 1024 * 1024
"""The largest config file read (Claude Code's ``~/.claude.json`` keeps every project's
history and grows to tens of MB; nothing bigger is a config)."""


def read_config_text(path: Path) -> str:
    """A config file's text, or a :class:`ConfigError` saying why it cannot be had: it
    does not exist, it is not a regular file (a FIFO would wait for a writer forever,
    ``/dev/zero`` never ends), it is larger than :data:`MAX_CONFIG_BYTES`, or it is not
    UTF-8 (the line of the first bad byte named)."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ConfigError("the file does not exist", path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror or exc}", path) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError("not a regular file (a pipe, a device or a directory): give "
                          "a config file", path)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MB: not a config "
                          "file", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x})",
                          path) from None
