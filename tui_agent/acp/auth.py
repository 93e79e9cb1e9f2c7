"""Authentication over ACP v1: the methods ``initialize`` offers (``authMethods``), what
``authenticate`` does, and the check that opening a session makes.

tui-agent's model needs a provider key, which comes from the environment the editor
starts the agent with (or the config: ``[model] api_key_env``, ``api_key``). Stable ACP v1
has two kinds of method: ``agent`` (the agent authenticates itself when the editor calls
``authenticate``) and ``terminal`` (the editor runs the agent in a terminal with extra
arguments, for a person to log in there). So:

- ``env-key`` (an ``agent`` method), named for the variable the configured model's key is
  read from (``ANTHROPIC_API_KEY`` for ``anthropic/...``, or ``[model] api_key_env``):
  ``authenticate`` checks that the model has a usable key and answers ``auth_required``
  (-32000) with the variable to set when it has none.
- ``terminal-login`` (a ``terminal`` method, offered only to an editor that says it can
  run one: ``clientCapabilities.auth.terminal``): the editor runs ``tui-agent acp
  --terminal-login`` in a terminal, which asks for the model's key and keeps it where
  ``tui-agent login`` keeps tokens (:mod:`tui_agent.acp.login`); the agent reads it when
  the variable is not set.

``session/new``, ``session/load`` and ``session/resume`` answer ``auth_required`` while the
configured model has no usable key (as the spec says of authentication-gated requests),
naming the variable; a model given ``api_base`` or ``api_key`` (a local server, a gateway)
needs nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import RequestError
from acp.schema import AuthMethodAgent, ClientCapabilities, TerminalAuthMethod

from tui_agent.config import ModelSettings, Settings

ENV_METHOD = "env-key"
TERMINAL_METHOD = "terminal-login"
LOGIN_FLAG = "--terminal-login"
"""What the terminal method appends to the editor's ``tui-agent acp`` command."""


def model_settings(settings: Settings) -> ModelSettings:
    """The settings the sessions' model is made with (``[model]`` alone when its
    ``[models]`` table cannot be used: the session says why when it makes the model)."""
    from tui_agent.config import ConfigError
    from tui_agent.wiring.model_choice import ModelChoice

    try:
        return ModelChoice(lambda: settings).settings_for(None)
    except ConfigError:
        return settings.config.model


def key_variable(model: ModelSettings) -> str | None:
    """The variable the model's key is read from, where it can be told without litellm:
    ``[model] api_key_env``, else the hosted provider's of the model's prefix."""
    from tui_agent.core.llm.catalog import HOSTED

    if model.api_key_env:
        return model.api_key_env
    prefix = (model.name or "").partition("/")[0]
    return HOSTED.get(prefix)


def methods(settings: Settings, client: ClientCapabilities) -> list[Any]:
    """``authMethods``: the key from the environment; the terminal login for an editor
    that can run one."""
    model = model_settings(settings)
    variable = key_variable(model) or "the provider's key variable (OPENAI_API_KEY, ...)"
    found: list[Any] = [AuthMethodAgent(
        id=ENV_METHOD, name=f"API key from {variable}",
        description=f"the key of {model.name or 'the configured model'} from {variable} "
                    "in the agent's environment (the editor's agent settings, env), or "
                    "[model] api_key_env in tui-agent's config")]
    if client.auth is not None and client.auth.terminal:
        found.append(TerminalAuthMethod(
            type="terminal", id=TERMINAL_METHOD, name="Log in from the terminal",
            description=f"asks for the key of {model.name or 'the model'} in a terminal and "
                        "keeps it (the keyring, else tui-agent's state folder)",
            args=[LOGIN_FLAG]))
    return found


async def missing(settings: Settings) -> str | None:
    """Why the configured model has no usable key (naming the variable to set), or None.
    A model with ``api_base`` or ``api_key`` needs nothing more; otherwise litellm is asked
    (in a thread: its first import is slow)."""
    model = model_settings(settings)
    if not model.name or model.api_key or model.api_base:
        return None
    from tui_agent.core.llm import LLM, LLMError

    try:
        await asyncio.to_thread(LLM(model).check)
    except LLMError as exc:
        return str(exc) if exc.kind == "no_api_key" else None
    return None


async def require_key(settings: Settings) -> None:
    """``auth_required`` (-32000) while the model has no usable key."""
    problem = await missing(settings)
    if problem:
        raise RequestError.auth_required({"message": problem, "authMethods": [ENV_METHOD]})


async def authenticate(settings: Settings, method_id: str) -> None:
    """``authenticate``: the key checked (``env-key``); a terminal method is never sent
    here (the editor runs it), and an unknown one is refused."""
    if method_id == TERMINAL_METHOD:
        raise RequestError.invalid_params({"methodId": method_id, "message": "a terminal "
                                           f"method is run by the editor ({LOGIN_FLAG}), "
                                           "not sent to authenticate"})
    if method_id != ENV_METHOD:
        raise RequestError.invalid_params({"methodId": method_id, "message": "unknown "
                                           f"method; the methods are {ENV_METHOD} and "
                                           f"{TERMINAL_METHOD}"})
    await require_key(settings)
