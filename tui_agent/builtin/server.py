"""The built-in MCP server (``tui-agent tools serve``, the server ``local``): one
:class:`MCPServer` with the file tools of :mod:`tui_agent.builtin.files`, and whatever
the other parts register on it (the shell, the checkpoints) through ``extra``. It speaks
stdio like any server, so the hub, the gate, the rules, hooks and code mode treat its tools
as any other's; its roots are the client's MCP roots (:mod:`tui_agent.builtin.roots`) plus
the ``--root`` folders it is started with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from tui_agent.builtin import files, roots
from tui_agent.builtin.workspace import Workspace
from tui_agent.config.builtin_server import BUILTIN

NAME = BUILTIN
"""The name the server is configured under by default (its tools are ``local__read``...)."""
INSTRUCTIONS = (
    "File tools on the user's machine: read, list, glob and grep look; edit and write "
    "change files (the user approves each change). Paths may be relative to the working "
    "directory; only folders the user allowed (the project and added folders) can be "
    "touched.")

Registration = Callable[[MCPServer, Workspace], None]
"""A part that adds tools to the server (the shell, the checkpoints), given the same
workspace the file tools use."""


def parts() -> list[Registration]:
    """The other parts, registered after the file tools: the checkpoints and the shell
    (with the ``[tools.shell]`` the client passed in the environment)."""
    import os

    from tui_agent.builtin.shell import register as shell
    from tui_agent.config.builtin_server import SHELL_VARIABLE
    from tui_agent.config.shell_settings import ShellSettings

    said = os.environ.get(SHELL_VARIABLE)
    settings = ShellSettings.model_validate_json(said) if said else ShellSettings()
    from tui_agent.builtin.checkpoints.shell_watch import shell_watch

    return [keep_checkpoints,
            lambda server, workspace: shell(server, workspace, settings, shell_watch())]


def keep_checkpoints(server: MCPServer, workspace: Workspace) -> None:
    """Every ``edit`` and ``write`` keeps the file's previous content first, in the store
    of the working directory, for ``/rewind``; what could not be kept (the store cannot be
    written, the file is too big) is added to the tool's answer."""
    from tui_agent.builtin.checkpoints import before_write, not_written
    from tui_agent.builtin.checkpoints.caller import tag_calls

    tag_calls(server)  # each change journaled names the conversation whose call made it

    workspace.before_write = before_write
    workspace.not_written = not_written


def build_server(workspace: Workspace, extra: Sequence[Registration] = ()) -> MCPServer:
    """The server, its file tools and ``extra``'s on ``workspace``."""
    from tui_agent import __version__

    server = MCPServer("tui-agent", version=__version__, instructions=INSTRUCTIONS)
    files.register(server, workspace)
    for register in extra:
        register(server, workspace)
    roots.listen(server, workspace)
    return server


def serve(fixed_roots: Sequence[Path], cwd: Path,
          extra: Sequence[Registration] | None = None) -> int:
    """Run the server on stdio until the client closes it (``extra`` default:
    :func:`parts`)."""
    import anyio

    workspace = Workspace(cwd=cwd, fixed_roots=[p.expanduser().resolve() for p in fixed_roots])
    server = build_server(workspace, parts() if extra is None else extra)
    anyio.run(server.run_stdio_async)
    return 0
