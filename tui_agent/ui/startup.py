"""The chat app as the command line asked for it, before its config is loaded.

Validating the config costs more than drawing the app (pydantic and our models
take ~100 ms to import), so ``tui-agent`` draws its first frame, with the prompt
focused, and loads the config in a thread right after. Only the theme is needed
before that frame; it is read straight from the TOML, and the full load reports
anything wrong with the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tui_agent.config import paths
from tui_agent.config.project import layer_files

if TYPE_CHECKING:
    from tui_agent.core.filters import ToolFilter
    from tui_agent.wiring.runtime import Options


@dataclass(frozen=True)
class Startup:
    config: Path | None = None
    mcp_config: Sequence[Path] = ()
    model: str | None = None
    api_base: str | None = None
    code_mode: bool = False
    reasoning_effort: str | None = None
    """``--reasoning-effort``."""
    mode: Literal["default", "plan", "auto"] | None = None
    """``--mode``: the permission mode to start in (over ``[permissions] default_mode``)."""
    demo: bool = False
    resume: str | None = None
    trust_project: bool = False
    no_project: bool = False
    cwd: Path | None = None
    """Where the project config is looked for (default: the working directory)."""
    tool_filter: ToolFilter | None = None
    """``--servers``, ``--tools`` and their ``--exclude-`` forms."""
    builtin: bool = True
    """False with ``--no-builtin``: no built-in server ``local``."""
    add_dirs: Sequence[Path] = ()
    """``--add-dir``: folders added to the roots for this session."""

    def theme(self) -> str | None:
        """``[ui] theme`` as the config files set it (the last TOML layer that names one
        wins), or None (none does, or a file the full load will reject with its own
        message)."""
        files, _ = layer_files(self.config, (), cwd=self.cwd, project=not self.no_project)
        found = None
        for _kind, path in files:
            if path.suffix.lower() == ".json":  # server lists: no [ui]
                continue
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return None
            ui = data.get("ui")
            theme = ui.get("theme") if isinstance(ui, dict) else None
            found = theme if isinstance(theme, str) else found
        return found

    def options(self) -> Options:
        """Load and validate the config, with the flags over it; raises ``ConfigError``.
        Runs in a thread: it imports pydantic, the models and the backend."""
        from tui_agent.config import ConfigError, load
        from tui_agent.core.filters import ToolFilter
        from tui_agent.wiring.runtime import Options

        settings = load(self.config, self.mcp_config, cwd=self.cwd,
                        project=not self.no_project, trust=self.trust_project,
                        builtin=self.builtin)
        settings.add_dirs(self.add_dirs)
        from tui_agent.custom.hooks import parse_hooks  # a hook not honoured: refused

        parse_hooks(settings.hooks)
        if not self.no_project:
            from tui_agent.wiring.prompt import hold_memory

            hold_memory(settings, self.cwd, trust=self.trust_project)
        settings.override(model=self.model, api_base=self.api_base, code_mode=self.code_mode,
                          reasoning_effort=self.reasoning_effort, mode=self.mode)
        chosen = self.tool_filter or ToolFilter()
        problem = chosen.narrow(settings)
        if problem:
            raise ConfigError(problem)
        if self.demo:
            from tui_agent.demo import demo_settings

            settings = demo_settings(paths.data_dir() / "demo-notes", settings)
        return Options(settings, demo=self.demo, resume=self.resume, tool_filter=chosen)
