"""Fixtures and helpers for tests that talk to the provider fakes through litellm.

The fakes themselves are in ``tests/fakes/`` (:mod:`~tests.fakes.anthropic_server`,
:mod:`~tests.fakes.gemini_server`, :mod:`~tests.fakes.ollama_server`); this module gives
each a pytest fixture (a started fake with an empty script: ``fake.push(Reply(...))``), the
litellm model string that reaches it, and :func:`complete`, one streamed litellm call
assembled the way tui-agent assembles one (``stream_chunk_builder``), plus the tool, the
question and the helpers the provider tests share. A test module uses a fixture by
importing it (``from tests.providers import anthropic_fake``), naming it once at module
level (``_ = anthropic_fake``, so ruff sees the import used rather than redefined) and
then as a test's argument.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.fakes.anthropic_server import AnthropicFake
from tests.fakes.gemini_server import GeminiFake
from tests.fakes.ollama_server import OllamaFake
from tui_agent.core.llm import load_litellm

ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
GEMINI_MODEL = "gemini/gemini-3-pro-preview"
"""A Gemini 3 model: litellm and the fake both treat its thought signatures as required."""
OLLAMA_MODEL = "ollama_chat/qwen3"
"""Served by :class:`OllamaFake`'s default model (tools and thinking capable)."""


@pytest.fixture
def anthropic_fake() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture
def gemini_fake() -> Iterator[GeminiFake]:
    with GeminiFake() as fake:
        yield fake


@pytest.fixture
def ollama_fake() -> Iterator[OllamaFake]:
    with OllamaFake() as fake:
        yield fake


def route(fake: AnthropicFake | GeminiFake | OllamaFake) -> dict[str, Any]:
    """The litellm arguments that reach ``fake``: model, api_base and a key."""
    if isinstance(fake, AnthropicFake):
        return {"model": ANTHROPIC_MODEL, "api_base": fake.base_url, "api_key": "sk-fake"}
    if isinstance(fake, GeminiFake):
        return {"model": GEMINI_MODEL, "api_base": fake.base_url, "api_key": "fake-key"}
    return {"model": OLLAMA_MODEL, "api_base": fake.base_url}


@dataclass
class Completion:
    """One streamed call, assembled."""

    message: Any
    """litellm's assembled ``Message`` (content, tool_calls, reasoning_content,
    thinking_blocks)."""
    usage: Any
    chunks: list[Any]

    def assistant(self, **drop: bool) -> dict[str, Any]:
        """The message as the next request's history wants it: content, tool calls with
        their ids verbatim, and Anthropic's ``thinking_blocks`` (joined, signed) when there
        are any. ``thinking_blocks=False`` leaves them out (what a buggy client does)."""
        # None, not "": litellm replaces an empty string with a placeholder text block
        # ("[System: Empty message content sanitised ...]") before the tool_use.
        out: dict[str, Any] = {"role": "assistant", "content": self.message.content or None}
        if self.message.tool_calls:
            out["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.function.name,
                                               "arguments": c.function.arguments}}
                                 for c in self.message.tool_calls]
        blocks = getattr(self.message, "thinking_blocks", None)
        if blocks and drop.get("thinking_blocks", True):
            out["thinking_blocks"] = [dict(b) for b in blocks]
        return out


async def complete(messages: list[dict[str, Any]], *, num_retries: int = 0,
                   **kwargs: Any) -> Completion:
    """``litellm.acompletion(..., stream=True)`` with ``kwargs`` (spread :func:`route` in),
    read to the end and assembled. Retries are off unless asked for."""
    litellm = load_litellm()
    stream = await litellm.acompletion(messages=messages, stream=True,
                                       stream_options={"include_usage": True},
                                       num_retries=num_retries, **kwargs)
    chunks = [chunk async for chunk in stream]
    built = litellm.stream_chunk_builder(chunks, messages=messages)
    return Completion(built.choices[0].message, built.usage, chunks)


# One tool and one question the provider tests share.
TOOLS = [{"type": "function", "function": {
    "name": "get_time", "description": "The time in a zone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}},
                   "required": ["tz"]}}}]
ASK = [{"role": "user", "content": "What time is it in UTC?"}]


def tool_result(first: Completion, answer: str = "12:00") -> dict[str, Any]:
    """The tool message answering ``first``'s first tool call, by its id."""
    return {"role": "tool", "tool_call_id": first.message.tool_calls[0].id, "content": answer}


def raw_post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
    """POST JSON without litellm (for the rules litellm never lets a caller break)."""
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())
