"""A scripted Ollama server (``/api/chat``, ``/api/show``, ``/api/tags``) on 127.0.0.1.

Written from Ollama's API documentation (docs/api.md: chat, show, tags; thinking; tool
calling) and its ``api/types.go``, and checked against how litellm 1.106 and 1.110 speak
it. Point litellm at it with ``model="ollama_chat/<name>", api_base=fake.base_url`` (no
key).

The script: each chat request takes the next :class:`Reply` (an exhausted script answers
500 saying so). A reply streams as NDJSON, one object a line: ``message.thinking`` pieces
(only when the request asks ``think``), ``message.content`` pieces, the tool calls in one
line (function name and arguments as an object, each with an ``id`` ``call_<8 letters or
digits>``, as Ollama sends them since 0.12.10; :attr:`OllamaFake.tool_call_ids` off sends
none, as older servers did), then a final line with ``done: true``, ``done_reason``,
``prompt_eval_count`` and ``eval_count``. With ``"stream": false`` it is one object.
Errors are Ollama's body ``{"error": "..."}``.

The models it serves are :attr:`OllamaFake.models` (name to :class:`Model`: architecture,
context length, capabilities); ``/api/show`` reports them as Ollama does
(``model_info["<arch>.context_length"]``, ``capabilities``), ``/api/tags`` lists them.

The rules it enforces, as Ollama does:

- an unknown model is 404 ``model "NAME" not found, try pulling it first``;
- ``think`` (true or "low"/"medium"/"high") to a model without the ``thinking`` capability
  is 400 ``"NAME" does not support thinking``; ``tools`` to one without ``tools`` is 400;
- a tool call's ``arguments`` must be a JSON object, and its ``id`` and a tool message's
  ``tool_call_id``, when sent, strings (anything else is Go's unmarshal error, with the
  field's path, as Ollama answers it). Both are fields of Ollama's ``api.Message`` since
  0.12.10 (and older servers ignored them, as Go's JSON decoder ignores unknown fields);
- the silent truncation: a prompt longer than ``options.num_ctx`` (4096 when not sent) is
  cut to its last ``num_ctx`` tokens with no error. Each cut is recorded in
  :attr:`OllamaFake.truncations`, and ``prompt_eval_count`` is the cut size.

Tokens are counted as ``len(canonical JSON) // 4`` of the messages and tools.
"""

from __future__ import annotations

import json
import random
import string
import time
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.provider_base import Exchange, ScriptedServer

DEFAULT_NUM_CTX = 4096
"""Ollama's context when a request sends no ``num_ctx`` (its default since 0.6.x)."""


@dataclass
class Model:
    """One installed model, as ``/api/show`` describes it."""

    context_length: int = 40960
    capabilities: tuple[str, ...] = ("completion", "tools", "thinking")
    architecture: str = "qwen3"


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    """One scripted answer."""

    text: str = ""
    thinking: str | None = None
    """Sent as ``message.thinking`` only when the request asks ``think``."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    chunk_chars: int = 8
    done_reason: str = "stop"
    status: int = 200
    error_message: str = "scripted error"


@dataclass(frozen=True)
class Truncation:
    """A prompt Ollama cut silently: its size and the context it was cut to."""

    model: str
    prompt_tokens: int
    num_ctx: int


def _template(model: Model) -> str:
    """A chat template the way Ollama shows one: a tools-capable model's mentions
    ``.Tools`` (litellm reads that as "supports function calling")."""
    tools = "{{- if .Tools }}# Tools\n{{ range .Tools }}{{ . }}\n{{ end }}{{- end }}\n" \
        if "tools" in model.capabilities else ""
    return tools + "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n" \
        "{{ end }}<|im_start|>assistant\n"


def _name(model: str) -> str:
    """Ollama's own spelling: a name without a tag is ``:latest``."""
    return model if ":" in model else f"{model}:latest"


