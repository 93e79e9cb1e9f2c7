"""A scripted Anthropic Messages API (``POST /v1/messages``) on 127.0.0.1.

Written from Anthropic's documentation (Messages, streaming, extended thinking, prompt
caching, errors) and checked against how litellm 1.106 speaks it. Point litellm at it with
``model="anthropic/<name>", api_base=fake.base_url, api_key="x"``.

The script: each request takes the next :class:`Reply` (an exhausted script answers 500
``api_error`` saying so). A reply streams as SSE (``message_start`` with usage, one
content block each for thinking (``thinking_delta`` pieces, then ``signature_delta``),
redacted thinking, text and every tool use (``input_json_delta`` pieces), then
``message_delta`` with the stop reason and output tokens, and ``message_stop``), or as one
JSON message when the request has no ``stream``. :func:`error` builds scripted failures
(429 with ``retry-after``, 529, "prompt is too long", 500).

The rules it enforces, each answered with Anthropic's status and body
``{"type": "error", "error": {"type": ..., "message": ...}}``:

- ``x-api-key`` (401) and ``anthropic-version`` (400) headers; ``model`` and
  ``max_tokens``; messages start with ``user`` and alternate; each ``tool_use`` answered by
  a ``tool_result`` with its id at the start of the next user message.
- Thinking: ``budget_tokens`` at least 1024 and below ``max_tokens``; no temperature but 1;
  an assistant message with ``tool_use`` that the request continues must start with a
  ``thinking`` or ``redacted_thinking`` block; every thinking block's ``signature`` must be
  the one the fake sent for exactly that text (HMAC), and every ``redacted_thinking``
  ``data`` must come back byte for byte.
- Prompt caching: at most 4 ``cache_control`` breakpoints (system blocks, tools, message
  content blocks). The prompt is the sequence tools, system blocks, message blocks; the
  prefix up to a breakpoint is cached when it is at least :attr:`AnthropicFake.min_cache`
  tokens, and a later request whose prefix at any block boundary (up to 20 blocks before
  a breakpoint, as Anthropic looks back) matches reads it. Tokens are counted as
  ``len(canonical JSON) // 4`` of those blocks, ``cache_control`` left out. Usage is
  reported as Anthropic does: ``input_tokens`` (after the last breakpoint read or
  written), ``cache_creation_input_tokens`` and ``cache_read_input_tokens``.
- :attr:`AnthropicFake.window`: a prompt of more tokens is refused with
  "prompt is too long: N tokens > M maximum", as Anthropic words it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.provider_base import Exchange, ScriptedServer

LOOKBACK = 20
"""Anthropic checks for cache hits at this many block boundaries before a breakpoint."""


@dataclass
class ToolUse:
    """A tool call the fake model makes; its input JSON streams in ``split`` pieces."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    split: int = 3


@dataclass
class Reply:
    """One scripted answer: blocks in the order thinking, redacted, text, tool uses."""

    text: str = ""
    thinking: str | None = None
    """Thinking text (sent in ``chunk_chars`` pieces, then its signature)."""
    redacted: bool = False
    """Also send a ``redacted_thinking`` block with opaque data."""
    tool_uses: list[ToolUse] = field(default_factory=list)
    chunk_chars: int = 8
    output_tokens: int | None = None
    """Default: a quarter of the characters sent."""
    stop_reason: str | None = None
    status: int = 200
    error_type: str = "api_error"
    error_message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, message: str | None = None, retry_after: int | None = None) -> Reply:
    """A scripted failure with Anthropic's error type for ``status``."""
    kind, default = {400: ("invalid_request_error", "prompt is too long: 210000 tokens > "
                                                     "200000 maximum"),
                     401: ("authentication_error", "invalid x-api-key"),
                     429: ("rate_limit_error", "Number of request tokens has exceeded your "
                                               "per-minute rate limit"),
                     500: ("api_error", "Internal server error"),
                     529: ("overloaded_error", "Overloaded")}[status]
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, error_type=kind, error_message=message or default,
                 headers=headers)


