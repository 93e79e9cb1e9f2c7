"""The commands ``tui-agent mcp import`` prints as its next step, each one that works as
printed: it carries the flags this run was given that choose what is read and where it
is written (``--from FILE``, ``--scope``, ``--config``/``--config-only``,
``--mcp-config``, ``--no-project``), so ``import NAME`` reads the same file and writes to
the same place. Written into a project that is not trusted, a server would sit in a file
tui-agent does not run: there the commands carry ``--trust-project`` and say so, since
the person agrees to the project's config as it is by running them.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from tui_agent.config.scopes import Target, trusted


class Again:
    """The command lines to print, for the flags of ``args`` and the file ``where``."""

    def __init__(self, args: argparse.Namespace, where: Target) -> None:
        self._files = _file_flags(args)
        self._held = (where.project_root is not None and not args.trust_project
                      and not trusted(where.project_root))
        chosen: list[str] = []
        if args.source is not None:
            chosen += ["--from", _path(args.source)]
        if args.scope is not None:
            chosen += ["--scope", args.scope]
        self._import = chosen + self._files + (["--trust-project"] if self._held else [])

    def __call__(self, *words: str) -> str:
        """``tui-agent mcp import WORDS`` with this run's flags (``words`` are quoted
        already: ``NAME...`` is a placeholder the person replaces)."""
        return " ".join(["tui-agent mcp import", *words, *self._import])

    def why(self) -> str:
        """Why the commands carry ``--trust-project`` (nothing when they do not)."""
        if not self._held:
            return ""
        return ("\nthe project is not trusted yet: a server imported into its file runs only "
                "once you agree to the project (--trust-project agrees to it as it is)")

    def servers(self) -> str:
        """The line that says how to start what was written."""
        words = ["tui-agent servers", *self._files]
        if self._held:
            return ("the project is not trusted yet, so its servers do not run: "
                    f"'{' '.join([*words, '--trust-project'])}' agrees to it and starts "
                    "them\n")
        return f"'{' '.join(words)}' starts them and lists their tools\n"


def _file_flags(args: argparse.Namespace) -> list[str]:
    """The flags that choose the config files read (``--config-only`` implies
    ``--no-project``)."""
    words: list[str] = []
    if getattr(args, "config_only", None) is not None:
        words += ["--config-only", _path(args.config_only)]
    else:
        if args.config is not None:
            words += ["--config", _path(args.config)]
        if args.no_project:
            words.append("--no-project")
    for file in args.mcp_config or []:
        words += ["--mcp-config", _path(file)]
    return words


def word(text: str) -> str:
    """``text`` as one shell word, in double quotes where it needs quoting: the command
    is printed inside single quotes, which a single-quoted word would close."""
    if shlex.quote(text) == text:
        return text
    return '"' + "".join("\\" + c if c in '"\\$`' else c for c in text) + '"'


def _path(file: Path) -> str:
    return word(str(file))
