"""What a local model server says of the model it serves: its context window, and for
Ollama what the model reads besides text.

litellm's price list knows nothing of most local models, and what it lists for a few
Ollama names (``ollama/llama3.1``: 8,192) is not what the server runs; without the
``api_base`` it asks nobody. So :func:`ask_server` asks the server itself, with a short
timeout (blocking: :class:`~tui_agent.core.llm.client.LLM` calls it from a thread):

- Ollama (``ollama/``, ``ollama_chat/``): ``POST /api/show``. The window is the
  Modelfile's ``num_ctx`` when the model's author or the user set one (what the server
  runs by default), else the model's own ``<arch>.context_length`` from ``model_info``
  capped at :data:`OLLAMA_CAP` tokens, or at ``OLLAMA_CONTEXT_LENGTH`` when that is set
  (the server's configured default): the window is sent as ``num_ctx``, and a model's
  whole trained context (131,072 for llama3.1) makes Ollama reload it with a KV cache
  that may not fit (slow, on the CPU, or not at all);
  ``capabilities`` tell what it reads (``vision``, ``audio``) and whether it reasons
  (``thinking``: litellm's own facts on an Ollama model never say).
- vLLM (``hosted_vllm/``): ``GET {api_base}/models``, the model's ``max_model_len``.
- LM Studio (``lm_studio/``): ``GET /api/v0/models/{model}``, its loaded (else its
  maximum) context length.
- A LiteLLM Proxy (``litellm_proxy/``, the team gateway): ``GET /v1/model/info``, the
  ``max_input_tokens`` and ``supports_vision`` / ``supports_audio_input`` it holds for
  the model name (its config's ``model_info``, else litellm's for the model behind it).

A server that does not answer, or answers without the fact, leaves it unknown (None).
"""

from __future__ import annotations

import json
import os
import urllib.parse
from dataclasses import dataclass
from typing import Any

from tui_agent.config.models import ModelSettings
from tui_agent.core.llm.proxy import proxy_of

ASK_TIMEOUT = 3.0
"""Seconds the server has to answer (the request's own ``timeout`` when shorter)."""
OLLAMA_BASE = "http://localhost:11434"
OLLAMA_CAP = 32768
"""The most of a model's trained context taken as its window by default (tokens)."""
SERVED = ("ollama", "ollama_chat", "hosted_vllm", "lm_studio", "litellm_proxy")
"""Providers whose server is asked."""
_KINDS = {"vision": "image", "audio": "audio"}
"""Ollama capabilities, as the media kinds :meth:`LLM.takes` names."""


@dataclass(frozen=True)
class ServedModel:
    """What the server said of the model."""

    window: int | None = None
    kinds: frozenset[str] | None = None
    """What it reads besides text (``image``, ``audio``); None: the server does not say."""
    reasons: bool | None = None
    """Whether it can think (Ollama's ``thinking`` capability); None: the server does not
    say."""


def asks_server(model: str | None) -> bool:
    """Whether the model's facts come from its server rather than litellm's list."""
    return (model or "").split("/", 1)[0] in SERVED and "/" in (model or "")


def ask_server(settings: ModelSettings) -> ServedModel | None:
    """What the model's server says of it; None when it does not answer. Blocking."""
    provider, _, model = (settings.name or "").partition("/")
    timeout = min(ASK_TIMEOUT, settings.timeout)
    try:
        if provider in ("ollama", "ollama_chat"):
            return _ollama(settings, model, timeout)
        if provider == "hosted_vllm" and settings.api_base:
            return _vllm(settings, model, timeout)
        if provider == "lm_studio" and settings.api_base:
            return _lm_studio(settings, model, timeout)
        if provider == "litellm_proxy":
            return _gateway(settings, model, timeout)
    except (OSError, ValueError, TypeError, AttributeError):  # no answer, or not JSON
        return None
    return None


def _ollama(settings: ModelSettings, model: str, timeout: float) -> ServedModel:
    base = (settings.api_base or os.environ.get("OLLAMA_API_BASE") or OLLAMA_BASE).rstrip("/")
    for suffix in ("/api/chat", "/api/generate", "/v1"):
        base = base.removesuffix(suffix)
    show = _get(settings, f"{base}/api/show", timeout, {"model": model, "name": model})
    window = _num_ctx(str(show.get("parameters") or ""))
    if window is None:
        info = show.get("model_info") or {}
        trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length")),
                       None)
        window = min(trained, _ollama_cap()) if trained is not None else None
    capabilities = show.get("capabilities")
    if not isinstance(capabilities, list):
        return ServedModel(window)
    return ServedModel(window, frozenset(_KINDS[c] for c in capabilities if c in _KINDS),
                       "thinking" in capabilities)


def _ollama_cap() -> int:
    """``OLLAMA_CONTEXT_LENGTH`` (the server's own default context) when set, else
    :data:`OLLAMA_CAP`."""
    return _int(os.environ.get("OLLAMA_CONTEXT_LENGTH")) or OLLAMA_CAP


def _num_ctx(parameters: str) -> int | None:
    """The ``num_ctx`` line of a Modelfile's parameters (``num_ctx   8192``)."""
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx":
            return _int(value.strip())
    return None


def _vllm(settings: ModelSettings, model: str, timeout: float) -> ServedModel:
    listing = _get(settings, f"{str(settings.api_base).rstrip('/')}/models", timeout)
    for entry in listing.get("data") or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return ServedModel(_int(entry.get("max_model_len")))
    return ServedModel()


def _lm_studio(settings: ModelSettings, model: str, timeout: float) -> ServedModel:
    root = str(settings.api_base).rstrip("/").removesuffix("/v1")
    entry = _get(settings, f"{root}/api/v0/models/{urllib.parse.quote(model, safe='')}",
                 timeout)
    return ServedModel(_int(entry.get("loaded_context_length"))
                       or _int(entry.get("max_context_length")))


def _gateway(settings: ModelSettings, model: str, timeout: float) -> ServedModel | None:
    proxy = proxy_of(settings)
    if proxy is None:
        return None
    listing = _get(settings.model_copy(update={"api_key": proxy.key}),
                   f"{proxy.base}/v1/model/info", timeout)
    for entry in listing.get("data") or []:
        if isinstance(entry, dict) and entry.get("model_name") == model:
            info = entry.get("model_info") or {}
            said = {kind: info.get(f"supports_{name}")
                    for kind, name in (("image", "vision"), ("audio", "audio_input"))}
            kinds = (frozenset(k for k, v in said.items() if v)
                     if any(v is not None for v in said.values()) else None)
            return ServedModel(_int(info.get("max_input_tokens")), kinds)
    return ServedModel()


def _get(settings: ModelSettings, url: str, timeout: float,
         body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON request (a POST when there is a body); its JSON object answer."""
    import urllib.request  # ~30 ms (http.client, email): only once a server is asked

    headers = {"Content-Type": "application/json"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
        answer = json.loads(response.read())
    if not isinstance(answer, dict):
        raise ValueError("not a JSON object")
    return answer


def _int(value: object) -> int | None:
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if number > 0 else None
