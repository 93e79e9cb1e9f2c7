"""A config file kept with the user's dotfiles: ``config.toml`` is a symlink. Every write
(``mcp add``, ``mcp import``, ``mcp remove``, an "always allow") goes through to the
link's target, atomically (a temporary file in the target's folder, renamed over the
target), and the link stays a link."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_kit import COMMENTED, Machine, fake_words, machine
from tui_agent.config import load
from tui_agent.wiring.build import policy_from


def linked(tmp_path: Path) -> tuple[Machine, Path]:
    """A machine whose user config is a relative symlink (as GNU stow makes them) into a
    dotfiles folder; returns it and the link's target."""
    box = machine(tmp_path, config=None)
    target = box.home / "dotfiles" / "tui-agent" / "config.toml"
    target.parent.mkdir(parents=True)
    target.write_text(COMMENTED, encoding="utf-8")
    target.chmod(0o600)
    box.user_config.parent.mkdir(parents=True, exist_ok=True)
    box.user_config.symlink_to(os.path.relpath(target, box.user_config.parent))
    return box, target


def still_linked(box: Machine, target: Path) -> dict[str, Any]:
    """The link is still a link to ``target``, no temporary file was left on either
    side, the target kept its permissions; returns the config as read through the link."""
    assert box.user_config.is_symlink(), "the link was replaced by a file"
    assert box.user_config.resolve() == target.resolve()
    for folder in (box.user_config.parent, target.parent):
        assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], folder
    assert target.stat().st_mode & 0o777 == 0o600
    return tomllib.loads(target.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_mcp_add_import_and_remove_write_through_the_link(tmp_path: Path) -> None:
    box, target = linked(tmp_path)
    added = box.mcp("add", "here", *fake_words())
    assert added.returncode == 0, added.stderr
    assert "here" in still_linked(box, target)["servers"]
    source = tmp_path / "other-client.json"
    source.write_text(json.dumps({"mcpServers": {"git": {
        "command": sys.executable, "args": ["-m", "mcp_server_git"]}}}))
    imported = box.mcp("import", "--from", str(source), "git")
    assert imported.returncode == 0, imported.stderr
    assert "git" in still_linked(box, target)["servers"]
    removed = box.mcp("remove", "mine")
    assert removed.returncode == 0, removed.stderr
    servers = still_linked(box, target)["servers"]
    assert set(servers) == {"here", "git"}
    assert "# my tui-agent config: every comment here must survive" in target.read_text()


def test_always_allow_writes_through_the_link_atomically(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box, target = linked(tmp_path)
    target.write_text(COMMENTED.replace("disabled = true", "disabled = false"))
    renames: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        renames.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setenv("HOME", str(box.home))
    settings = load(cwd=box.project)
    monkeypatch.setattr(os, "replace", replace)
    inode = target.stat().st_ino
    assert policy_from(settings).always_allow("mine", "search", "fp1") is None
    config = still_linked(box, target)
    assert config["servers"]["mine"]["auto"] == ["search"]
    written = [(src, dst) for src, dst in renames if dst.name == "config.toml"]
    assert [dst for _, dst in written] == [target.resolve()], "the target is replaced"
    assert written[0][0].parent == target.resolve().parent, "from a file beside it"
    assert target.stat().st_ino != inode, "by a rename, not written in place"
