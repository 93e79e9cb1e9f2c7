"""A scripted Gemini API (``generateContent``, ``streamGenerateContent?alt=sse``) on 127.0.0.1.

Written from Google's Gemini API documentation (generateContent, function calling,
thinking, thought signatures, errors) and checked against how litellm 1.106 and 1.110
speak it.
Point litellm at it with ``model="gemini/<name>", api_base=fake.base_url, api_key="x"``
(litellm asks for ``{api_base}/models/{name}:streamGenerateContent?alt=sse`` and sends the
key in ``x-goog-api-key``; a ``key`` query parameter is accepted too, one is required).

The script: each request takes the next :class:`Reply` (an exhausted script answers 500
``INTERNAL`` saying so). A reply streams as SSE, one ``GenerateContentResponse`` per event:
thought parts (``thought: true``, only when the request's ``thinkingConfig`` has
``includeThoughts``), text parts, then every ``functionCall`` part in one event, the last
event with ``finishReason``; ``usageMetadata`` rides on each event (prompt, candidates,
total, ``thoughtsTokenCount`` and the scripted implicit-cache ``cachedContentTokenCount``).
:func:`error` builds scripted failures (503 overloaded, 429, 400 token count, 500).

The rules it enforces, answered with Google's body
``{"error": {"code": ..., "message": ..., "status": ...}}``:

- an API key; ``contents`` not empty, roles ``user``/``model``; a model turn with function
  calls is answered by the next user turn with as many ``functionResponse`` parts.
- Gemini 3's thought signatures (on by default for ``gemini-3*`` models; see
  :attr:`GeminiFake.require_signatures`): the fake signs the first ``functionCall`` of each
  reply, as Gemini does; in the current turn (since the last user text) each model step's
  first ``functionCall`` must come back with exactly that signature: missing is 400
  "Function call is missing a thought_signature ...", altered is 400 "Corrupted thought
  signature.". Google documents two placeholder values that skip the check (litellm sends
  one when a gemini-3 tool call has lost its signature, and litellm 1.110 resends a request
  refused for a signature with it in place of each); the fake accepts them as Google does
  but counts them in :attr:`GeminiFake.skipped_signatures`, and refuses them with
  :attr:`GeminiFake.strict`. Each refusal's message is kept in :attr:`GeminiFake.refusals`.
  A ``functionCall``'s and a ``functionResponse``'s ``id`` (litellm 1.110 sends the tool
  call's id without its signature) are the API's own optional fields.
- ``thinkingConfig``: not both ``thinkingLevel`` and ``thinkingBudget``.
- :attr:`GeminiFake.window`: a longer prompt is refused with Gemini's "The input token
  count (N) exceeds the maximum number of tokens allowed (M)."

Tokens are counted as ``len(canonical JSON) // 4`` of the contents, system instruction
and tools.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.provider_base import Exchange, ScriptedServer

PLACEHOLDERS = frozenset(base64.b64encode(s).decode() for s in (
    b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go")) | {
    "skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
"""The documented dummy signatures that skip validation (raw and base64, as sent)."""

_OPAQUE = ("args", "response", "parameters", "parametersJsonSchema", "responseSchema")
_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>\w+)$")


@dataclass
class FunctionCall:
    """A function call the fake model makes (Gemini sends each whole, never in pieces)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    """One scripted answer."""

    text: str = ""
    thoughts: str | None = None
    """Thought summary text (sent only when the request asks ``includeThoughts``)."""
    function_calls: list[FunctionCall] = field(default_factory=list)
    chunk_chars: int = 8
    cached_tokens: int = 0
    """Prompt tokens reported as read from Gemini's implicit cache."""
    finish_reason: str = "STOP"
    status: int = 200
    error_status: str = "INTERNAL"
    error_message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, message: str | None = None, retry_after: int | None = None) -> Reply:
    """A scripted failure with Google's status name for ``status``."""
    name, default = {400: ("INVALID_ARGUMENT", "The input token count (1048577) exceeds the "
                                               "maximum number of tokens allowed (1048576)."),
                     429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check "
                                                 "quota)."),
                     500: ("INTERNAL", "An internal error has occurred. Please retry or "
                                       "report in https://developers.generativeai.google/"
                                       "guide/troubleshooting"),
                     503: ("UNAVAILABLE", "The model is overloaded. Please try again later.")
                     }[status]
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(status=status, error_status=name, error_message=message or default,
                 headers=headers)


