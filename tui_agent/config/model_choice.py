"""Which settings a model is used with: one pure function, :func:`resolve`, that every
way of choosing a model goes through (``[model] name``, ``--model``, ``/model`` in the
app, ``sampling_model``, a reloaded config).

It starts from ``[model]``. ``[model]`` describes its own ``name``, else the model
``--model`` names (a ``[model]`` with neither applies whole, to whichever model is
chosen). When the chosen model is another, the keys that describe ``[model]``'s model
(``vision``, ``audio``, ``context_window``) are dropped, and its endpoint (``api_base``,
with the key settings that belong to it, ``api_key`` and ``api_key_env``) and its
``params`` (arguments one provider takes and another may refuse) carry over only to a
model of the same provider prefix (the text before the first ``/``; two different bare
names are not taken to share one). Then the model's own ``[models."NAME"]`` table applies (its
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
PROVIDER_OWN = (*ENDPOINT, "params")
"""Carried only within one provider prefix: the endpoint, and the extra arguments."""


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
    ``""`` for a bare name (litellm infers it)."""
    return name.split("/", 1)[0] if name and "/" in name else ""


def same_provider(a: str | None, b: str | None) -> bool:
    """Whether ``a`` and ``b`` go to one provider: the same name, or the same prefix. Two
    different bare names are not (litellm may infer ``gpt-4o`` and ``claude-3`` apart)."""
    if a == b:
        return True
    return bool(a and b and "/" in a and "/" in b and provider(a) == provider(b))


def described(model: ModelSettings, flags: ModelFlags = ModelFlags()) -> str | None:
    """The model ``[model]`` describes: its own ``name``, else ``--model``'s (None: it
    describes whichever model is chosen)."""
    return model.name or flags.model


def not_carried(own: str | None, chosen: str | None) -> list[str]:
    """The ``[model]`` keys that do not carry from ``own``, the model it describes, to
    ``chosen``."""
    if own is None or chosen == own:
        return []
    return list(MODEL_OWN) + ([] if same_provider(own, chosen) else list(PROVIDER_OWN))


def resolve(model: ModelSettings, tables: Mapping[str, ModelSettings], name: str | None,
            flags: ModelFlags = ModelFlags()) -> ModelSettings:
    """The settings ``name`` is used with (None: ``[model]``'s own model): ``model`` is
    ``[model]`` as the files set it, ``tables`` the ``[models."NAME"]`` tables (only the
    keys a table sets count)."""
    own = described(model, flags)
    chosen = own if name is None else name
    fields = type(model).model_fields
    reset: dict[str, object] = {"name": chosen}
    for key in not_carried(own, chosen):
        reset[key] = fields[key].get_default(call_default_factory=True)
    settings = model.model_copy(update=reset)
    table = tables.get(chosen) if chosen else None
    if table is not None:
        written = {k: getattr(table, k) for k in table.model_fields_set}
        if "params" in written:  # one argument each: the table's win, the others stay
            written["params"] = {**settings.params, **written["params"]}
        settings = settings.model_copy(update=written)
    update: dict[str, object] = {}
    flag_model = flags.model or model.name  # --api-base goes with --model's provider
    if flags.api_base and (flag_model is None or same_provider(chosen, flag_model)):
        update["api_base"] = flags.api_base
    if flags.reasoning_effort:
        update["reasoning_effort"] = flags.reasoning_effort
    return settings.model_copy(update=update) if update else settings


def dropped(model: ModelSettings, name: str | None,
            flags: ModelFlags = ModelFlags()) -> list[str]:
    """The ``[model]`` keys that were set and do not carry to ``name`` (for ``config
    --show``, which says so)."""
    if name is None:
        return []
    return [k for k in not_carried(described(model, flags), name)
            if getattr(model, k) not in (None, {})]
