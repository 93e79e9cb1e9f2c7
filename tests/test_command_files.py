"""Commands from files (tui_agent/custom/commands.py, registry.py): real files written
the way Claude Code's slash-command documentation shows them, found where it finds them,
expanded as it expands them; bad files named with file and line; clashes never silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.config import load
from tui_agent.config.show import held_lines
from tui_agent.custom.commands import (
    CommandProblem,
    FileCommands,
    Folder,
    UserCommand,
    discover,
    expand,
    folders,
)
from tui_agent.custom.commands import load as load_commands
from tui_agent.custom.registry import gather

REVIEW = """---
allowed-tools: Bash(git diff:*), Bash(git status:*)
argument-hint: [pr-number] [priority] [assignee]
description: Review a pull request
model: openai/review-model
---

Review PR #$1 with priority $2 and assign to $3.
Focus on: $ARGUMENTS
Current status: !`git status`
Style guide: @docs/style.md
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    return home


def test_a_claude_code_command_file_reads_as_its_docs_say(tmp_path: Path) -> None:
    file = _write(tmp_path / ".claude/commands/review.md", REVIEW)
    found = discover([Folder("project", tmp_path / ".claude/commands")])
    assert found.problems == ()
    (review,) = found.commands()
    assert (review.name, review.description, review.model) == (
        "review", "Review a pull request", "openai/review-model")
    # YAML reads "[pr-number] [priority] [assignee]" as a broken list: the text is kept.
    assert review.argument_hint == "[pr-number] [priority] [assignee]"
    assert review.allowed_tools == ("Bash(git diff:*)", "Bash(git status:*)")
    assert (review.file, review.body_line, review.label) == (file, 7, "project")


def test_arguments_fill_the_placeholders_and_shell_lines_are_not_run(tmp_path: Path) -> None:
    _write(tmp_path / "c/review.md", REVIEW)
    (review,) = discover([Folder("user", tmp_path / "c")]).commands()
    out = expand(review, '456 high "Ada Lovelace"')
    assert out.text.splitlines()[:2] == [
        "Review PR #456 with priority high and assign to Ada Lovelace.",
        'Focus on: 456 high "Ada Lovelace"']
    assert out.model == "openai/review-model" and out.unrun == ("git status",)
    assert "!`git status`" in out.text and "@docs/style.md" in out.text  # sent as written


def test_zero_based_arguments_missing_ones_and_no_placeholder() -> None:
    plain = UserCommand("explain", "", "Explain this to me.", "user", "user")
    assert expand(plain, "rate limiter").text == ("Explain this to me.\n\n"
                                                  "ARGUMENTS: rate limiter")
    assert expand(plain, "").text == "Explain this to me."
    indexed = UserCommand("fix", "", "Fix $ARGUMENTS[0] in $ARGUMENTS[1] ($3)", "user", "user")
    assert expand(indexed, "bug file.py").text == "Fix bug in file.py ()"


def test_subfolders_describe_and_the_body_gives_a_missing_description(tmp_path: Path) -> None:
    _write(tmp_path / "cmds/frontend/component.md", "# Make a React component\n\nDo it.\n")
    (component,) = discover([Folder("project", tmp_path / "cmds")]).commands()
    assert (component.name, component.label, component.description) == (
        "component", "project:frontend", "Make a React component")


def test_bad_files_are_named_with_their_line_and_the_others_load(tmp_path: Path) -> None:
    folder = tmp_path / "commands"
    _write(folder / "good.md", "Say hello.\n")
    bad = _write(folder / "bad.md", "---\ndescription: ok\nmodel: [a, b\n---\nbody\n")
    typed = _write(folder / "typed.md", "---\ndescription:\n  nested: map\n---\nbody\n")
    odd = _write(folder / "two words.md", "body\n")
    big = _write(folder / "big.md", "x" * (256 * 1024 + 1))
    found = discover([Folder("user", folder)])
    assert [c.name for c in found.commands()] == ["good"]
    problems = {p.file: p for p in found.problems}
    assert problems[bad].line == 4 and "bad frontmatter" in problems[bad].message
    assert str(problems[bad]).startswith(f"{bad}:4: bad frontmatter")
    assert "'description' must be text" in problems[typed].message
    assert "cannot be a command name" in problems[odd].message
    assert "at most 262,144" in problems[big].message


