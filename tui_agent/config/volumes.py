"""Mounts in ``docker -v`` syntax, as ``[servers.NAME] volumes`` and ``[tools.shell]
volumes`` take them: checked once, at load."""

from __future__ import annotations

import re

_VOLUME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VOLUME_MODES = {"ro", "rw", "z", "Z", "shared", "slave", "private", "rshared", "rslave",
                 "rprivate", "nocopy"}


def check_volume(volume: str) -> None:
    """Raise ValueError unless ``volume`` is ``source:target[:options]`` with an absolute
    host path (or ``~/...``) or a volume name as source and an absolute target."""
    parts = volume.split(":")
    if len(parts) not in (2, 3) or not all(parts[:2]):
        raise ValueError(f"volume '{volume}' is not 'source:target' or 'source:target:ro'")
    source, target = parts[0], parts[1]
    if not (source.startswith(("/", "~", "$")) or _VOLUME_NAME.match(source)):
        raise ValueError(f"volume '{volume}': the source must be an absolute host path, "
                         "~/..., or a volume name")
    if not target.startswith("/"):
        raise ValueError(f"volume '{volume}': the target '{target}' must be an absolute path")
    bad = [m for m in (parts[2].split(",") if len(parts) == 3 else []) if m not in _VOLUME_MODES]
    if bad:
        raise ValueError(f"volume '{volume}': unknown option '{bad[0]}' (ro, rw, z, Z, ...)")
