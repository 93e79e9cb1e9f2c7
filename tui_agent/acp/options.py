"""A session's config options, the pickers an editor shows (``session/set_config_option``),
in the order an editor should place them: the model, the permission mode, the reasoning
level, code mode.

- ``model``: the config's model, its ``choices`` and its ``[models]`` tables (``/model``).
- ``mode``: the permission modes (``default``, ``plan``, ``auto``), the same state as
  ``session/set_mode``; either way both the option and ``current_mode_update`` follow.
- ``reasoning_effort``: ``default`` (each model's own setting) or a level litellm sends as
  ``reasoning_effort`` (``none`` turns thinking off), as ``/think`` in the app; it is kept
  when the model changes. The levels are those the model takes, once litellm has said
  (:func:`learn_levels`, off the event loop): a model known not to reason is offered
  ``default`` alone, one that always reasons no ``none``; an unknown model all of them.
- ``code_mode``: ``tools`` (the model calls each tool) or ``code`` (one Starlark script).

An option changed another way (``/model``, ``/code``) is told with
``config_option_update``, the whole list as it is now.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import ConfigOptionUpdate, SessionConfigOptionSelect, SessionConfigSelectOption

from tui_agent.acp.sessions import AcpSession
from tui_agent.config.reasoning import REASONING_EFFORTS
from tui_agent.core.permissions.modes import MODE_WORDS, MODES, parse_mode

MODE_NAMES = {"default": "Default", "plan": "Plan", "auto": "Auto"}
"""The permission modes' names (code mode is an option of its own)."""
CODE_MODE = {"tools": ("Tools", "the model calls each MCP tool itself"),
             "code": ("Code mode", "the model writes one Starlark script that calls the "
                                   "tools")}
DEFAULT_EFFORT = "default"
EFFORTS = {DEFAULT_EFFORT: "the model's own setting ([model] or its [models] table)",
           "none": "no thinking", "minimal": "the least thinking", "low": "a little thinking",
           "medium": "more thinking", "high": "the most thinking"}
assert set(EFFORTS) == {DEFAULT_EFFORT, *REASONING_EFFORTS}
IDS = ("model", "mode", "reasoning_effort", "code_mode")


def options(session: AcpSession) -> list[Any]:
    """The session's config options as they are now."""
    return [model_option(session), mode_option(session), effort_option(session),
            code_mode_option(session)]


def options_update(session: AcpSession) -> ConfigOptionUpdate:
    """``config_option_update``: the options as they are now."""
    return ConfigOptionUpdate(session_update="config_option_update",
                              config_options=options(session))


def set_option(session: AcpSession, config_id: str, value: Any) -> str | None:
    """``session/set_config_option``: what was wrong, or None once it is set."""
    if config_id == "model" and isinstance(value, str):
        return switch_model(session, value)
    if config_id == "mode":
        mode = parse_mode(value) if isinstance(value, str) and value.strip() == value \
            else None
        if mode is None:
            return f"mode is one of {', '.join(MODES)}"
        session.agent.policy.mode = mode
        return None
    if config_id == "reasoning_effort":
        if value not in EFFORTS:
            return f"reasoning_effort is one of {', '.join(EFFORTS)}"
        return set_effort(session, None if value == DEFAULT_EFFORT else str(value))
    if config_id == "code_mode" and value in CODE_MODE:
        session.set_code_mode(value == "code")
        return None
    if config_id == "code_mode":
        return "code_mode is 'tools' or 'code'"
    return f"the options are {', '.join(repr(i) for i in IDS)}"


def switch_model(session: AcpSession, name: str) -> str | None:
    """Use ``name`` from the next turn on (``/model`` and the model option); what was wrong
    when its ``[models]`` table cannot be used (the model in use stays)."""
    from tui_agent.config import ConfigError

    try:
        session.settings.check(name)
    except ConfigError as exc:
        return str(exc)
    session.models.chosen = name
    session.agent.llm = session.models.make()
    session.levels = None  # learned again for this model
    return None


def set_effort(session: AcpSession, level: str | None) -> str | None:
    """The reasoning level from the next request on (None: each model's own)."""
    from tui_agent.config import ConfigError

    was = session.models.reasoning_effort
    session.models.reasoning_effort = level
    try:
        session.agent.llm = session.models.make()
    except ConfigError as exc:
        session.models.reasoning_effort = was
        return str(exc)
    return None


def _select(option_id: str, name: str, current: str, values: list[tuple[str, str, str]],
            description: str, category: Any = None) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        type="select", id=option_id, name=name, description=description, category=category,
        current_value=current,
        options=[SessionConfigSelectOption(value=v, name=n, description=d or None)
                 for v, n, d in values])


def model_option(session: AcpSession) -> SessionConfigOptionSelect:
    """The model picker: the models of the config, the one in use first if it is not
    among them."""
    current = session.agent.llm.model or ""
    names = session.models.choices()
    names = names if current in names else [current, *names]
    return _select("model", "Model", current, [(n, n, "") for n in names if n],
                   "the model of the next turn", "model")


def mode_option(session: AcpSession) -> SessionConfigOptionSelect:
    return _select("mode", "Permission mode", session.agent.policy.mode,
                   [(m, MODE_NAMES[m], MODE_WORDS[m]) for m in MODES],
                   "which tool calls ask first", "mode")


def effort_option(session: AcpSession) -> SessionConfigOptionSelect:
    levels = session.levels or tuple(EFFORTS)
    current = session.models.reasoning_effort or DEFAULT_EFFORT
    shown = [(k, k, EFFORTS[k]) for k in levels]
    if current not in levels:  # set for a model before: kept, and shown as it is
        shown.append((current, current, "not taken by this model (kept for the next)"))
    return _select("reasoning_effort", "Reasoning", current, shown,
                   "how hard a model that reasons thinks (kept when the model changes)",
                   "thought_level")


async def learn_levels(session: AcpSession) -> bool:
    """Ask litellm (in a thread: its first import is slow) which levels the session's
    model takes; whether the levels offered changed. A model switched meanwhile gives it
    up: the levels learned are not the new model's (its own lookup follows)."""
    llm = session.agent.llm
    where = getattr(llm, "where", None)
    if where is None:
        return False
    try:
        route = await asyncio.to_thread(where)
    except Exception:  # litellm cannot route it: the turn will say why
        return False
    if session.agent.llm is not llm:
        return False
    if route.known and not route.reasons:
        levels: tuple[str, ...] = (DEFAULT_EFFORT,)
    elif route.always_reasons:
        levels = tuple(k for k in EFFORTS if k != "none")
    else:
        levels = tuple(EFFORTS)
    changed = levels != (session.levels or tuple(EFFORTS))
    session.levels = levels
    return changed


def code_mode_option(session: AcpSession) -> SessionConfigOptionSelect:
    """Code mode: ``tools`` (each tool called itself) or ``code``."""
    return _select("code_mode", "Code mode", "code" if session.code_mode else "tools",
                   [(k, n, d) for k, (n, d) in CODE_MODE.items()],
                   "how the model reaches the MCP tools")


def snapshot(session: AcpSession) -> tuple[Any, ...]:
    """What the options' current values are, to tell whether a command changed one."""
    return (session.agent.llm.model, session.agent.policy.mode,
            session.models.reasoning_effort, session.code_mode)
