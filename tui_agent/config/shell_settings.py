"""``[tools.shell]``: how the built-in server's ``shell`` tool runs commands (the sandbox,
network, limits). Running them is :mod:`tui_agent.builtin.shell`'s."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tui_agent.config.strict import Strict
from tui_agent.config.volumes import check_volume

Sandbox = Literal["bwrap", "docker", "none"]


class ShellSettings(Strict):
    """``[tools.shell]``: the built-in ``shell`` tool."""

    sandbox: Sandbox | None = None
    """``bwrap`` (bubblewrap: the project writable, the rest read-only, secrets hidden, no
    network), ``docker`` (a container of ``image`` with the project mounted) or ``none`` (a
    plain process: you chose it, so ``auto`` rules apply as written). Unset: bwrap when it
    is installed and works here; otherwise commands run unsandboxed and every one asks."""
    network: bool = False
    """Let sandboxed commands reach the network (bwrap, docker)."""
    unix_sockets: bool = False
    """bwrap: let commands create Unix domain sockets. Off, they cannot, so they cannot
    reach the host's services through one (the Docker engine, D-Bus and systemd, ssh and
    gpg agents), which would run their requests outside the sandbox."""
    image: str | None = None
    """docker: the image commands run in (it needs ``/bin/sh``)."""
    volumes: list[str] = Field(default_factory=list)
    """docker: more mounts in ``docker -v`` syntax (``/host:/in/container[:ro]``), beside
    the project and its roots (mounted read-write at their own paths)."""
    timeout: float = Field(default=120.0, gt=0)
    """Seconds a command may run when the model gives no ``timeout``; then it is killed
    with every process it started."""
    max_timeout: float = Field(default=600.0, gt=0)
    """The most seconds the model may ask for one command (the hub waits this long, and
    a little more, for a call of the built-in server)."""
    max_output: int = Field(default=30_000, ge=1000)
    """Characters of a command's output the model reads: the first and last halves are
    kept with a marker between them saying how much was cut."""
    max_processes: int = Field(default=512, ge=16, le=65536)
    """Processes a command may have at once (a fork bomb stops there)."""
    max_jobs: int = Field(default=8, ge=1, le=256)
    """Background commands that may run at once."""

    @model_validator(mode="after")
    def _consistent(self) -> ShellSettings:
        if self.sandbox == "docker" and not self.image:
            raise ValueError("sandbox = \"docker\" needs 'image' (the image commands run in)")
        if self.sandbox != "docker":
            stray = [k for k in ("image", "volumes") if k in self.model_fields_set
                     and getattr(self, k)]
            if stray:
                raise ValueError(f"'{stray[0]}' is only for sandbox = \"docker\"")
        for volume in self.volumes:
            check_volume(volume)
        if self.timeout > self.max_timeout:
            raise ValueError(f"timeout ({self.timeout:g}) is more than max_timeout "
                             f"({self.max_timeout:g})")
        return self


class ToolsSettings(Strict):
    """``[tools]``: the built-in server's tools."""

    shell: ShellSettings = Field(default_factory=ShellSettings)
    """``[tools.shell]``: the ``shell`` tool."""
