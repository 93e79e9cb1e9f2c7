"""What litellm knows of a model, for people choosing one: its context window, its price
in and out per million tokens, whether it reads images and whether it reasons.

Blocking (it imports litellm, and for a local server's model litellm may ask the server
at ``api_base``): call it off the UI thread. A model litellm does not know has no facts
(None); a window or price it does not state is None, never a guess, and a price of 0.0
(what litellm says of every local model) is unknown too, not free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_agent.config.models import ModelSettings
from tui_agent.core.llm.loader import load_litellm
from tui_agent.core.llm.windows import ask_server, asks_server

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelFacts:
    """litellm's word on one model."""

    context_window: int | None = None
    """Input tokens it takes."""
    price_in: float | None = None
    """US dollars per million input tokens."""
    price_out: float | None = None
    """US dollars per million output tokens."""
    vision: bool = False
    reasoning: bool = False

    def summary(self) -> str:
        """One line for a list: ``128k window · $2.5/$10 per M · vision · reasons``
        (the price of a million tokens in, then out)."""
        parts = []
        if self.context_window:
            size = self.context_window
            parts.append(f"{size // 1000}k window" if size >= 10_000 else f"{size} window")
        if self.price_in is not None and self.price_out is not None:
            parts.append(f"${_money(self.price_in)}/${_money(self.price_out)} per M")
        if self.vision:
            parts.append("vision")
        if self.reasoning:
            parts.append("reasons")
        return " · ".join(parts)


def _money(value: float) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _price(info: dict[str, Any], key: str) -> float | None:
    value = info.get(key)
    if not isinstance(value, int | float) or value <= 0:
        return None
    return float(value) * PER_MILLION


def model_facts(name: str, api_base: str | None = None) -> ModelFacts | None:
    """litellm's facts on ``name`` (None: litellm does not know it); for a local server's
    model (Ollama, vLLM, LM Studio), the server's word, as the requests follow it: no
    price, and its window, what it reads and whether it thinks. Blocking."""
    if asks_server(name):
        said = ask_server(ModelSettings(name=name, api_base=api_base))
        if said is None:
            return None
        return ModelFacts(context_window=said.window, vision="image" in (said.kinds or ()),
                          reasoning=bool(said.reasons))
    litellm = load_litellm()
    try:
        info: dict[str, Any] = dict(litellm.get_model_info(model=name, api_base=api_base))
    except Exception:  # litellm raises a bare Exception for a model it does not know
        return None
    return facts_of(info)


def facts_of(info: dict[str, Any]) -> ModelFacts:
    """The facts in one entry of litellm's model information (``get_model_info``, or its
    ``model_cost`` table)."""
    window = info.get("max_input_tokens")  # its max_tokens is mostly the output limit
    return ModelFacts(
        context_window=window if isinstance(window, int) and window > 0 else None,
        price_in=_price(info, "input_cost_per_token"),
        price_out=_price(info, "output_cost_per_token"),
        vision=bool(info.get("supports_vision")),
        reasoning=bool(info.get("supports_reasoning")))


def can_reason(name: str, api_base: str | None = None) -> bool | None:
    """Whether ``name`` reasons, as litellm knows it (litellm's ``supports_reasoning``);
    None when litellm does not know the model at all. For an Ollama model, the server's
    word (its ``thinking`` capability), as the requests follow it: litellm's facts on one
    never say. Blocking."""
    if name.split("/", 1)[0] in ("ollama", "ollama_chat"):
        said = ask_server(ModelSettings(name=name, api_base=api_base))
        return said.reasons if said is not None else None
    if model_facts(name, api_base) is None:
        return None
    try:
        return bool(load_litellm().supports_reasoning(model=name))
    except Exception:  # a model litellm half knows: treat as unknown
        return None
