"""The core runs without the TUI, and without paying for litellm until it is used."""

from __future__ import annotations

import subprocess
import sys

CORE_MODULES = [
    "tui_agent.config", "tui_agent.core.agent", "tui_agent.core.llm", "tui_agent.core.session",
    "tui_agent.core.export", "tui_agent.tools.text", "tui_agent.headless.run", "tui_agent.cli",
    "tui_agent.headless.repl", "tui_agent.headless.commands", "tui_agent.wiring.build",
    "tui_agent.wiring.runtime",
]


def test_core_imports_neither_textual_nor_litellm() -> None:
    """Importing every headless module pulls in no textual (the UI) and no litellm (slow)."""
    code = ("import sys\n"
            + "".join(f"import {m}\n" for m in CORE_MODULES)
            + "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('textual', 'litellm', 'mcp', 'openai')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_no_module_outside_ui_imports_textual() -> None:
    """A static check as well: no source file outside tui_agent/ui names textual."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "tui_agent"
    offenders = [str(p) for p in root.rglob("*.py")
                 if "ui" not in p.relative_to(root).parts[:1]
                 and any(line.lstrip().startswith(("import textual", "from textual"))
                         for line in p.read_text().splitlines())]
    assert offenders == []


def test_only_llm_module_imports_litellm() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "tui_agent"
    importers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                       if any(line.strip().startswith(("import litellm", "from litellm"))
                              for line in p.read_text().splitlines()))
    assert importers == ["core/llm/loader.py"]
