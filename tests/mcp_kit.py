"""``tui-agent mcp`` as a user runs it, for the tests of add, remove, list, get and
import: a process (through the test zygote) in a project directory under a home of its
own, so the user config, the project and other clients' files are all the test's."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT, TAG_VAR
from tests.zygote import command

COMMENTED = """# my tui-agent config: every comment here must survive
[model]
name = "openai/fake-model"   # the model I use

# a server I wrote by hand
[servers.mine]
command = "mine-server"   # on my PATH
disabled = true

[agent]
max_depth = 7   # deeper than the default
"""
"""A user config as a person writes it: comments on their own lines and after values."""


@dataclass
class Machine:
    """A home directory, a project in it, and the environment the command runs with."""

    home: Path
    project: Path
    env: dict[str, str]

    @property
    def user_config(self) -> Path:
        return Path(self.env["XDG_CONFIG_HOME"]) / "tui-agent" / "config.toml"

    def mcp(self, *args: str, cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command(), "mcp", *args], cwd=cwd or self.project,
                              env=self.env, capture_output=True, text=True, timeout=timeout)


def machine(tmp_path: Path, config: str | None = COMMENTED) -> Machine:
    """A home under ``tmp_path`` (the XDG dirs the suite set are in it), a project dir
    inside it, and a user config with comments (None: no user config)."""
    home = Path(os.environ["XDG_CONFIG_HOME"]).parent
    project = home / "work" / "project"
    project.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home)}
    env.pop("APPDATA", None)
    found = Machine(home, project, env)
    if config is not None:
        found.user_config.parent.mkdir(parents=True, exist_ok=True)
        found.user_config.write_text(config, encoding="utf-8")
    return found


def fake_words(*server_args: str) -> list[str]:
    """``--env`` flags and the command after ``--`` that run tests/fakes/mcp_server.py
    (tagged, so the suite sees it end)."""
    return ["--env", f"{TAG_VAR}={os.environ[TAG_VAR]}", "--env", f"PYTHONPATH={ROOT}",
            "--", sys.executable, "-m", "tests.fakes.mcp_server", *server_args]
