"""``tui-agent acp --terminal-login``: the login an editor runs in a terminal (ACP's
``terminal`` auth method), and the key it keeps.

tui-agent logs in to a model provider with its API key; ``tui-agent login`` is for remote
MCP servers (OAuth, in the browser). So the terminal login asks for the configured
model's key (not echoed), and keeps it where ``tui-agent login`` keeps tokens: the OS
keyring when it works, else a file only the user may read in the state folder. Each
``tui-agent acp`` then reads it when the model's variable is not set in its environment
(the environment, and the config, always win). A model given ``api_base`` or
``api_key``, or whose variable is set, needs no login: it says so and ends at once.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
from collections.abc import Callable
from typing import IO, Any

from tui_agent.acp.auth import key_variable, model_settings
from tui_agent.config import Settings, paths
from tui_agent.tools.text import clean

RECORD = "model-key:{variable}"
"""The vault's record of a model key, by the variable it stands for."""


def _vault() -> Any:
    from tui_agent.tools.auth.storage import TokenStore

    return TokenStore.default(paths.state_dir()).vault


def with_stored_key(settings: Settings) -> Settings:
    """``settings`` with the key the terminal login kept put in the environment, when the
    model needs one there and the environment has none (the key joins the secrets every
    output is masked of)."""
    model = model_settings(settings)
    variable = key_variable(model)
    if variable is None or model.api_key or model.api_base or os.environ.get(variable):
        return settings
    try:
        kept = _vault().read(RECORD.format(variable=variable))
    except Exception:  # no usable vault: as if nothing were kept
        return settings
    if not kept:
        return settings
    os.environ[variable] = kept
    return dataclasses.replace(settings, secrets=settings.secrets | {kept})


def login(settings: Settings, out: IO[str],
          ask: Callable[[str], str] = getpass.getpass) -> int:
    """Ask for the model's key and keep it; the exit code (0: the model has its key)."""
    model = model_settings(settings)
    name = clean(model.name or "")
    if not name:
        out.write("tui-agent: no model is configured: set [model] name (or --model) "
                  "first\n")
        return 1
    if model.api_key or model.api_base:
        out.write(f"tui-agent: {name} needs no key from here ([model] api_key or api_base "
                  "is set)\n")
        return 0
    variable = key_variable(model)
    if variable is None:
        out.write(f"tui-agent: cannot tell which variable holds the key of {name}: set "
                  "[model] api_key_env = \"VAR\" in the config, then log in again\n")
        return 1
    if os.environ.get(variable):
        out.write(f"tui-agent: {variable} is set in this environment: {name} has its "
                  "key\n")
        return 0
    out.write(f"tui-agent: log in to {name}: its key is read from {variable}, which is "
              "not set. Paste the key (it is not shown); it is kept in your keyring, else "
              f"in {paths.state_dir()} (readable by you only).\n")
    out.flush()
    try:
        key = ask(f"{variable}: ").strip()
    except (EOFError, KeyboardInterrupt):
        key = ""
    if not key:
        out.write("tui-agent: no key given: nothing kept\n")
        return 1
    try:
        _vault().write(RECORD.format(variable=variable), key)
    except Exception as exc:  # no keyring and no writable state folder
        out.write(f"tui-agent: the key could not be kept ({type(exc).__name__}: "
                  f"{clean(str(exc))[:300]}); set {variable} in the editor's environment "
                  "for the agent instead\n")
        return 1
    out.write(f"tui-agent: the key for {variable} is kept; the editor can connect again\n")
    return 0
