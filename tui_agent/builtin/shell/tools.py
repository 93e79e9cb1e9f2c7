"""The tools ``shell``, ``shell_output`` and ``shell_kill`` on an MCP server:
:func:`register` adds them, with the sandbox chosen once (:mod:`.sandbox`), foreground
commands run to their end or timeout (:mod:`.process`, :mod:`.docker_box`), background
ones kept as jobs (:mod:`.jobs`), and everything ended when the server exits. A call the
client cancels (its timeout, Esc) ends its command too, and what the command changed is
still kept; before each command the shell asks the client for its roots if they changed
(``/add-dir``), as the file tools do.

A server without a sandbox (bwrap missing or broken, and no ``sandbox = "none"`` chosen)
still offers ``shell``, but says so in its description and marks it in ``_meta``
(:data:`ASK_META`), which the front end's gate reads as "ask for every call"."""

import asyncio
import atexit
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Protocol

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from tui_agent.builtin.asking import ASK_META, UNSANDBOXED
from tui_agent.builtin.shell import docker_box
from tui_agent.builtin.shell.environment import command_env
from tui_agent.builtin.shell.jobs import JobError, Jobs
from tui_agent.builtin.shell.process import Running
from tui_agent.builtin.shell.sandbox import (
    Choice,
    Command,
    Workspace,
    bwrap_command,
    choose,
    plain_argv,
    writable,
)
from tui_agent.config.shell_settings import ShellSettings

DESCRIPTION = (
    "Run a shell command line (sh -c) and return its output (stdout and stderr together) "
    "and exit code. cwd is relative to the working directory and must be inside the "
    "project or its added folders. timeout is in seconds. background = true starts it and "
    "returns a job id at once: read its output with shell_output, end it with shell_kill.")


class Keeper(Protocol):
    """What keeps the files a command changes for ``/rewind`` (the checkpoints part's
    ``ShellWatch``): ``before`` a command looks at the folders it may write, ``after``
    it journals what changed and returns what it could not keep, for the result."""

    def before(self, roots: Sequence[Path]) -> Any: ...

    def after(self, found: Any) -> list[str]: ...


def not_kept(notes: list[str]) -> str:
    """The line a command's result ends with when some of its changes cannot be undone
    by ``/rewind`` (empty: every change was kept)."""
    if not notes:
        return ""
    shown = "; ".join(notes[:5]) + (f"; and {len(notes) - 5} more" if len(notes) > 5 else "")
    return f"[not kept for /rewind: {shown}]"


def sandbox_status(settings: ShellSettings) -> str | None:
    """None when commands run in a sandbox (or the user chose ``none``); else the one
    sentence to show the user once (bwrap missing or failing its self-test)."""
    return choose(settings).note