class Refused(Exception):
    """A request breaks a rule: answered with ``status`` and Anthropic's error body."""

    def __init__(self, message: str, status: int = 400,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def canonical(value: Any) -> str:
    """The JSON a prompt is measured and compared by (``cache_control`` left out)."""
    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k != "cache_control"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return json.dumps(strip(value), sort_keys=True, separators=(",", ":"))


def prompt_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt as one sequence: tools, then system blocks, then each message's blocks
    (tagged with the message's index and role), the order Anthropic caches in."""
    out: list[dict[str, Any]] = [{"tool": t} for t in body.get("tools") or []]
    out += [{"system": b} for b in _blocks(body.get("system"))]
    for i, message in enumerate(body.get("messages") or []):
        out += [{"message": i, "role": message.get("role"), "block": b}
                for b in _blocks(message.get("content"))]
    return out


def _has_breakpoint(entry: dict[str, Any]) -> bool:
    inner = entry.get("tool") or entry.get("system") or entry.get("block") or {}
    return bool(inner.get("cache_control"))


class AnthropicFake(ScriptedServer[Reply]):
    """The server. ``base_url`` is litellm's ``api_base``."""

    name = "fake-anthropic"

    def __init__(self, replies: list[Reply] | None = None, *, min_cache: int = 1024,
                 window: int | None = None) -> None:
        super().__init__(replies or [])
        self.min_cache = min_cache
        """The minimum cacheable prompt, in tokens (1024 for Sonnet and Opus)."""
        self.window = window
        """The model's context window in tokens; None: no limit."""
        self.cache: dict[str, int] = {}
        """Cached prefixes: canonical JSON -> tokens."""
        self.usages: list[dict[str, int]] = []
        """The usage reported for each served request, in order."""
        self._redacted: set[str] = set()
        self._serial = 0

    @property
    def base_url(self) -> str:
        return self.origin

    def handle(self, exchange: Exchange) -> None:
        req = exchange.request
        if req.method != "POST" or req.path.rstrip("/") != "/v1/messages":
            exchange.json(404, _body("not_found_error", f"Not found: {req.path}"))
            return
        try:
            self._check(req.headers, req.body)
            usage = self._cache_usage(req.body)
        except Refused as refused:
            exchange.json(refused.status, _body(refused.kind, refused.message))
            return
        reply = self.next_reply()
        if reply is None:
            reply = error(500, "fake Anthropic script exhausted: no reply scripted")
        if reply.status != 200:
            exchange.json(reply.status, _body(reply.error_type, reply.error_message),
                          reply.headers)
            return
        blocks = self._content(reply)
        usage["output_tokens"] = reply.output_tokens or max(1, len(json.dumps(blocks)) // 4)
        self.usages.append(dict(usage))
        stop = reply.stop_reason or ("tool_use" if reply.tool_uses else "end_turn")
        message = {"id": f"msg_fake{self._serial}", "type": "message", "role": "assistant",
                   "model": req.body["model"], "content": blocks, "stop_reason": stop,
                   "stop_sequence": None, "usage": usage}
        if req.body.get("stream"):
            exchange.stream("text/event-stream", self._events(message, reply))
        else:
            exchange.json(200, message)

    # -- the rules ---------------------------------------------------------------------

    def _check(self, headers: dict[str, str], body: dict[str, Any]) -> None:
        if not headers.get("x-api-key"):
            raise Refused("x-api-key header is required", 401, "authentication_error")
        if not headers.get("anthropic-version"):
            raise Refused("anthropic-version: header is required")
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                raise Refused(f"{key}: Field required")
        self._check_thinking_params(body)
        self._check_order(body["messages"])
        if body.get("thinking", {}).get("type") == "enabled":
            self._check_tool_loop(body["messages"])
        self._check_signatures(body["messages"])
        marks = sum(_has_breakpoint(e) for e in prompt_blocks(body))
        if marks > 4:
            raise Refused(f"A maximum of 4 blocks with cache_control may be provided. "
                          f"Found {marks}.")
        size = len(canonical(prompt_blocks(body))) // 4
        if self.window is not None and size > self.window:
            raise Refused(f"prompt is too long: {size} tokens > {self.window} maximum")

    @staticmethod
    def _check_thinking_params(body: dict[str, Any]) -> None:
        thinking = body.get("thinking") or {}
        if thinking.get("type") != "enabled":
            return
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise Refused("thinking.enabled.budget_tokens: Input should be greater than or "
                          "equal to 1024")
        if body["max_tokens"] <= budget:
            raise Refused("`max_tokens` must be greater than `thinking.budget_tokens`. "
                          "Please consult our documentation at https://docs.claude.com/en/"
                          "docs/build-with-claude/extended-thinking#max-tokens-and-context-"
                          "window-size")
        if body.get("temperature", 1) != 1:
            raise Refused("`temperature` may only be set to 1 when thinking is enabled. "
                          "Please consult our documentation at https://docs.claude.com/en/"
                          "docs/build-with-claude/extended-thinking#feature-compatibility")

    @staticmethod
    def _check_order(messages: list[dict[str, Any]]) -> None:
        if not messages or messages[0].get("role") != "user":
            raise Refused("messages: first message must use the \"user\" role")
        for i, message in enumerate(messages):
            if i and message.get("role") == messages[i - 1].get("role"):
                raise Refused(f"messages.{i}: roles must alternate between \"user\" and "
                              "\"assistant\"")
            uses = [b["id"] for b in _blocks(message.get("content"))
                    if b.get("type") == "tool_use"]
            if not uses:
                continue
            after = _blocks(messages[i + 1].get("content")) if i + 1 < len(messages) else []
            answered: list[str] = []
            for block in after:
                if block.get("type") != "tool_result":
                    break
                answered.append(block.get("tool_use_id", ""))
            missing = [u for u in uses if u not in answered]
            if missing and i + 1 < len(messages):
                raise Refused(f"messages.{i + 1}: `tool_use` ids were found without "
                              f"`tool_result` blocks immediately after: {', '.join(missing)}. "
                              "Each `tool_use` block must have a corresponding `tool_result` "
                              "block in the next message.")

    @staticmethod
    def _check_tool_loop(messages: list[dict[str, Any]]) -> None:
        last = next((i for i in range(len(messages) - 1, -1, -1)
                     if messages[i].get("role") == "assistant"), None)
        if last is None:
            return
        blocks = _blocks(messages[last].get("content"))
        answer = _blocks(messages[last + 1].get("content")) if last + 1 < len(messages) else []
        if not any(b.get("type") == "tool_use" for b in blocks) or not answer or \
                answer[0].get("type") != "tool_result":
            return  # a new user turn, not the continuation of a tool loop
        first = blocks[0].get("type")
        if first not in ("thinking", "redacted_thinking"):
            raise Refused(f"messages.{last}.content.0.type: Expected `thinking` or "
                          f"`redacted_thinking`, but found `{first}`. When `thinking` is "
                          "enabled, a final `assistant` message must start with a thinking "
                          "block (preceeding the lastmost set of `tool_use` and "
                          "`tool_result` blocks). We recommend you include thinking blocks "
                          "from previous turns. To avoid this requirement, disable "
                          "`thinking`. Please consult our documentation at https://docs."
                          "claude.com/en/docs/build-with-claude/extended-thinking")

    def _check_signatures(self, messages: list[dict[str, Any]]) -> None:
        for i, message in enumerate(messages):
            for j, block in enumerate(_blocks(message.get("content"))):
                where = f"messages.{i}.content.{j}"
                if block.get("type") == "thinking":
                    if "signature" not in block:
                        raise Refused(f"{where}.thinking.signature: Field required")
                    if not self.verify(block.get("thinking", ""), block["signature"]):
                        raise Refused(f"{where}: Invalid `signature` in `thinking` block")
                elif block.get("type") == "redacted_thinking" and \
                        block.get("data") not in self._redacted:
                    raise Refused(f"{where}: Invalid `data` in `redacted_thinking` block")

    # -- prompt caching ----------------------------------------------------------------

    def _cache_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Read the longest cached prefix, write every breakpoint's prefix beyond it."""
        entries = prompt_blocks(body)
        marks = [i for i, e in enumerate(entries) if _has_breakpoint(e)]
        total = len(canonical(entries)) // 4
        prefixes = {n: canonical(entries[:n + 1]) for n in range(len(entries))}
        candidates = {n for m in marks for n in range(max(0, m - LOOKBACK), m + 1)}
        hits = [n for n in candidates if prefixes[n] in self.cache]
        read_at = max(hits, default=-1)
        read = self.cache[prefixes[read_at]] if read_at >= 0 else 0
        written = read
        for m in marks:
            size = len(prefixes[m]) // 4
            if m > read_at and size >= self.min_cache:
                self.cache[prefixes[m]] = size
                written = max(written, size)
        return {"input_tokens": total - written, "cache_creation_input_tokens": written - read,
                "cache_read_input_tokens": read}

    # -- the reply ---------------------------------------------------------------------

    def _content(self, reply: Reply) -> list[dict[str, Any]]:
        self._serial += 1
        blocks: list[dict[str, Any]] = []
        if reply.thinking is not None:
            blocks.append({"type": "thinking", "thinking": reply.thinking,
                           "signature": self.sign(reply.thinking)})
        if reply.redacted:
            data = self.sign(f"redacted {self._serial}") + "=="
            self._redacted.add(data)
            blocks.append({"type": "redacted_thinking", "data": data})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for n, use in enumerate(reply.tool_uses):
            blocks.append({"type": "tool_use", "id": use.id or f"toolu_fake{self._serial}_{n}",
                           "name": use.name, "input": use.input})
        return blocks

    def _events(self, message: dict[str, Any], reply: Reply) -> list[bytes]:
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None,
                 "usage": {**usage, "output_tokens": 1}}
        out = [_sse("message_start", {"type": "message_start", "message": start})]
        step = max(1, reply.chunk_chars)
        for index, block in enumerate(message["content"]):
            kind = block["type"]
            opening = {"thinking": {"type": "thinking", "thinking": "", "signature": ""},
                       "text": {"type": "text", "text": ""},
                       "tool_use": {**block, "input": {}}}.get(kind, block)
            out.append(_sse("content_block_start", {"type": "content_block_start",
                                                    "index": index, "content_block": opening}))
            deltas: list[dict[str, Any]] = []
            if kind == "thinking":
                text = block["thinking"]
                deltas = [{"type": "thinking_delta", "thinking": text[i:i + step]}
                          for i in range(0, len(text), step)]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            elif kind == "text":
                deltas = [{"type": "text_delta", "text": block["text"][i:i + step]}
                          for i in range(0, len(block["text"]), step)]
            elif kind == "tool_use":
                args = json.dumps(block["input"])
                use = reply.tool_uses[index - (len(message["content"]) - len(reply.tool_uses))]
                size = max(1, -(-len(args) // max(1, use.split)))
                deltas = [{"type": "input_json_delta", "partial_json": args[i:i + size]}
                          for i in range(0, len(args), size)]
            out += [_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                 "delta": d}) for d in deltas]
            out.append(_sse("content_block_stop", {"type": "content_block_stop",
                                                   "index": index}))
        out.append(_sse("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": message["stop_reason"],
                                                    "stop_sequence": None},
                                          "usage": {"output_tokens": usage["output_tokens"]}}))
        out.append(_sse("message_stop", {"type": "message_stop"}))
        return out


def _body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