def test_a_project_symlink_out_of_its_folder_is_not_read(tmp_path: Path) -> None:
    secret = _write(tmp_path / "secret.md", "the user's private notes\n")
    link = tmp_path / "proj/.claude/commands/notes.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    found = discover([Folder("project", link.parent)])
    assert list(found.commands()) == []
    assert "leads out" in found.problems[0].message and found.problems[0].file == link


def test_built_ins_win_and_a_project_never_shadows_the_user_silently(tmp_path: Path) -> None:
    user = _write(tmp_path / "user/review.md", "Mine.\n")
    project = _write(tmp_path / "proj/.claude/commands/review.md", "Theirs.\n")
    clash = _write(tmp_path / "proj/.claude/commands/help.md", "Not help.\n")
    found = discover([Folder("user", tmp_path / "user"),
                      Folder("project", tmp_path / "proj/.claude/commands")])
    registry = gather([found], built_in={"help", "model"})
    assert [c.file for c in registry.listed()] == [user]
    said = {p.file: str(p) for p in registry.problems}
    assert f"the user's {user} has that name" in said[project]
    assert "/help is a built-in command, which always wins" in said[clash]


def test_another_source_plugs_in_beside_the_files(tmp_path: Path) -> None:
    """The seam skills use: any object with commands() is a source."""

    class Skills:
        def commands(self) -> list[UserCommand]:
            return [UserCommand("pdf", "Work with PDFs", "Use $ARGUMENTS.", "skill", "skill")]

    files = FileCommands((UserCommand("pdf", "", "x", "user", "user", file=tmp_path),),
                         (CommandProblem(tmp_path, 3, "earlier"),))
    registry = gather([Skills(), files], built_in=(), problems=files.problems)
    pdf = registry.find("PDF")
    assert pdf is not None and expand(pdf, "a.pdf").text == "Use a.pdf."
    assert [p.message for p in registry.problems][0] == "earlier"
    assert "the skill's /pdf has that name" in registry.problems[1].message


def test_the_user_folders_and_a_trusted_projects_are_read(home: Path, tmp_path: Path) -> None:
    config_dir = tmp_path / "home/config/tui-agent"
    assert [f.path for f in folders(config_dir, home, None)] == [
        config_dir / "commands", home / ".claude/commands"]
    _write(home / ".claude/commands/mine.md", "Mine.\n")
    _write(tmp_path / "proj/.tui-agent/commands/theirs.md", "Theirs.\n")
    import os

    names = {c.name for c in load_commands(tmp_path / "proj", False, os.environ).commands()}
    assert names == {"mine"}
    names = {c.name for c in load_commands(tmp_path / "proj", True, os.environ).commands()}
    assert names == {"mine", "theirs"}


def test_a_projects_commands_make_it_ask_for_trust_and_are_listed(home: Path,
                                                                  tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _write(project / ".claude/commands/review.md", REVIEW)
    inside = project / "src"
    inside.mkdir()
    settings = load(cwd=inside)
    assert settings.project is not None and settings.project.root == project
    held = settings.held
    assert held is not None and held.folders == {".claude/commands": ("review.md",)}
    assert any(line.startswith("commands in .claude/commands: review.md: prompts sent as "
                               "your own message") for line in held_lines(held))
    assert load(cwd=inside, trust=True).held is None
    assert load(cwd=inside).held is None, "agreed once"
    _write(project / ".claude/commands/review.md", REVIEW + "\nMore.\n")
    assert load(cwd=inside).held is None, "an edit does not ask again"
    _write(project / ".claude/commands/deploy.md", "Deploy.\n")
    assert load(cwd=inside).held is not None, "a new command asks again"


def test_the_home_folders_own_commands_are_not_a_project(home: Path) -> None:
    _write(home / ".claude/commands/mine.md", "Mine.\n")
    assert load(cwd=home).held is None


def test_a_project_file_further_up_stays_the_project(home: Path, tmp_path: Path) -> None:
    """A monorepo's ``.mcp.json`` keeps its project when a package inside it has
    ``.claude/commands/`` (that package's commands are not the project's)."""
    repo = tmp_path / "repo"
    _write(repo / ".mcp.json", '{"mcpServers": {}}\n')
    _write(repo / ".claude/commands/top.md", "Top.\n")
    _write(repo / "pkg/.claude/commands/inner.md", "Inner.\n")
    settings = load(cwd=repo / "pkg")
    assert settings.project is not None and settings.project.root == repo
    assert settings.held is not None and settings.held.folders == {
        ".claude/commands": ("top.md",)}
