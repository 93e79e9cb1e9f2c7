"""Which settings a model is used with: one pure function, :func:`resolve`, that every
way of choosing a model goes through (``[model] name``, ``--model``, ``/model`` in the
app, ``sampling_model``, a reloaded config).

It starts from ``[model]``. When the chosen model is not ``[model]``'s own (a
``[model]`` without a name is for whichever model is chosen), the keys that describe
that model (``vision``, ``audio``, ``context_window``) are dropped, and its endpoint
(``api_base``, with the key settings that belong to it, ``api_key`` and
``api_key_env``) carries over only to a model of the same provider prefix (the text
before the first ``/``). Then the model's own ``[models."NAME"]`` table applies (its
``params`` over ``[model]``'s, argument by argument), then the command line's
``--api-base`` (to a model of the command line's provider) and
``--reasoning-effort``. The loader expands every table's variables and keys first
(:mod:`tui_agent.config.model_keys`); nothing here reads the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tui_agent.config.models import ModelSettings

MODEL_OWN = ("vision", "audio", "context_window")
"""``[model]`` keys that describe ``[model]``'s own model and never carry to another."""
ENDPOINT = ("api_base", "api_key", "api_key_env")
"""Where requests go and with which key: carried only within one provider prefix."""


@dataclass(frozen=True)
class ModelFlags:
    """The command line's model flags, kept so that every later choice (``/model``, a
    reload) resolves the same way."""

    model: str | None = None
    """``--model``."""
    api_base: str | None = None
    """``--api-base``: for the model the command line chose, and others of its provider."""
    reasoning_effort: str | None = None
    """``--reasoning-effort``: for whichever model is chosen."""


def provider(name: str | None) -> str:
    """The provider prefix of a litellm model string (``openai`` of ``openai/gpt-4o``);
    ``""`` for a bare name (litellm infers it), so bare names share one."""
    return name.split("/", 1)[0] if name and "/" in name else ""


def resolve(model: ModelSettings, tables: Mapping[str, ModelSettings], name: str | None,
            flags: ModelFlags = ModelFlags()) -> ModelSettings:
    """The settings ``name`` is used with (None: ``[model]``'s own model): ``model`` is
    ``[model]`` as the files set it, ``tables`` the ``[models."NAME"]`` tables (only the
    keys a table sets count)."""
    chosen = model.name if name is None else name
    settings = model
    if model.name is None:  # a [model] without a name is for whichever model is chosen
        settings = model.model_copy(update={"name": chosen})
    elif chosen != model.name:
        drop = set(MODEL_OWN)
        if provider(chosen) != provider(model.name):
            drop |= set(ENDPOINT)
        settings = model.model_copy(update={"name": chosen, **dict.fromkeys(drop)})
    table = tables.get(chosen) if chosen else None
    if table is not None:
        own = {k: getattr(table, k) for k in table.model_fields_set}
        if "params" in own:  # one argument each: the table's win, the others stay
            own["params"] = {**settings.params, **own["params"]}
        settings = settings.model_copy(update=own)
    update: dict[str, object] = {}
    flag_model = flags.model or model.name
    if flags.api_base and provider(chosen) == provider(flag_model):
        update["api_base"] = flags.api_base
    if flags.reasoning_effort:
        update["reasoning_effort"] = flags.reasoning_effort
    return settings.model_copy(update=update) if update else settings


def dropped(model: ModelSettings, name: str | None) -> list[str]:
    """The ``[model]`` keys that were set and do not carry to ``name`` (for ``config
    --show``, which says so)."""
    if name is None or model.name is None or name == model.name:
        return []
    keys = list(MODEL_OWN) + (list(ENDPOINT) if provider(name) != provider(model.name) else [])
    return [k for k in keys if getattr(model, k) is not None]
