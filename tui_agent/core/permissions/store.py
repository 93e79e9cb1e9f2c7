"""The tools a person chose to always allow, kept on disk with the definition each
trust was given to (trust on first use for the config's ``auto`` tools)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class ApprovalStore:
    """The tools a person chose to always allow, and the definition each trust was given to.

    Kept per ``(server, tool)`` as ``{"always": bool, "fingerprint": str}`` in a JSON file
    (or only in memory when ``path`` is None). Auto-approved tools from the config are
    pinned here the first time they are seen (trust on first use)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._data: dict[str, dict[str, dict[str, Any]]] = {}
        self.problem: str | None = None
        if path is not None:
            self._read(path)

    def _read(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            # Fail safe: an unreadable store means nothing is pinned, so changed tools
            # cannot slip through as trusted; auto tools are simply pinned afresh.
            self.problem = f"{path}: ignored, cannot read it ({exc})"
            return
        if isinstance(data, dict):
            self._data = {str(k): v for k, v in data.items() if isinstance(v, dict)}

    def entry(self, server: str, tool: str) -> dict[str, Any]:
        found = self._data.get(server, {}).get(tool)
        return found if isinstance(found, dict) else {}

    def set(self, server: str, tool: str, fp: str, *, always: bool | None = None) -> None:
        entry = dict(self.entry(server, tool))
        entry["fingerprint"] = fp
        if always is not None:
            entry["always"] = always
        self._data.setdefault(server, {})[tool] = entry
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


