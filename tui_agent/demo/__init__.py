"""The offline demo (``tui-agent --demo``): a scripted model and a small MCP server.

Nothing here pretends to be a real model. The scripted model is labelled as
such everywhere it appears, and it only walks through what tui-agent does:
a streamed Markdown answer, a tool call that stops at the approval gate, and
what happens after the user's answer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tui_agent.config import Config, ModelSettings, ServerConfig, Settings

DEMO_MODEL = "demo (scripted, offline)"
DEMO_SERVER = "notes"


def demo_settings(notes_dir: Path, base: Settings | None = None) -> Settings:
    """Settings for the demo: the scripted model and the bundled ``notes`` server, whose
    read-only tools are auto-approved and whose ``save_note`` asks."""
    server = ServerConfig(
        command=sys.executable, args=["-m", "tui_agent.demo.server", str(notes_dir)],
        auto=["list_notes", "read_note", "word_count"],
        description="the demo's bundled notes server")
    config = (base.config if base else Config()).model_copy(update={
        "model": ModelSettings(name=DEMO_MODEL),
        "servers": {DEMO_SERVER: server},
    })
    return Settings(config=config, files=base.files if base else [],
                    project_content=base.project_content if base else True)
