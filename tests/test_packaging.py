"""What ``pip install`` users get: the package list is whole, and the wheel carries the
themes, the example config, the stylesheets and the demo; the stylesheets use theme
variables only; themes load from the package and from the user's XDG directory."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
HEX = re.compile(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(")


def test_every_package_is_listed() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "tui_agent").rglob("*.py") if "__pycache__" not in p.parts}
    assert found - listed == set()
    assert {"tui_agent.themes", "tui_agent.configs"} <= listed


@pytest.mark.slow
def test_the_wheel_ships_themes_configs_stylesheets_and_the_demo(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("tui_agent-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for theme in (ROOT / "themes").glob("*.toml"):
        assert f"tui_agent/themes/{theme.name}" in names
    assert "tui_agent/configs/example.toml" in names
    assert "tui_agent/ui/app.tcss" in names
    assert {"tui_agent/demo/server.py", "tui_agent/demo/model.py", "tui_agent/py.typed"} <= names


def test_stylesheets_use_theme_variables_only() -> None:
    """Colours come from the theme, so every theme (and the user's own) applies everywhere:
    no hex or rgb() colour in a .tcss file or in a widget's DEFAULT_CSS."""
    offenders = []
    for path in (ROOT / "tui_agent" / "ui").rglob("*"):
        if path.suffix in (".tcss", ".py"):
            text = path.read_text()
            css = text if path.suffix == ".tcss" else "".join(
                re.findall(r'DEFAULT_CSS = """(.*?)"""', text, re.S))
            offenders += [f"{path.name}: {m}" for m in HEX.findall(css)]
    assert offenders == []


def test_bundled_themes_parse_and_one_is_light() -> None:
    from tui_agent.ui.themes import bundled_files, load_all

    themes, problems = load_all(bundled_files())
    assert problems == []
    assert len(themes) >= 3
    assert any(not t.dark for t in themes)


def test_user_themes_load_and_bad_ones_are_reported(tmp_path: Path) -> None:
    from tui_agent.ui.themes import load_all, user_files

    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#112233"\ndark = false\n')
    (tmp_path / "typo.toml").write_text('name = "typo"\nprimary = "#112233"\nprimery = "x"\n')
    (tmp_path / "colour.toml").write_text('name = "colour"\nprimary = "not-a-colour"\n')
    (tmp_path / "broken.toml").write_text('name = "broken\n')
    themes, problems = load_all(user_files(tmp_path))
    assert [t.name for t in themes] == ["mine"]
    assert len(problems) == 3
    assert any("typo.toml: unknown key(s) primery" in p for p in problems)
    assert any("colour.toml: 'primary' is not a colour: 'not-a-colour'" in p for p in problems)
    assert any("broken.toml: not valid TOML" in p for p in problems)
