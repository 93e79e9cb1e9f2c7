"""A first-party-style MCP server (the SDK's MCPServer) with only the built-in shell
tools on it, as :func:`tui_agent.builtin.shell.register` adds them, until the real
``tui-agent tools serve`` wires them in.

    python -m tests.fakes.shell_server --cwd DIR [--root DIR]... [--settings JSON]

``--settings`` is a ``[tools.shell]`` table as JSON (``{"sandbox": "none"}``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin.shell import register
from tui_agent.config.shell_settings import ShellSettings


@dataclass
class Workspace:
    cwd: Path
    roots: Sequence[Path] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--settings", default="{}")
    args = parser.parse_args()
    server: MCPServer[object] = MCPServer("local")
    register(server, Workspace(Path(args.cwd), [Path(r) for r in args.root]),
             ShellSettings.model_validate(json.loads(args.settings)))
    server.run("stdio")


if __name__ == "__main__":
    main()
