"""Replace a small file whole, so that a crash leaves the old content or the new, never
half of each: written to a temporary file beside it, flushed to disk, then renamed over
it. An existing file keeps its permissions (unless ``mode`` says otherwise); a new one is
private to the user. A symlink (a config kept with the user's dotfiles) is written
through: its target is replaced, with the temporary file in the target's folder so the
rename stays on one filesystem, and the link stays a link."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` atomically (creating its directory); raises OSError.
    ``mode``: the file's permissions whatever they were (the text is never readable
    under other ones)."""
    path = Path(os.path.realpath(path))  # a link's target (links to links too); else itself
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
