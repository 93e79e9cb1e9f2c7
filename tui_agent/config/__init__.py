"""Configuration: pydantic models, the TOML loader, JSON imports, ${VAR} expansion, paths.

This package imports nothing else of tui-agent's.
"""

from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import mask
from tui_agent.config.loader import Origin, Settings, load
from tui_agent.config.models import (
    AgentSettings,
    CodeModeSettings,
    Config,
    ModelSettings,
    ServerConfig,
)

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