class Shell:
    """The shell of one server: its workspace, settings, sandbox and jobs."""

    def __init__(self, workspace: Workspace, settings: ShellSettings,
                 keeper: Keeper | None = None) -> None:
        self.workspace, self.settings, self.keeper = workspace, settings, keeper
        self.choice: Choice = choose(settings)
        self.jobs = Jobs(settings.max_jobs)
        self.used_docker = False
        self.keeping: set[asyncio.Task[None]] = set()
        self.foreground: set[Running] = set()
        """Commands whose call is still waiting for them (ended by :meth:`close` too)."""

    async def refresh(self, ctx: Context[Any, Any]) -> None:
        """Ask the client for its roots if they changed since the last call (``/add-dir``):
        the real server's workspace learns them so; a bare one has fixed roots."""
        from tui_agent.builtin import roots
        from tui_agent.builtin.workspace import Workspace as ServerWorkspace

        if isinstance(self.workspace, ServerWorkspace):
            await roots.current(ctx, self.workspace)

    def where(self, cwd: str | None) -> tuple[Path, list[Path]]:
        roots = writable(self.workspace)
        base = Path(self.workspace.cwd)
        place = (base / os.path.expanduser(cwd)).resolve() if cwd else base.resolve()
        if not any(place.is_relative_to(root) for root in roots):
            raise ToolError(f"cwd '{cwd}' is outside the project and its added folders "
                            f"({', '.join(map(str, roots))})")
        if not place.is_dir():
            raise ToolError(f"cwd '{cwd}' is not a directory")
        return place, roots

    def seconds(self, timeout: float | None) -> float:
        if timeout is None:
            return self.settings.timeout
        if timeout <= 0:
            raise ToolError(f"timeout {timeout:g} is not a positive number of seconds")
        return min(float(timeout), self.settings.max_timeout)

    async def start(self, command: str, cwd: Path, roots: list[Path]) -> Running:
        env = command_env(os.environ)
        if self.choice.kind == "bwrap":
            line = bwrap_command(command, cwd, roots, self.settings.network,
                                 self.settings.unix_sockets)
        else:
            line = Command(plain_argv(command))
        try:
            return await Running.start(line.argv, cwd, env, self.settings.max_output,
                                       self.settings.max_processes, command, line.fds)
        except OSError as exc:
            raise ToolError(f"could not start the command: {exc}") from None
        finally:
            line.close()

    async def shell(self, command: str, cwd: str | None, timeout: float | None,
                    background: bool) -> str:
        if not command.strip():
            raise ToolError("command is empty")
        place, roots = self.where(cwd)
        seconds = self.seconds(timeout)
        found = await self.look(roots)
        if self.choice.kind == "docker":
            try:
                return await self.in_docker(command, place, roots, seconds, background)
            finally:
                with anyio.CancelScope(shield=True):
                    await self.kept(found)
        if background:
            return await self.background(command, place, roots, found)
        job = await self.start(command, place, roots)
        self.foreground.add(job)
        finished = False
        try:
            finished = await job.wait(seconds)
        finally:
            # Also when the call is cancelled (the hub's timeout, Esc): the command ends
            # with it, and what it changed is kept all the same.
            with anyio.CancelScope(shield=True):
                if not finished:
                    await job.kill()
                self.foreground.discard(job)
                kept = await self.kept(found)
        footer = "\n".join(filter(None, [job.footer(None if finished else seconds), kept]))
        text = job.capture.text().rstrip("\n")
        body = text if text.strip() else "(no output)"
        if not finished:
            raise ToolError(f"{body}\n{footer}")
        return f"{body}\n{footer}".rstrip("\n")

    async def look(self, roots: list[Path]) -> Any:
        """The keeper's look at the folders before a command (None: no keeper)."""
        if self.keeper is None:
            return None
        return await asyncio.to_thread(self.keeper.before, roots)

    async def kept(self, found: Any) -> str:
        """The keeper's record of what the command changed; the line saying what it
        could not keep (empty: all of it, or no keeper)."""
        if self.keeper is None or found is None:
            return ""
        return not_kept(await asyncio.to_thread(self.keeper.after, found))

    async def background(self, command: str, place: Path, roots: list[Path],
                         found: Any = None) -> str:
        try:
            self.jobs.check_room()
        except JobError as exc:
            raise ToolError(str(exc)) from None
        job = await self.start(command, place, roots)
        job_id = self.jobs.add(job)
        job.watch()
        if found is not None:
            keeping = asyncio.get_running_loop().create_task(self.keep_job(job, found))
            self.keeping.add(keeping)
            keeping.add_done_callback(self.keeping.discard)
        return (f"started job {job_id} (pid {job.pid}) in the background; read its output "
                f"with shell_output {{\"id\": \"{job_id}\"}}, end it with shell_kill")

    async def keep_job(self, job: Running, found: Any) -> None:
        """A background command's changes are journaled when it ends; what could not
        be kept is added to its output (read with shell_output)."""
        await job.proc.wait()
        if line := await self.kept(found):
            job.capture.feed(f"\n{line}\n".encode())

    async def in_docker(self, command: str, place: Path, roots: list[Path], seconds: float,
                        background: bool) -> str:
        if background:
            raise ToolError("background commands need sandbox \"bwrap\" or \"none\"; "
                            "with \"docker\" each command runs to its end")
        self.used_docker = True
        try:
            text, code = await docker_box.run(command, place, roots, command_env({}),
                                              self.settings, seconds)
        except docker_box.DockerProblem as exc:
            raise ToolError(str(exc)) from None
        body = text.rstrip("\n") if text.strip() else "(no output)"
        if code is None:
            raise ToolError(f"{body}\n[timed out after {seconds:g} s: the container was "
                            "killed]")
        return f"{body}\n[exit code {code}]" if code else body

    async def output(self, job_id: str) -> str:
        try:
            return self.jobs.report(job_id, self.jobs.get(job_id))
        except JobError as exc:
            raise ToolError(str(exc)) from None

    async def kill(self, job_id: str) -> str:
        try:
            job = self.jobs.get(job_id)
        except JobError as exc:
            raise ToolError(str(exc)) from None
        await job.kill()
        return self.jobs.report(job_id, job)

    def close(self) -> None:
        for job in list(self.foreground):
            job.end()
        self.jobs.close()
        if self.used_docker:
            docker_box.remove_ours()


def register(server: MCPServer[Any], workspace: Workspace,
             settings: ShellSettings | None = None, keeper: Keeper | None = None) -> None:
    """Add ``shell``, ``shell_output`` and ``shell_kill`` to ``server``; every command they
    started ends when this process exits. ``keeper``: what keeps the files each command
    changes for ``/rewind`` (the server passes the checkpoints' ``shell_watch()``)."""
    shell = Shell(workspace, settings or ShellSettings(), keeper)
    atexit.register(shell.close)
    note = shell.choice.note
    # Unsandboxed although no one chose that: the gate asks for every call (and says why).
    meta = {ASK_META: UNSANDBOXED} if note else None
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                             open_world_hint=shell.settings.network)

    # Evaluated here, not postponed: the SDK reads these annotations for the schema, and
    # the timeout's description holds this server's limits.
    seconds = Field(description=(
        "Seconds before it is killed with every process it started (default "
        f"{shell.settings.timeout:g}, at most {shell.settings.max_timeout:g})."))

    async def run(ctx: Context[Any, Any],
                  command: Annotated[str, Field(description="The command line (sh -c).")],
                  cwd: Annotated[str | None, Field(description=(
                      "Where it runs, relative to the working directory (default: it)."))]
                  = None,
                  timeout: Annotated[float | None, seconds] = None,
                  background: Annotated[bool, Field(description=(
                      "Start it and return a job id at once (no timeout)."))] = False) -> str:
        await shell.refresh(ctx)
        return await shell.shell(command, cwd, timeout, background)

    async def shell_output(id: Annotated[str, Field(description="The job id shell gave.")]
                           ) -> str:
        return await shell.output(id)

    async def shell_kill(id: Annotated[str, Field(description="The job id shell gave.")]
                         ) -> str:
        return await shell.kill(id)

    server.add_tool(run, name="shell", title="Run a shell command",
                    description=DESCRIPTION + (f"\n\nNot sandboxed: {note}" if note else ""),
                    annotations=writes, meta=meta, structured_output=False)
    server.add_tool(shell_output, name="shell_output", title="Read a background command",
                    description="New output of a background command since the last read, "
                                "and whether it still runs.",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                    structured_output=False)
    server.add_tool(shell_kill, name="shell_kill", title="End a background command",
                    description="End a background command and every process it started; "
                                "returns its last output.",
                    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                idempotent_hint=True, open_world_hint=False),
                    meta=meta, structured_output=False)
