"""The built-in ``shell`` tool and its sandbox: :func:`register` adds ``shell``,
``shell_output`` and ``shell_kill`` to the first-party server; :func:`sandbox_status` says
(for the front end, once) when commands cannot be sandboxed here.

One module per job: :mod:`.sandbox` (which sandbox, and the bwrap command line),
:mod:`.private` (the places a command must not see, :data:`HIDDEN` among them),
:mod:`.seccomp` (the filter that refuses Unix sockets),
:mod:`.limits` (the process ceiling), :mod:`.environment` (what a command inherits),
:mod:`.process` (a running command and how it ends), :mod:`.output` (capping and
sanitising), :mod:`.jobs` (background commands), :mod:`.docker_box` (the docker sandbox),
:mod:`.tools` (the MCP tools)."""

from tui_agent.builtin.asking import ASK_META
from tui_agent.builtin.shell.tools import register, sandbox_status

__all__ = ["ASK_META", "register", "sandbox_status"]
