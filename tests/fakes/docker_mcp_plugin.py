"""A stand-in for Docker's ``mcp`` CLI plugin (Docker Desktop's is not on these machines).

:func:`install` writes an executable ``cli-plugins/docker-mcp`` under a directory
that becomes ``DOCKER_CONFIG``; the real docker CLI then finds it and runs it.
It answers the CLI's plugin metadata call and ``docker mcp --help``, and
``docker mcp gateway run --transport stdio`` runs our MCP server over stdio, as
the real gateway serves its catalog. Each gateway start appends a line to
``TUI_AGENT_FAKE_GATEWAY_LOG`` (when set), with its arguments.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

METADATA = {"SchemaVersion": "0.1.0", "Vendor": "tui-agent tests", "Version": "0.0.1",
            "ShortDescription": "A fake Docker MCP gateway"}
ROOT = Path(__file__).resolve().parents[2]


def install(config_dir: Path) -> Path:
    """Put the plugin under ``config_dir/cli-plugins``; ``config_dir`` is for DOCKER_CONFIG."""
    plugins = config_dir / "cli-plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    plugin = plugins / "docker-mcp"
    plugin.write_text(f"#!/bin/sh\ncd {ROOT}\nexec {sys.executable} -m "
                      "tests.fakes.docker_mcp_plugin \"$@\"\n")
    plugin.chmod(0o755)
    return config_dir


def main(argv: list[str]) -> int:
    if argv[:1] == ["docker-cli-plugin-metadata"]:
        print(json.dumps(METADATA))
        return 0
    if argv[:2] == ["mcp", "--help"] or argv == ["mcp"]:
        print("Usage:  docker mcp COMMAND\n\nManage MCP servers and the MCP gateway")
        return 0
    if argv[:3] == ["mcp", "gateway", "run"]:
        log = os.environ.get("TUI_AGENT_FAKE_GATEWAY_LOG")
        if log:
            with open(log, "a") as f:
                f.write(" ".join(argv[3:]) + "\n")
        os.execv(sys.executable, [sys.executable, "-m", "tests.fakes.mcp_server",
                                  "--name", "docker-gateway"])
    print(f"docker mcp: unknown command {' '.join(argv[1:])}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
