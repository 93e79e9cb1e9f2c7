"""Hook scripts written as Claude Code's hooks documentation shows them (a shell script
that reads its input with ``INPUT=$(cat)`` and exits 2 with the reason on stderr; a
Python script printing ``hookSpecificOutput`` JSON), and config text that runs them."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

GUARD_SH = r"""#!/bin/bash
# Block any call whose input mentions "forbidden"; log every input beside the script.
INPUT=$(cat)
echo "$INPUT" >> "$(dirname "$0")/seen.jsonl"
if echo "$INPUT" | grep -q 'forbidden'; then
  echo "Blocked: the input mentions a forbidden word" >&2
  exit 2
fi
exit 0
"""

DECIDE_PY = r"""#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {
    "hookEventName": data["hook_event_name"],
    "permissionDecision": %(decision)r,
    "permissionDecisionReason": %(reason)r,
    %(more)s
}}))
"""


def script(folder: Path, name: str, text: str) -> Path:
    """An executable script ``name`` in ``folder``."""
    path = folder / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def guard(folder: Path) -> Path:
    return script(folder, "guard.sh", GUARD_SH)


def decider(folder: Path, decision: str, reason: str = "", name: str = "decide.py",
            updated: dict[str, Any] | None = None, context: str = "") -> Path:
    more = []
    if updated is not None:
        more.append(f'"updatedInput": {json.dumps(updated)},')
    if context:
        more.append(f'"additionalContext": {context!r},')
    return script(folder, name, DECIDE_PY % {"decision": decision, "reason": reason,
                                             "more": "\n    ".join(more)})


def hooks_toml(event: str, command: str, matcher: str | None = None,
               timeout: float | None = None) -> str:
    """One ``[[hooks.EVENT]]`` entry running ``command``."""
    lines = [f"[[hooks.{event}]]"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    extra = f", timeout = {timeout}" if timeout is not None else ""
    lines.append(f'hooks = [{{ type = "command", command = {json.dumps(command)}{extra} }}]')
    return "\n".join(lines) + "\n\n"


def seen(folder: Path) -> list[dict[str, Any]]:
    """The inputs the guard script logged."""
    log = folder / "seen.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
