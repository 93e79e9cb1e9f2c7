"""The package's shape holds: import-linter's contracts (``[tool.importlinter]`` in
pyproject.toml: the layers, a headless core, config alone, one litellm importer, no
import cycles) pass; they do catch a back-arrow and a cycle, even inside a function;
no module passes 400 lines; every module says what it owns."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tui_agent"
MAX_LINES = 400


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the ``tui_agent`` found in ``package_parent``, with our
    contracts."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=package_parent, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_import_contracts_hold() -> None:
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 6 kept, 0 broken." in out.stdout, out.stdout


@pytest.mark.parametrize(("module", "added", "broken"), [
    ("core/session/store.py", "def _f() -> None:\n    import tui_agent.ui.app\n",
     "Imports point down"),
    ("tools/text.py", "def _f() -> None:\n    import textual\n",
     "Below the front ends nothing imports textual"),
    ("config/paths.py", "def _f() -> None:\n    import tui_agent.tools.text\n",
     "config imports no other tui_agent package"),
    ("core/events/kinds.py", "def _f() -> None:\n    import tui_agent.core.session\n",
     "No import cycles between modules"),
])
def test_the_contracts_catch_what_they_forbid(tmp_path: Path, module: str, added: str,
                                              broken: str) -> None:
    """A copy of the package with one forbidden import added inside a function (an
    arrow all the same) breaks the contract that forbids it."""
    shutil.copytree(PACKAGE, tmp_path / "tui_agent",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "tui_agent" / module
    target.write_text(target.read_text(encoding="utf-8") + "\n\n" + added, encoding="utf-8")
    out = lint_imports(tmp_path)
    assert out.returncode != 0, out.stdout
    verdicts = [line for line in out.stdout.splitlines() if line.startswith(broken)]
    assert verdicts and verdicts[0].endswith(" BROKEN"), out.stdout


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in modules()}
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}


def test_every_module_opens_with_what_it_owns() -> None:
    bare = [str(p.relative_to(ROOT)) for p in modules()
            if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert bare == []
