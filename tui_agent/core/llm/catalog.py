"""litellm's catalogue of chat models, for the model picker to suggest from as the person
types: ``claude-son`` finds ``anthropic/claude-sonnet-4-5`` without knowing litellm's
spelling or the provider prefix tui-agent needs.

Only the providers a person reaches with one API key are offered (:data:`HOSTED`); the
cloud resellers' regional copies of the same models (Bedrock, Vertex, Azure, ...) would
bury them, and whoever uses those knows the names. The providers whose key is set come
first. Each name is the one tui-agent sends (``provider/model``), with what litellm says
of it (window, price, vision, reasoning) in the picker's words.

Blocking (it imports litellm): call it off the UI thread.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from tui_agent.core.llm.facts import ModelFacts, facts_of
from tui_agent.core.llm.loader import load_litellm

NOT_FOR_CHAT = ("ft:", "audio", "realtime", "transcribe", "tts")
"""Entries of litellm's chat table that are no model to chat with here: fine-tuning
templates (``ft:gpt-4o-mini``), voice models."""

HOSTED = {
    "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY", "mistral": "MISTRAL_API_KEY", "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY", "xai": "XAI_API_KEY", "together_ai": "TOGETHERAI_API_KEY",
    "cohere_chat": "COHERE_API_KEY",
}
"""The providers offered, each with the environment variable that holds its key (the ones
the first-run screen names)."""


@dataclass(frozen=True)
class Known:
    """One model of the catalogue."""

    name: str
    """As tui-agent sends it: ``provider/model``."""
    facts: ModelFacts
    key_env: str
    """The environment variable its provider's key is read from."""
    keyed: bool
    """That variable is set."""

    def summary(self) -> str:
        """The variable to set when it is not, first (a narrow picker cuts the end), then
        the facts: ``set ANTHROPIC_API_KEY · 200k window · ...``."""
        needs = "" if self.keyed else f"set {self.key_env}"
        return " · ".join(part for part in (needs, self.facts.summary()) if part)


def chat_models(env: Mapping[str, str] | None = None) -> list[Known]:
    """The chat models of :data:`HOSTED` providers that litellm knows: those whose key is
    set in ``env`` (the process's environment by default) first, then by provider, the
    shorter names (a model's alias before its dated versions) before the longer."""
    source = os.environ if env is None else env
    found: dict[str, Known] = {}
    for key, info in load_litellm().model_cost.items():
        provider = info.get("litellm_provider")
        if info.get("mode") != "chat" or provider not in HOSTED or not isinstance(key, str) \
                or any(word in key for word in NOT_FOR_CHAT):
            continue
        name = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        if name not in found:
            key_env = HOSTED[provider]
            found[name] = Known(name, facts_of(dict(info)), key_env,
                                keyed=bool(source.get(key_env)))
    order = list(HOSTED)
    return sorted(found.values(), key=lambda k: (
        not k.keyed, order.index(k.name.split("/", 1)[0]), len(k.name), k.name))