class Refused(Exception):
    def __init__(self, message: str, code: int = 400, status: str = "INVALID_ARGUMENT") -> None:
        super().__init__(message)
        self.code, self.status, self.message = code, status, message


def camel(value: Any) -> Any:
    """Proto JSON accepts snake_case and camelCase field names alike: read both as camel.
    Values the caller owns (function args and responses, schemas) are left as they are."""
    if isinstance(value, list):
        return [camel(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)
        out[name] = v if name in _OPAQUE else camel(v)
    return out


def _body(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


class GeminiFake(ScriptedServer[Reply]):
    """The server. ``base_url`` is litellm's ``api_base``."""

    name = "fake-gemini"

    def __init__(self, replies: list[Reply] | None = None, *, window: int | None = None,
                 require_signatures: bool | None = None, strict: bool = False) -> None:
        super().__init__(replies or [])
        self.window = window
        """The model's input limit in tokens; None: no limit."""
        self.require_signatures = require_signatures
        """Enforce thought signatures; None: for ``gemini-3*`` models, as Gemini does."""
        self.strict = strict
        """Refuse the documented placeholder signatures too."""
        self.skipped_signatures = 0
        """Function calls that came back with a placeholder instead of their signature."""
        self.refusals: list[str] = []
        """The message of each 4xx the rules gave, in order (litellm 1.110 resends a request
        refused for its thought signature with the placeholders: both show here)."""
        self._issued: set[str] = set()
        self._serial = 0

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1beta"

    def handle(self, exchange: Exchange) -> None:
        req = exchange.request
        route = _ROUTE.match(req.path)
        if req.method != "POST" or route is None or route["method"] not in (
                "generateContent", "streamGenerateContent"):
            exchange.json(404, _body(404, "NOT_FOUND", f"Not found: {req.path}"))
            return
        body = camel(req.body)
        try:
            if not (req.headers.get("x-goog-api-key") or req.query.get("key")):
                raise Refused("Method doesn't allow unregistered callers (callers without "
                              "established identity). Please use API Key or other form of "
                              "API consumer identity to call this API.", 403,
                              "PERMISSION_DENIED")
            prompt = self._check(route["model"], body)
        except Refused as refused:
            self.refusals.append(refused.message)
            exchange.json(refused.code, _body(refused.code, refused.status, refused.message))
            return
        reply = self.next_reply()
        if reply is None:
            reply = error(500, "fake Gemini script exhausted: no reply scripted")
        if reply.status != 200:
            exchange.json(reply.status, _body(reply.status, reply.error_status,
                                              reply.error_message), reply.headers)
            return
        include = bool(((body.get("generationConfig") or {}).get("thinkingConfig") or {})
                       .get("includeThoughts"))
        events = self._events(reply, prompt, include, route["model"])
        if route["method"] == "streamGenerateContent":
            exchange.stream("text/event-stream",
                            [b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events])
        else:
            parts = [p for e in events for p in e["candidates"][0]["content"]["parts"]]
            whole = events[-1]
            whole["candidates"][0]["content"]["parts"] = parts
            exchange.json(200, whole)

    # -- the rules ---------------------------------------------------------------------

    def _check(self, model: str, body: dict[str, Any]) -> int:
        contents = body.get("contents") or []
        if not contents:
            raise Refused("* GenerateContentRequest.contents: contents is not specified\n")
        thinking = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
        if "thinkingLevel" in thinking and "thinkingBudget" in thinking:
            raise Refused("You can only set only one of thinking budget and thinking level.")
        for i, content in enumerate(contents):
            if content.get("role") not in ("user", "model"):
                raise Refused(f"* GenerateContentRequest.contents[{i}].role: Please use a "
                              "valid role: user, model.\n")
        self._check_pairs(contents)
        enforce = self.require_signatures
        if enforce is None:
            enforce = model.startswith("gemini-3")
        if enforce:
            self._check_signatures(contents)
        size = len(json.dumps([contents, body.get("systemInstruction"), body.get("tools")],
                              sort_keys=True, separators=(",", ":"))) // 4
        if self.window is not None and size > self.window:
            raise Refused(f"The input token count ({size}) exceeds the maximum number of "
                          f"tokens allowed ({self.window}).")
        return size

    @staticmethod
    def _check_pairs(contents: list[dict[str, Any]]) -> None:
        for i, content in enumerate(contents):
            calls = [p for p in content.get("parts") or [] if "functionCall" in p]
            if not calls or content.get("role") != "model":
                continue
            after = contents[i + 1] if i + 1 < len(contents) else None
            if after is None:
                continue  # the model's own turn is last: nothing to answer yet
            answers = [p for p in after.get("parts") or [] if "functionResponse" in p]
            if after.get("role") != "user" or not answers:
                raise Refused("Please ensure that function response turn comes immediately "
                              "after a function call turn.")
            if len(answers) != len(calls):
                raise Refused("Please ensure that the number of function response parts is "
                              "equal to the number of function call parts of the function "
                              "call turn.")

    def _check_signatures(self, contents: list[dict[str, Any]]) -> None:
        start = 0
        for i, content in enumerate(contents):
            parts = content.get("parts") or []
            if content.get("role") == "user" and any("text" in p for p in parts):
                start = i  # the current turn begins at the last user text
        for i in range(start, len(contents)):
            if contents[i].get("role") != "model":
                continue
            first = True
            for j, part in enumerate(contents[i].get("parts") or []):
                if "functionCall" not in part:
                    continue
                signature = part.get("thoughtSignature")
                if signature is None and first:
                    name = part["functionCall"].get("name")
                    raise Refused("Function call is missing a thought_signature in "
                                  "functionCall parts. This is required for tools to work "
                                  "correctly, and missing thought_signature may lead to "
                                  "degraded model performance. Additional data, function "
                                  f"call `default_api:{name}` , position {j + 1}. Please "
                                  "refer to https://ai.google.dev/gemini-api/docs/thought-"
                                  "signatures for more details.")
                first = False
                if signature is None or signature in self._issued:
                    continue
                if signature in PLACEHOLDERS and not self.strict:
                    self.skipped_signatures += 1
                    continue
                raise Refused("Corrupted thought signature.")

    # -- the reply ---------------------------------------------------------------------

    def _events(self, reply: Reply, prompt: int, include: bool,
                model: str) -> list[dict[str, Any]]:
        step = max(1, reply.chunk_chars)
        batches: list[list[dict[str, Any]]] = []
        if reply.thoughts and include:
            batches += [[{"text": reply.thoughts[i:i + step], "thought": True}]
                        for i in range(0, len(reply.thoughts), step)]
        batches += [[{"text": reply.text[i:i + step]}] for i in range(0, len(reply.text), step)]
        if reply.function_calls:
            self._serial += 1
            calls: list[dict[str, Any]] = [{"functionCall": {"name": c.name, "args": c.args}}
                                           for c in reply.function_calls]
            signature = self.sign(f"{self._serial}:{json.dumps(calls)}")
            self._issued.add(signature)
            calls[0]["thoughtSignature"] = signature
            batches.append(calls)
        batches = batches or [[{"text": ""}]]
        thoughts = len(reply.thoughts or "") // 4
        answer = len(json.dumps([p for b in batches for p in b if not p.get("thought")])) // 4
        usage: dict[str, int] = {"promptTokenCount": prompt, "candidatesTokenCount": answer,
                                 "totalTokenCount": prompt + answer + thoughts}
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if reply.cached_tokens:
            usage["cachedContentTokenCount"] = min(reply.cached_tokens, prompt)
        events = []
        for n, parts in enumerate(batches):
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"},
                                         "index": 0}
            if n == len(batches) - 1:
                candidate["finishReason"] = reply.finish_reason
            events.append({"candidates": [candidate], "usageMetadata": usage,
                           "modelVersion": model, "responseId": f"fake{self._serial}"})
        return events
