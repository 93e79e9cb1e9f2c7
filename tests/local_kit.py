"""The built-in server ``local`` in tests. The suite turns it off (conftest sets
``TUI_AGENT_NO_BUILTIN``); a test that meets it turns it back on, works in a project folder
of its own (:func:`local_project`) and gives the server the test's tag and time to start:
as a ``[servers.local]`` table in a config file, for ``tui-agent run``, the app and ACP
(:func:`local_table`), or as a :class:`ServerConfig` for a hub or agent the test builds
itself (:func:`local_server`). tests/e2e_kit.py's ``local_config`` is the whole config
file for ``run``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import TAG_VAR, tagged_env
from tui_agent.config.builtin_server import builtin_server
from tui_agent.config.models import ServerConfig


def local_table(**env: str) -> str:
    """``[servers.local]`` without a command (so: the built-in server, adjusted), with the
    test's tag and ``env`` in its environment and 30 s to start; a caller may append
    further keys of the table."""
    pairs = ", ".join(f"{k} = {json.dumps(v)}"
                      for k, v in {TAG_VAR: os.environ[TAG_VAR], **env}.items())
    return f"\n[servers.local]\nenv = {{ {pairs} }}\nstartup_timeout = 30\n"


def local_server() -> ServerConfig:
    """The built-in server for a hub of the test's own: tagged, keeping its checkpoints
    under the test's XDG folders (a stdio server gets a few variables only), 30 s to
    start."""
    return builtin_server().model_copy(update={"env": tagged_env(), "startup_timeout": 30})


def local_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  files: Mapping[str, str] | None = None, *, enter: bool = True) -> Path:
    """The built-in server turned on, and ``tmp_path/proj`` holding ``files`` (a path in
    the project → its text), made the working folder unless not ``enter`` (an ACP session
    names its own)."""
    monkeypatch.delenv("TUI_AGENT_NO_BUILTIN", raising=False)
    project = tmp_path / "proj"
    project.mkdir()
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    if enter:
        monkeypatch.chdir(project)
    return project
