"""Configuration: pydantic models, the TOML loader, JSON imports, ${VAR} expansion, paths.

This package imports nothing else of tui-agent's. Its names load on first use
(PEP 562), so ``tui_agent.config.paths`` is available without pydantic: the chat
app draws its first frame before the config is validated.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_agent.config.errors import ConfigError
    from tui_agent.config.interpolate import mask
    from tui_agent.config.loader import Settings, load
    from tui_agent.config.models import (
        AgentSettings,
        CodeModeSettings,
        Config,
        ModelSettings,
        ServerConfig,
    )
    from tui_agent.config.reading import Origin

_WHERE = {
    "ConfigError": "errors",
    "mask": "interpolate",
    "Origin": "reading",
    "Settings": "loader",
    "load": "loader",
    "AgentSettings": "models",
    "CodeModeSettings": "models",
    "Config": "models",
    "ModelSettings": "models",
    "ServerConfig": "models",
}

__all__ = [
    "AgentSettings",
    "CodeModeSettings",
    "Config",
    "ConfigError",
    "ModelSettings",
    "Origin",
    "ServerConfig",
    "Settings",
    "load",
    "mask",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
