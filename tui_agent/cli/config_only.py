"""``--config-only FILE``: that file in place of the user config, and no project files.

``--config FILE`` is a layer on top of the user config and the project's; some want the
one file alone (a clean test, a CI job, a second identity). Every command finds the user
config through ``$TUI_AGENT_CONFIG`` (:func:`tui_agent.config.paths.default_config_file`),
so for the length of the command that variable names FILE (and ``$TUI_AGENT_CONFIG_ONLY``
too, so the file is labelled ``--config-only``, not ``user``) and ``--no-project`` is on:
reading, ``config --show``, the app, and ``mcp add``/``import``, which then write to FILE,
all see the same single file without each learning a flag of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

from tui_agent.config.paths import CONFIG_ENV, ONLY_ENV


@contextlib.contextmanager
def config_only(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[None]:
    """While the command runs: ``args.config_only`` as the only config file (an error
    with ``--config`` too, which would be a layer on top of it)."""
    only = getattr(args, "config_only", None)
    if only is None:
        yield
        return
    if getattr(args, "config", None) is not None:
        parser.error("give --config FILE (a layer on top of your user config) or "
                     "--config-only FILE (that file alone), not both")
    args.no_project = True
    before = {name: os.environ.get(name) for name in (CONFIG_ENV, ONLY_ENV)}
    os.environ[CONFIG_ENV] = os.environ[ONLY_ENV] = str(only.absolute())
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
