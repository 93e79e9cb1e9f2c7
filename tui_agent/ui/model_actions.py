"""``/model`` and ``/think``: choosing the model and how hard it thinks, from the next
turn on.

The model picker opens at once with the names; what litellm knows of each (window,
price, vision, reasoning) is looked up in a worker thread (litellm is imported there,
and a local server's model may be asked over the network) and filled in when it is
ready, so typing in the picker never waits. Typing also searches litellm's chat models
of the hosted providers (:mod:`tui_agent.core.llm.catalog`), each with its facts and,
when its provider's key is not set, the variable to set. A model litellm says can reason gets a
second step: the reasoning level (Escape keeps the current one). ``/think LEVEL`` sets
the level for every model chosen later, until ``/think default``.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.reasoning import REASONING_EFFORTS
from tui_agent.config.urls import is_http_url, mask_url
from tui_agent.tools.text import clean
from tui_agent.ui.commands import Command

if TYPE_CHECKING:
    from tui_agent.config import ModelSettings
    from tui_agent.core.llm.facts import ModelFacts
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.screens.picker import Picker

DEFAULT = "default"
"""``/think default``: each model's own ``reasoning_effort`` again."""
MODEL_HINT = ("enter takes what you typed; ↓ then enter picks from the list. Prices: $ per "
              "million tokens in/out. /think LEVEL: how hard a reasoning model thinks")