class OllamaFake(ScriptedServer[Reply]):
    """The server. ``base_url`` is litellm's ``api_base``."""

    name = "fake-ollama"

    def __init__(self, replies: list[Reply] | None = None, *,
                 models: dict[str, Model] | None = None, tool_call_ids: bool = True) -> None:
        super().__init__(replies or [])
        self.tool_call_ids = tool_call_ids
        """Give each tool call an ``id`` (Ollama 0.12.10 and later); off, none (older)."""
        self.models = {_name(k): v for k, v in (models or {"qwen3": Model()}).items()}
        """The installed models (a name without a tag means ``:latest``)."""
        self.truncations: list[Truncation] = []
        """Every prompt cut to fit ``num_ctx``, in order."""

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The bodies of the ``/api/chat`` requests (litellm also asks ``/api/show``)."""
        return [r.body for r in self.requests if r.path.rstrip("/") == "/api/chat"]

    def handle(self, exchange: Exchange) -> None:
        req = exchange.request
        route = (req.method, req.path.rstrip("/"))
        if route == ("GET", "/api/tags"):
            exchange.json(200, {"models": [self._tag(n) for n in self.models]})
        elif route == ("POST", "/api/show"):
            self._show(exchange)
        elif route == ("POST", "/api/chat"):
            self._chat(exchange)
        else:
            exchange.json(404, {"error": f"404 page not found: {req.path}"})

    def _tag(self, name: str) -> dict[str, Any]:
        model = self.models[name]
        return {"name": name, "model": name, "modified_at": "2026-11-01T00:00:00Z",
                "size": 5_000_000_000, "digest": "0" * 64,
                "details": {"format": "gguf", "family": model.architecture,
                            "parameter_size": "8B", "quantization_level": "Q4_K_M"}}

    def _show(self, exchange: Exchange) -> None:
        asked = str(exchange.request.body.get("model") or exchange.request.body.get("name"))
        model = self.models.get(_name(asked))
        if model is None:
            exchange.json(404, {"error": f"model '{asked}' not found"})
            return
        arch = model.architecture
        exchange.json(200, {
            "modelfile": f"FROM {asked}", "parameters": "", "template": _template(model),
            "details": self._tag(_name(asked))["details"],
            "model_info": {"general.architecture": arch, f"{arch}.context_length":
                           model.context_length, "general.parameter_count": 8_000_000_000},
            "capabilities": list(model.capabilities)})

    def _chat(self, exchange: Exchange) -> None:
        body = exchange.request.body
        asked = str(body.get("model"))
        model = self.models.get(_name(asked))
        if model is None:
            exchange.json(404, {"error": f"model \"{asked}\" not found, try pulling it first"})
            return
        problem = self._check(asked, model, body)
        if problem is not None:
            exchange.json(400, {"error": problem})
            return
        prompt = len(json.dumps([body.get("messages"), body.get("tools")], sort_keys=True,
                                separators=(",", ":"))) // 4
        num_ctx = int((body.get("options") or {}).get("num_ctx") or DEFAULT_NUM_CTX)
        if prompt > num_ctx:
            self.truncations.append(Truncation(asked, prompt, num_ctx))
            prompt = num_ctx
        reply = self.next_reply()
        if reply is None:
            reply = Reply(status=500, error_message="fake Ollama script exhausted: no reply "
                                                    "scripted")
        if reply.status != 200:
            exchange.json(reply.status, {"error": reply.error_message})
            return
        lines = self._lines(asked, reply, bool(body.get("think")), prompt, self.tool_call_ids)
        if body.get("stream", True):
            exchange.stream("application/x-ndjson",
                            [json.dumps(line).encode() + b"\n" for line in lines])
        else:
            whole = lines[-1]
            whole["message"] = {
                "role": "assistant",
                "content": "".join(x["message"].get("content", "") for x in lines),
                **({"thinking": "".join(x["message"].get("thinking", "") for x in lines)}
                   if any("thinking" in x["message"] for x in lines) else {}),
                **({"tool_calls": [c for x in lines for c in x["message"].get("tool_calls", [])]}
                   if reply.tool_calls else {})}
            exchange.json(200, whole)

    @staticmethod
    def _check(asked: str, model: Model, body: dict[str, Any]) -> str | None:
        think = body.get("think")
        if think not in (None, False, True, "low", "medium", "high"):
            return f"invalid think value: \"{think}\" (must be \"true\", \"false\", " \
                   "\"high\", \"medium\", \"low\")"
        if think and "thinking" not in model.capabilities:
            return f"\"{asked}\" does not support thinking"
        if body.get("tools") and "tools" not in model.capabilities:
            return f"registry.ollama.ai/library/{asked} does not support tools"
        for message in body.get("messages") or []:
            if not isinstance(message.get("tool_call_id"), str | None):  # null: Go skips it
                return _unmarshal(message["tool_call_id"], "Message.messages.tool_call_id",
                                  "string")
            for call in message.get("tool_calls") or []:
                if not isinstance(call.get("id"), str | None):
                    return _unmarshal(call["id"], "ToolCall.messages.tool_calls.id", "string")
                arguments = (call.get("function") or {}).get("arguments", {})
                if not isinstance(arguments, dict):
                    return _unmarshal(arguments, "ToolCallFunction.messages.tool_calls.function."
                                      "arguments", "api.ToolCallFunctionArguments")
        return None

    @staticmethod
    def _lines(asked: str, reply: Reply, think: bool, prompt: int,
               ids: bool) -> list[dict[str, Any]]:
        step = max(1, reply.chunk_chars)
        messages: list[dict[str, Any]] = []
        if think and reply.thinking:
            messages += [{"role": "assistant", "content": "",
                          "thinking": reply.thinking[i:i + step]}
                         for i in range(0, len(reply.thinking), step)]
        messages += [{"role": "assistant", "content": reply.text[i:i + step]}
                     for i in range(0, len(reply.text), step)]
        if reply.tool_calls:
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {**({"id": _call_id()} if ids else {}),
                 "function": {"index": i, "name": c.name, "arguments": c.arguments}}
                for i, c in enumerate(reply.tool_calls)]})
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        out = [{"model": asked, "created_at": stamp, "message": m, "done": False}
               for m in messages]
        produced = len(reply.text) + len(reply.thinking or "") if think else len(reply.text)
        out.append({"model": asked, "created_at": stamp,
                    "message": {"role": "assistant", "content": ""}, "done": True,
                    "done_reason": reply.done_reason, "total_duration": 1_000_000,
                    "load_duration": 1000, "prompt_eval_count": prompt,
                    "prompt_eval_duration": 1000,
                    "eval_count": max(1, produced // 4 + 4 * len(reply.tool_calls)),
                    "eval_duration": 1000})
        return out


def _call_id() -> str:
    """A tool call's id as Ollama makes one (``call_`` and 8 lowercase letters or digits)."""
    return "call_" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8))


def _unmarshal(value: Any, field_path: str, go_type: str) -> str:
    """Go's error for a JSON value of the wrong type, as Ollama answers it (400)."""
    kind = {str: "string", bool: "bool", int: "number", float: "number", list: "array",
            dict: "object"}.get(type(value), "value")
    return f"json: cannot unmarshal {kind} into Go struct field {field_path} of type {go_type}"
