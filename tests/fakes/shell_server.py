"""A first-party-style MCP server (the SDK's MCPServer) with only the built-in shell
tools on it, as :func:`tui_agent.builtin.shell.register` adds them, until the real
``tui-agent tools serve`` wires them in.

    python -m tests.fakes.shell_server --cwd DIR [--root DIR]... [--settings JSON]

``--settings`` is a ``[tools.shell]`` table as JSON (``{"sandbox": "none"}``); ``--keep
STORE`` keeps what each command changes in the checkpoint store STORE (as the real server
does in its folder's), ``--keep-most-file N`` its largest file kept."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin.checkpoints import Checkpoints
from tui_agent.builtin.checkpoints.shell_watch import MOST_FILE, ShellWatch
from tui_agent.builtin.shell import register
from tui_agent.config.shell_settings import ShellSettings


@dataclass
class Workspace:
    cwd: Path
    fixed_roots: Sequence[Path] = field(default_factory=list)

    def roots(self) -> Sequence[Path]:
        return self.fixed_roots


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--settings", default="{}")
    parser.add_argument("--keep")
    parser.add_argument("--keep-most-file", type=int, default=MOST_FILE)
    args = parser.parse_args()
    server: MCPServer[object] = MCPServer("local")
    keeper = None if args.keep is None else ShellWatch(Checkpoints(Path(args.keep)),
                                                       most_file=args.keep_most_file)
    register(server, Workspace(Path(args.cwd), [Path(r) for r in args.root]),
             ShellSettings.model_validate(json.loads(args.settings)), keeper)
    server.run("stdio")


if __name__ == "__main__":
    main()
