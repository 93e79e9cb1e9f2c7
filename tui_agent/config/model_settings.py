"""``[model]`` and ``[models."NAME"]``: which LLM to talk to and how, and the litellm
arguments ``params`` may not set (tui-agent sets them itself). Re-exported by
:mod:`tui_agent.config.models`, which holds the rest of the configuration's shape.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from tui_agent.config.reasoning import ReasoningEffort
from tui_agent.config.strict import Strict as _Strict

OWNED_PARAMS = {
    "model": "the model is [model] name (or --model, /model)",
    "messages": "tui-agent sends the conversation itself",
    "stream": "tui-agent always streams",
    "stream_options": "tui-agent sets them to read the usage",
    "tools": "the tools come from the MCP servers",
    "api_base": "use [model] api_base (or --api-base)",
    "base_url": "use [model] api_base (or --api-base)",
    "api_key": "use [model] api_key_env (or api_key)",
}
"""litellm arguments tui-agent sets itself, refused in ``params``, with what to use."""


class ModelSettings(_Strict):
    """``[model]``: which LLM to talk to and how."""

    name: str | None = None
    """Any litellm model string, e.g. ``openai/gpt-4o-mini``, ``anthropic/claude-sonnet-4-5``,
    ``ollama/llama3.1``. Unset means no model is configured yet."""
    api_base: str | None = None
    """Base URL of the provider or of any OpenAI-compatible server (``${VAR}`` expanded)."""
    api_key: str | None = None
    """The key itself (``${VAR}`` expanded). Prefer ``api_key_env``."""
    api_key_env: str | None = None
    """Name of the environment variable that holds the key."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    system_prompt: str | None = None
    """Replaces tui-agent's own part of the system prompt (who it is, how it uses tools);
    the environment, project memory and the servers' instructions still follow."""
    append_system_prompt: str | None = None
    """Added after tui-agent's own part (or after ``system_prompt``, when set)."""
    choices: list[str] = Field(default_factory=list)
    """Models the TUI's ``/model`` picker offers (any other litellm string can be typed)."""
    sampling_model: str | None = None
    """The model that answers MCP servers' sampling requests (default: the chat's)."""
    vision: bool | None = None
    """Whether the model reads images (tools' images then reach it as image parts); unset:
    what litellm knows of the model."""
    audio: bool | None = None
    """Whether the model reads sound (tools' WAV and MP3 then reach it as audio parts);
    unset: what litellm knows of the model."""
    timeout: float = Field(default=600.0, gt=0)
    """Seconds one LLM request (including its whole stream) may take."""
    max_retries: int = Field(default=3, ge=0, le=10)
    """Retries on 429, 5xx and connection errors before the first token arrives."""
    retry_backoff: float = Field(default=1.0, ge=0, le=60)
    """First retry delay in seconds; it doubles each try (with jitter), capped at 30 s."""
    context_window: int | None = Field(default=None, ge=1024)
    """Tokens of input the model takes (for a local or custom model litellm does not know);
    unset: litellm's ``max_input_tokens`` for the model, else no limit is assumed."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a reasoning model thinks (litellm's ``reasoning_effort``, translated per
    provider); unset: the provider's default. ``none`` turns thinking off."""
    prompt_cache: bool = True
    """Mark cache breakpoints (system prompt, tools, latest message) for providers that
    cache only on request (Anthropic, Claude on Bedrock and Vertex)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Any other litellm argument, sent as given (e.g. ``top_p``, ``extra_headers``;
    ``${VAR}`` expanded in its strings). Not the ones tui-agent sets itself
    (:data:`OWNED_PARAMS`)."""

    @field_validator("params")
    @classmethod
    def _not_owned(cls, params: dict[str, Any]) -> dict[str, Any]:
        for key, instead in OWNED_PARAMS.items():
            if key in params:
                raise ValueError(f"'{key}' cannot be set in params: {instead}")
        return params


NOT_PER_MODEL = ("name", "choices", "sampling_model")
"""``[model]`` keys that choose models rather than describe one: not in ``[models."NAME"]``."""


class ModelEntry(ModelSettings):
    """``[models."NAME"]``: any ``[model]`` key for one model (NAME, a litellm model
    string), applied whenever that model is chosen; only the keys written count."""

    @model_validator(mode="after")
    def _describes_one_model(self) -> ModelEntry:
        wrong = [k for k in NOT_PER_MODEL if k in self.model_fields_set]
        if wrong:
            raise ValueError(f"'{wrong[0]}' belongs in [model], not in a [models] table "
                             "(the table's name is the model)")
        return self
