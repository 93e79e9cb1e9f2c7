"""A provider's own token count, for the fakes and the benchmarks: tiktoken's
``o200k_base`` (read from the copy litellm ships, so nothing is downloaded), counted the
way OpenAI bills a chat request. It is not the encoding tui-agent counts with for an
unknown model (cl100k_base), as a real provider's is not: the agent's count must be
corrected by the usage the provider reports."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Any


@functools.cache
def encoding() -> Any:
    import tiktoken

    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin is not None
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(spec.origin).parent
                                                     / "litellm_core_utils" / "tokenizers"))
    return tiktoken.get_encoding("o200k_base")


def tokens(value: Any) -> int:
    """Tokens of ``value``, or of the JSON it is sent as."""
    text = value if isinstance(value, str) else json.dumps(value)
    return len(encoding().encode(text, disallowed_special=()))


IMAGE = 765
"""What one image costs (a 512x512 picture at high detail)."""


def request_tokens(body: dict[str, Any]) -> int:
    """The prompt tokens of a chat-completions request: 3 a message plus its text (an
    image a flat :data:`IMAGE`), each tool call's name and arguments, the tool definitions,
    and 3 to prime the reply."""
    total = 3
    for message in body.get("messages") or ():
        total += 3
        content = message.get("content")
        if isinstance(content, str):
            total += tokens(content)
        elif isinstance(content, list):
            total += sum(tokens(p.get("text", "")) if p.get("type") == "text" else IMAGE
                         for p in content)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            total += 3 + tokens(function.get("name", "")) + tokens(function.get("arguments", ""))
    for tool in body.get("tools") or ():
        total += tokens(tool)
    return total


def prose(size: int, seed: int) -> str:
    """About ``size`` characters of distinct English-like words (``seed`` makes them
    differ from one message to the next)."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(f"note{seed}-{len(words)} alpha bravo charlie")
    return " ".join(words)[:size]
