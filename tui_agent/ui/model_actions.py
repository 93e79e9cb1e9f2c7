"""``/model`` and ``/think``: choosing the model and how hard it thinks, from the next
turn on.

The model picker opens at once with the names; what litellm knows of each (window,
price, vision, reasoning) is looked up in a worker thread (litellm is imported there,
and a local server's model may be asked over the network) and filled in when it is
ready, so typing in the picker never waits. A model litellm says can reason gets a
second step: the reasoning level (Escape keeps the current one). ``/think LEVEL`` sets
the level for every model chosen later, until ``/think default``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui_agent.config.errors import ConfigError
from tui_agent.config.reasoning import REASONING_EFFORTS
from tui_agent.ui.commands import Command

if TYPE_CHECKING:
    from tui_agent.core.llm.facts import ModelFacts
    from tui_agent.ui.chat import ChatApp
    from tui_agent.ui.screens.picker import Picker

DEFAULT = "default"
"""``/think default``: each model's own ``reasoning_effort`` again."""
MODEL_HINT = ("enter takes what you typed; ↓ then enter picks from the list. Prices: $ per "
              "million tokens in/out. /think LEVEL: how hard a reasoning model thinks")


async def model(app: ChatApp, command: Command) -> None:
    facts: dict[str, ModelFacts | None] = {}

    async def chosen(name: str | None) -> None:
        if not name:
            return
        try:
            app.backend.set_model(name)
        except ConfigError as exc:  # its [models] table names a variable that is not set
            await app.transcript.note(f"model: {name} cannot be used: {exc}", "error")
            return
        app.status.model = name
        await app.transcript.note(f"model: {name} (from the next turn)")
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
        placeholder="any litellm model, e.g. openai/gpt-4o-mini or ollama/llama3.1")
    await app.push_screen(picker, chosen)
    app.run_worker(_fill_facts(app, picker, names, facts), name="model-facts",
                   group="model-facts", exclusive=True)


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
    for name in names:
        if name == DEMO_MODEL:
            picker.describe({name: "scripted, offline"})
            continue
        try:
            api_base = app.backend.models.settings_for(name).api_base
        except ConfigError:
            picker.describe({name: "its [models] table has an error (choose it to see)"})
            continue
        found = await asyncio.to_thread(model_facts, name, api_base)
        facts[name] = found
        if not picker.is_attached:
            return
        text = found.summary() if found is not None else ""
        unknown = "served by the gateway" if name in served else "litellm does not know this model"
        picker.describe({name: text or unknown})


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
        name = app.backend.model_name or "no model yet"
        await app.transcript.note(f"reasoning: {_shown(app.backend.reasoning_effort)} "
                                  f"({name})")
        await _level_picker(app, "Reasoning for the next turn")
        return
    if level not in (*REASONING_EFFORTS, DEFAULT):
        await app.transcript.note(f"/think {command.arg}: the level is one of "
                                  f"{', '.join(REASONING_EFFORTS)} or {DEFAULT}", "error")
        return
    await set_level(app, None if level == DEFAULT else level)


async def _level_picker(app: ChatApp, title: str) -> None:
    from tui_agent.ui.screens.picker import Picker

    async def chosen(level: str | None) -> None:
        if level:
            await set_level(app, None if level == DEFAULT else level)

    choices = [(DEFAULT, f"{DEFAULT}: each model's own reasoning_effort setting"),
               *((level, level) for level in REASONING_EFFORTS)]
    await app.push_screen(Picker(title, choices, current=app.backend.models.reasoning_effort
                                 or DEFAULT, hint="none turns thinking off; kept when "
                                 "/model switches"), chosen)


async def set_level(app: ChatApp, level: str | None) -> None:
    """Use ``level`` from the next turn on, and say so (with a note when the model in use
    cannot reason, as litellm knows it: nothing is sent to it then)."""
    from tui_agent.core.llm.facts import can_reason

    app.backend.set_reasoning_effort(level)
    said = f"reasoning: {_shown(app.backend.reasoning_effort)} (from the next turn)"
    name = app.backend.model_name
    reasons = None
    if name and app.backend.reasoning_effort not in (None, "none"):
        api_base = app.backend.models.settings_for(name).api_base
        reasons = await asyncio.to_thread(can_reason, name, api_base)
        if reasons is False:
            said += (f"; {name} cannot reason (as litellm knows it), so no level is sent to "
                     "it: the level applies to a model that can")
        elif reasons is None:
            said += f"; litellm does not know whether {name} reasons"
    await app.transcript.note(said, "warning" if reasons is False else "info")


def _shown(level: str | None) -> str:
    return level or "the provider's default"
