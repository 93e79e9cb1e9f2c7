"""JSON as editors write their settings: with ``//`` and ``/* */`` comments and trailing
commas (VS Code's and Zed's ``settings.json``). Comments and the commas are blanked
out, keeping every line where it was, so the standard parser's line numbers still
point into the file."""

from __future__ import annotations

import json
import re
from typing import Any

_STRING = r'"(?:[^"\\]|\\.)*"'
_COMMENT = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/", re.DOTALL)
_COMMA = re.compile(_STRING + r"|,(?=\s*[}\]])")


def strip(text: str) -> str:
    """``text`` with comments and trailing commas replaced by spaces (newlines kept)."""
    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return re.sub(r"[^\n]", " ", token)

    # Comments first: a comma before a comment and then a brace is still trailing.
    return _COMMA.sub(blank, _COMMENT.sub(blank, text))


def loads(text: str) -> Any:
    """Parse JSON with comments; raises ``json.JSONDecodeError`` like :func:`json.loads`."""
    return json.loads(strip(text))
