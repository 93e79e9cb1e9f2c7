"""Where an stdio server's program is, for ``mcp add``: a path that names no file (or
one that cannot run) is said as such, not as a command missing from ``PATH``; a bare
name found only in tui-agent's own virtual environment is written as its full path.

That last case is the README's: ``source .venv/bin/activate`` (or ``.venv/bin/tui-agent``
with the venv's ``bin`` on ``PATH``), then ``mcp add time -- mcp-server-time`` for a
server ``pip`` put in the same venv. The bare name works today and fails in every
later shell where the venv is not active, as "command not found" at start-up, far from
the ``mcp add`` that caused it. Written as the full path it keeps working.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path


def missing(program: str, env: Mapping[str, str]) -> str | None:
    """Why ``program`` (a server's first word) cannot be run, or None: a path (it holds
    a separator) that names no file, or a file that is not executable; a bare name not
    on ``PATH``."""
    if "${" in program:
        return None  # expanded at start-up; the unset check names the variable
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        if not path.exists():
            return f"the file '{program}' does not exist"
        if path.is_dir():
            return f"'{program}' is a directory, not a program"
        if not os.access(path, os.X_OK):
            return f"the file '{program}' is not executable (chmod +x it)"
        return None
    if shutil.which(program, path=env.get("PATH")) is None:
        scripts = own_scripts()
        beside = shutil.which(program, path=str(scripts)) if scripts else None
        if beside is not None:
            return (f"command '{program}' was not found on PATH; tui-agent's own virtual "
                    f"environment has it: give its full path, {beside}")
        return (f"command '{program}' was not found on PATH (install it, or give its "
                "full path)")
    return None


def own_scripts() -> Path | None:
    """The ``bin`` (``Scripts``) directory of the virtual environment tui-agent runs in,
    or None outside one."""
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sysconfig.get_path("scripts"))


def pinned(program: str, env: Mapping[str, str],
           scripts: Path | None = None) -> tuple[str, str] | None:
    """``program`` as its full path, and a sentence saying why, when ``PATH`` finds it
    only in tui-agent's own virtual environment (``scripts``: that venv's ``bin``, by
    default :func:`own_scripts`); None otherwise (a path, a name found elsewhere too)."""
    scripts = scripts if scripts is not None else own_scripts()
    if scripts is None or os.sep in program or "${" in program:
        return None
    found = shutil.which(program, path=env.get("PATH"))
    if found is None or Path(found).parent.resolve() != scripts.resolve():
        return None
    others = os.pathsep.join(d for d in (env.get("PATH") or "").split(os.pathsep)
                             if d and Path(d).resolve() != scripts.resolve())
    if shutil.which(program, path=others) is not None:
        return None
    return found, (f"'{program}' was found only in tui-agent's own virtual environment "
                   f"({scripts}), which is not on PATH once it is not active: written as "
                   f"{found}")
