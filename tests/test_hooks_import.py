"""``tui-agent hooks import`` and ``hooks list``: Claude Code's hooks (user, project, local)
copied into tui-agent's config with comments kept, reported when they cannot be mapped,
never added twice; and the list shows each hook with its file and line."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tui_agent.cli import main
from tui_agent.config.hook_tables import HookTable
from tui_agent.custom.hooks import parse_hooks


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
        "SubagentStop": [{"hooks": [{"type": "command", "command": "echo done"}]}],
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "echo asked"}]}]})
    claude(project, "settings.json", {"Stop": [{"hooks": [
        {"type": "command", "command": "make test"}]}]})
    claude(project, "settings.local.json", {"UserPromptSubmit": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "date"}]}]})
    user = isolated_env / "config" / "tui-agent" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("# my own settings\n[agent]\nmax_depth = 7  # keep this\n")
    assert main(["hooks", "import"]) == 0
    said = capsys.readouterr().out
    assert "added PreToolUse Bash|mcp__git__.*|^(?:mcp__local__shell|mcp__local__shell_output"\
        "|mcp__local__shell_kill)$: ~/.claude/hooks/guard.sh" in said
    assert "added Stop *: make test" in said and "added UserPromptSubmit *: date" in said
    assert "added SubagentStop *: echo done" in said
    assert "not imported: " in said and "PermissionRequest: tui-agent has no such event" in said
    assert "a hook of type 'prompt' (only \"command\" hooks run here)" in said
    text = user.read_text()
    assert text.startswith("# my own settings\n[agent]\nmax_depth = 7  # keep this\n")
    assert '[[hooks.PreToolUse]]\nmatcher = "Bash|mcp__git__.*|^(?:mcp__local__shell|' in text
    assert 'command = "~/.claude/hooks/guard.sh", timeout = 30' in text
    project_toml = (project / ".tui-agent" / "config.toml").read_text()
    assert "[[hooks.Stop]]" in project_toml and "UserPromptSubmit" not in project_toml
    assert '[[hooks.UserPromptSubmit]]\nhooks = [{type = "command", command = "date"}]' in text
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


def test_claude_codes_own_tools_are_mapped_and_local_hooks_stay_personal(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A matcher naming Claude Code's built-in tools (``Bash``, ``Edit|Write``) is copied
    naming tui-agent's (``mcp__local__shell``...), and so fires for them, with each renaming
    and argument difference reported; one naming only tools tui-agent lacks is reported and
    not copied (it would fire for nothing). The project's personal settings.local.json goes
    to the user config, never into the project's shared file."""
    home, project = tmp_path / "me", tmp_path / "work" / "repo"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    run = [{"type": "command", "command": "guard"}]
    claude(project, "settings.json", {
        "PreToolUse": [{"matcher": "Bash", "hooks": run},
                       {"matcher": "Edit|Write|WebFetch", "hooks": run},
                       {"matcher": "WebFetch|WebSearch", "hooks": run}],
        "PostToolUse": [{"matcher": "mcp__git__.*", "hooks": run}],
        "SessionStart": [{"matcher": "startup", "hooks": run}]})
    claude(project, "settings.local.json", {"PostToolUseFailure": [
        {"matcher": "Read", "hooks": [{"type": "command", "command": "mine"}]}]})
    assert main(["hooks", "import"]) == 0
    said = capsys.readouterr().out
    shared = project / ".claude" / "settings.json"
    assert f"note: {shared}: PreToolUse: matcher 'Bash' copied as " \
           "'mcp__local__shell' (Bash -> mcp__local__shell)" in said
    assert "matcher 'Edit|Write|WebFetch' copied as 'mcp__local__edit|mcp__local__write' (" \
           "Write -> mcp__local__write (tool_input has 'path' where Claude Code's has " \
           "'file_path')" in said and "WebFetch: Claude Code's own, tui-agent has no " \
           "such tool)" in said
    assert "not imported: " in said and "matcher 'WebFetch|WebSearch' names only Claude " \
           "Code's own tools (WebFetch, WebSearch: Claude Code's own" in said
    assert f"note: {shared}: PostToolUse" not in said and "SessionStart: matcher" not in said
    user = isolated_env / "config" / "tui-agent" / "config.toml"
    assert f"settings.local.json is personal (not committed): its hooks went to your " \
           f"user config, {user}, and run in every project" in said
    project_toml = project / ".tui-agent" / "config.toml"
    tables = {"project": tomllib.loads(project_toml.read_text()),
              "user": tomllib.loads(user.read_text())}
    assert "mine" not in project_toml.read_text() and set(tables["user"]["hooks"]) == {
        "PostToolUseFailure"}
    config = parse_hooks([HookTable(project_toml, "project", tables["project"]["hooks"]),
                          HookTable(user, "user", tables["user"]["hooks"])])
    for tool, commands in (("mcp__local__shell", ("guard",)), ("Bash", ()),
                           ("mcp__local__write", ("guard",)), ("mcp__local__read", ())):
        assert tuple(h.command for h in config.commands("PreToolUse", tool)) == commands
    assert [h.command for h in config.commands("PostToolUseFailure", "mcp__local__read")] \
        == ["mine"]
    assert [g.matcher for g in config.groups if g.event == "PreToolUse"] == [
        "mcp__local__shell", "mcp__local__edit|mcp__local__write"]
    assert main(["hooks", "import"]) == 0  # the mapped matchers are not added twice
    assert "added" not in capsys.readouterr().out