def model_and_server(typed: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME URL`` (what ``/model`` and its picker take): the model, and the
    server it is at (an OpenAI-compatible one, a local Ollama elsewhere, a gateway).
    Raises ``ValueError`` naming what is wrong (a URL's password is not repeated)."""
    words = typed.split()
    wrong = (f"'{' '.join(mask_url(w) for w in words)}' is not a model name, or a name then the "
             "server's URL (e.g. openai/NAME http://localhost:8000/v1)")
    if len(words) == 1:
        if is_http_url(words[0]):
            raise ValueError(wrong)
        return words[0], None
    if len(words) != 2 or not is_http_url(words[1]):
        raise ValueError(wrong)
    return words[0], words[1]


async def model(app: ChatApp, command: Command) -> None:
    facts: dict[str, ModelFacts | None] = {}

    async def chosen(typed: str | None) -> None:
        if not typed or not typed.strip():
            return
        try:
            name, api_base = model_and_server(typed)
        except ValueError as exc:
            await app.transcript.note(f"model: {exc}", "error")
            return
        try:
            app.backend.set_model(name, api_base)
        except ConfigError as exc:  # its [models] table names a variable that is not set
            await app.transcript.note(f"model: {name} cannot be used: {exc}", "error")
            return
        app.show_model()
        _meter_for_new_model(app)
        server = app.backend.models.api_bases.get(name)
        at = f" at {mask_url(server)}" if server else ""
        await app.transcript.note(f"model: {name}{at} (from the next turn)")
        if "/" not in name and not server:
            app.run_worker(_spelled_as_litellm(app, name), name="model-name",
                           group="model-name", exclusive=True)
        known = facts.get(name)
        if known is not None and known.reasoning:
            await _level_picker(app, f"Reasoning for {name} (esc keeps "
                                     f"{_shown(app.backend.reasoning_effort)})")

    if command.arg:
        await chosen(command.arg)
        return
    from tui_agent.ui.screens.picker import Picker

    names = app.backend.model_choices()
    picker = Picker(
        "Model for the next turn", [(m, m) for m in names], free_text=True,
        current=app.backend.model_name, hint=MODEL_HINT,
        placeholder="a litellm model name, then its server URL if any")
    await app.push_screen(picker, chosen)
    app.run_worker(_fill_facts(app, picker, names, facts), name="model-facts",
                   group="model-facts", exclusive=True)


def _meter_for_new_model(app: ChatApp) -> None:
    """The context meter with the window of the model just chosen, at once: the old
    model's window goes now, the new one's follows when it is known (it may take litellm's
    import or a local server's answer, in a worker); the tokens stay as last counted until
    the next request counts them with the new model's tokenizer."""
    size = app.status.context
    if size is None:
        return
    app.status.context = replace(size, window=None, compact_at=None)
    app.run_worker(_new_window(app), name="model-window", group="model-window",
                   exclusive=True)


async def _new_window(app: ChatApp) -> None:
    agent = app.backend.agent
    llm = agent.llm
    window = await agent.context.window(llm)
    size = app.status.context
    if size is not None and agent.llm is llm and size.window is None:
        app.status.context = replace(size, window=window,
                                     compact_at=agent.context.threshold(window))


async def _fill_facts(app: ChatApp, picker: Picker, names: list[str],
                      facts: dict[str, ModelFacts | None]) -> None:
    """The gateway's models (when the model is served through a LiteLLM Proxy), then each
    name's facts into the open picker, one by one as litellm answers."""
    from tui_agent.core.llm.facts import model_facts
    from tui_agent.demo import DEMO_MODEL

    served = await _gateway_models(app)
    if served and picker.is_attached:
        picker.offer([(m, m) for m in served])
        names = list(dict.fromkeys([*names, *served]))
    await _suggest_known(picker, names, facts)
    for name in names:
        if name == DEMO_MODEL:
            picker.describe({name: "scripted, offline"})
            continue
        try:
            settings = app.backend.models.settings_for(name)
        except ConfigError:
            picker.describe({name: "its [models] table has an error (choose it to see)"})
            continue
        found = await asyncio.to_thread(model_facts, name, settings.api_base)
        facts[name] = found
        if not picker.is_attached:
            return
        text = facts_text(found, settings)
        unknown = "served by the gateway" if name in served else "litellm does not know this model"
        picker.describe({name: text or unknown})


async def _spelled_as_litellm(app: ChatApp, name: str) -> None:
    """A name without its provider that litellm does not know (``claude-son``: typed,
    then enter) but that is part of its names: say which, before a turn fails on it."""
    from tui_agent.core.llm.catalog import chat_models
    from tui_agent.core.llm.facts import model_facts

    def like() -> list[str]:
        if model_facts(name) is not None:  # gpt-4o: litellm knows its provider
            return []
        return [k.name for k in chat_models() if name.lower() in k.name.lower()]

    found = await asyncio.to_thread(like)
    if found:
        await app.transcript.note(f"model: litellm knows no model '{name}'; did you mean "
                                  f"{found[0]}? (/model, then ↓ picks one)", "warning")


async def _suggest_known(picker: Picker, names: list[str],
                         facts: dict[str, ModelFacts | None]) -> None:
    """litellm's chat models, searched as the person types; the offered ``names`` keep
    the facts their own settings give them (filled in after)."""
    from tui_agent.core.llm.catalog import chat_models

    known = [k for k in await asyncio.to_thread(chat_models) if k.name not in names]
    if not picker.is_attached:
        return
    facts.update({k.name: k.facts for k in known})  # a reasoning one gets the level step
    picker.describe({k.name: k.summary() for k in known})
    picker.suggest([(k.name, k.name) for k in known])


def facts_text(found: ModelFacts | None, settings: ModelSettings) -> str:
    """What the picker says of a model: litellm's facts (``found``), with the window and
    vision its settings set (its ``[models]`` table, or ``[model]`` for its own model)
    over litellm's, as the requests follow them; "" when nothing is known."""
    from tui_agent.core.llm.facts import ModelFacts

    own: dict[str, Any] = {}
    if settings.context_window is not None:
        own["context_window"] = settings.context_window
    if settings.vision is not None:
        own["vision"] = settings.vision
    if found is None:  # litellm knows nothing of it (no price): only what the config says
        text = ModelFacts(**own).summary()
        return f"{text} · from your config" if text else ""
    return replace(found, **own).summary()


async def _gateway_models(app: ChatApp) -> list[str]:
    """What the LiteLLM Proxy the current model goes through serves ([] for no gateway);
    a gateway that cannot list them gets a note, and the picker keeps its own choices."""
    from tui_agent.core.llm.errors import LLMError
    from tui_agent.core.llm.gateway import gateway_models

    try:
        return await asyncio.to_thread(gateway_models, app.backend.models.settings_for(None))
    except LLMError as exc:
        await app.transcript.note(str(exc), "warning")
        return []


async def think(app: ChatApp, command: Command) -> None:
    level = command.arg.strip().lower()
    if not level:
        app.run_worker(_think_now(app), name="think", group="think", exclusive=True)
        return
    if level not in (*REASONING_EFFORTS, DEFAULT):
        await app.transcript.note(f"/think {command.arg}: the level is one of "
                                  f"{', '.join(REASONING_EFFORTS)} or {DEFAULT}", "error")
        return
    await set_level(app, None if level == DEFAULT else level)


async def _think_now(app: ChatApp) -> None:
    """``/think``: the level in force and whether it reaches the model; then, for a model
    that reasons (or one litellm does not know), the level picker. A model that does not
    reason gets no picker: no level would reach it (``/think LEVEL`` still sets one for the
    models chosen later)."""
    level, name = app.backend.reasoning_effort, app.backend.model_name
    if not name:
        await app.transcript.note(f"reasoning: {_shown(level)} (no model yet)")
    else:
        reasons = await _reasons(app, name)
        if reasons is False:
            await app.transcript.note(f"reasoning: {_not_sent(level, name)}; /think LEVEL "
                                      "still sets it for a model that reasons", "warning")
            return
        unknown = "; litellm does not know whether it reasons" if reasons is None else ""
        await app.transcript.note(f"reasoning: {_shown(level)} ({name}{unknown})")
    await _level_picker(app, "Reasoning for the next turn")


async def _reasons(app: ChatApp, name: str) -> bool | None:
    """Whether ``name`` reasons, as litellm (or its local server) knows it; None: unknown.
    In a thread: it may import litellm or ask a server."""
    from tui_agent.core.llm.facts import can_reason

    try:
        api_base = app.backend.models.settings_for(name).api_base
    except ConfigError:  # its [models] table cannot be used: said when it is chosen
        return None
    return await asyncio.to_thread(can_reason, name, api_base)


def _not_sent(level: str | None, name: str) -> str:
    """``high, not sent: X does not reason``: the level in force that does not reach
    ``name``."""
    return (f"{level + ', ' if level else ''}not sent: {name} does not reason (as litellm "
            "knows it)")


async def _level_picker(app: ChatApp, title: str) -> None:
    """The levels, the one in force marked, "default" saying what it means for the model
    in use."""
    from tui_agent.ui.screens.picker import Picker

    async def chosen(level: str | None) -> None:
        if level:
            await set_level(app, None if level == DEFAULT else level)

    choices = [(DEFAULT, f"{DEFAULT}: {default_level(app)}"),
               *((level, level) for level in REASONING_EFFORTS)]
    await app.push_screen(Picker(title, choices, current=app.backend.reasoning_effort
                                 or DEFAULT, hint="none turns thinking off; kept when "
                                 "/model switches"), chosen)


def default_level(app: ChatApp) -> str:
    """What ``/think default`` gives the model in use, and which setting says so:
    ``medium from --reasoning-effort``, ``low from [models."X"]``, ``high from [model]``,
    or none set (the provider's own)."""
    settings = app.backend.settings
    name = app.backend.model_name
    table = settings.config.models.get(name) if name else None
    if settings.flags.reasoning_effort:
        return f"{settings.flags.reasoning_effort} from --reasoning-effort"
    if table is not None and table.reasoning_effort is not None \
            and "reasoning_effort" in table.model_fields_set:
        return f'{table.reasoning_effort} from [models."{clean(name or "")}"]'
    base = (settings.configured or settings.config.model).reasoning_effort
    if base is not None:
        return f"{base} from [model]"
    return "none set, the provider's own"


async def set_level(app: ChatApp, level: str | None) -> None:
    """Use ``level`` from the next turn on, and say so (with a note when the model in use
    cannot reason, as litellm knows it: nothing is sent to it then). ``None`` is "default",
    and the note says so, with what default means for the model in use."""
    picked_default = level is None
    app.backend.set_reasoning_effort(level)
    level = app.backend.reasoning_effort
    name = app.backend.model_name
    reasons = await _reasons(app, name) if name and level not in (None, "none") else None
    if name and reasons is False:
        await app.transcript.note(f"reasoning: {_not_sent(level, name)}; it applies to a "
                                  "model that reasons, from the next turn", "warning")
        return
    shown = f"{DEFAULT}, {default_level(app)}" if picked_default else _shown(level)
    said = f"reasoning: {shown} (from the next turn)"
    if name and level not in (None, "none") and reasons is None:
        said += f"; litellm does not know whether {name} reasons"
    await app.transcript.note(said)


def _shown(level: str | None) -> str:
    return level or "the provider's default"
