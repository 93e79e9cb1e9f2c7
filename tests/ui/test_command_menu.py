"""The ``/`` completion menu and commands from files in the app (the real app, the
pilot): the menu opens as the prompt starts with ``/``, offers the built-in commands, the
user's and a trusted project's command files and the servers' MCP prompts, narrows as
one types, ``up``/``down`` move, ``tab``/``enter`` complete, ``esc`` closes, and every
key typed still lands in the prompt. ``/review ARGS`` sends the file's expanded body as
the message (checked at the scripted model); ``/help`` and the palette list them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.skill_kit import skill
from tests.test_command_files import REVIEW
from tests.ui.kit import SIZE, finish, make_app, ready, turn, until, write_config
from tui_agent.config import load
from tui_agent.ui.screens.help import HelpScreen
from tui_agent.ui.widgets.command_menu import CommandMenu
from tui_agent.ui.widgets.prompt import PromptInput

pytestmark = [pytest.mark.anyio]


@pytest.fixture
def commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user command (``~/.claude/commands/review.md``, as Claude Code's docs write
    it), a trusted project with one of its own in a subfolder, and a broken file."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (home / ".claude/commands").mkdir(parents=True)
    (home / ".claude/commands/review.md").write_text(REVIEW, encoding="utf-8")
    (home / ".claude/commands/broken.md").write_text("---\nmodel: [x\n---\nbody\n",
                                                      encoding="utf-8")
    project = tmp_path / "shop"
    (project / ".claude/commands/frontend").mkdir(parents=True)
    (project / ".claude/commands/frontend/component.md").write_text(
        "---\ndescription: Make a component\n---\nMake $ARGUMENTS.\n", encoding="utf-8")
    (project / "docs").mkdir()
    (project / "docs/style.md").write_text("Tabs, never spaces.\n", encoding="utf-8")
    monkeypatch.chdir(project)
    load(cwd=project, trust=True)
    return project


def _menu(app: object) -> CommandMenu:
    """The menu (the screen mounts it when a command is first typed, not before)."""
    return app.chat.command_menu()  # type: ignore[attr-defined,no-any-return]


def _names(menu: CommandMenu) -> list[str]:
    return [e.name for e in menu.entries] if menu.display else []


async def test_the_menu_opens_narrows_moves_completes_and_closes(tmp_path: Path,
                                                                 commands: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await until(pilot, lambda: any(e.name == "review" for e in prompt.entries()),
                    what="the command files read")
        assert not app.chat.query(CommandMenu), "no menu before a command is typed"
        await pilot.press("/")
        menu = _menu(app)
        await until(pilot, lambda: menu.display, what="the menu")
        assert {"help", "model", "review", "component"} <= set(_names(menu))
        assert "broken" not in _names(menu)
        await pilot.press("r")  # narrows: names that start with r, then those holding it
        assert _names(menu)[:3] == ["resume", "rewind", "review"] and prompt.text == "/r"
        assert "clear" in _names(menu) and "help" not in _names(menu)
        await pilot.press("down", "down")
        assert menu.current() is not None and menu.current().name == "review"  # type: ignore[union-attr]
        assert prompt.text == "/r", "the keys the menu takes do not type"
        await pilot.press("tab")
        assert prompt.text == "/review " and not menu.display and app.focused is prompt
        prompt.clear()
        await pilot.press(*"/co")  # compact, context, code, copy, component
        assert _names(menu)[:4] == ["compact", "context", "code", "copy"]
        await pilot.press("escape")
        assert not menu.display and prompt.text == "/co", "esc closes, the text stays"
        assert not app.turn_running()
        await pilot.press("m")  # typing opens it again
        assert menu.display and _names(menu) == ["compact", "component"]
        await pilot.press("up", "enter")  # wraps to the last; enter completes it
        assert prompt.text == "/component "
        await pilot.press(*"a button")
        assert not menu.display and prompt.text == "/component a button"
        await finish(app)


async def test_the_menu_never_takes_what_is_not_a_command(tmp_path: Path,
                                                          commands: Path) -> None:
    """Plain words, a path, ``//``, a second line: no menu; up then browses history."""
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        menu = _menu(app)
        for typed in ("hello /he", "/usr/bin/e", "//he"):
            prompt.clear()
            await pilot.press(*typed)
            assert not menu.display and prompt.text == typed
        prompt.clear()
        await pilot.press(*"/zzz")
        assert not menu.display, "nothing fits: no menu"
        await pilot.press("tab")
        assert prompt.text == "/zzz"
        await finish(app)


async def test_a_command_file_sends_its_expanded_body(tmp_path: Path, commands: Path,
                                                      fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Reviewed."), Reply(text="Made."))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: app.user_commands.find("review") is not None,
                    what="the command files read")
        await turn(pilot, app, "/review 456 high Ada", timeout=90)
        await turn(pilot, app, "/component a button")
        await finish(app)
    first = json.dumps(fake_llm.requests[0]["messages"][-1]["content"])
    assert "Review PR #456 with priority high and assign to Ada." in first
    assert "Tabs, never spaces." in first, "@docs/style.md is read as a typed @path"
    assert fake_llm.requests[0]["model"] == "review-model"
    assert fake_llm.requests[1]["messages"][-1]["content"] == "Make a button."
    assert fake_llm.requests[1]["model"] == "fake-model", "the command's model: one turn"


async def test_files_and_skills_added_while_it_runs_are_offered(
        tmp_path: Path, commands: Path, fake_llm: FakeLLM) -> None:
    """A command file written while the app runs is in the ``/`` menu the next time it
    opens, and runs when sent; a skill folder added is a ``/`` command too, and the model
    is offered it from the next turn (its name and description in the system prompt);
    an edited one is sent as it is now. No restart."""
    fake_llm.push(Reply(text="Tested."), Reply(text="Linted."))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one("#prompt", PromptInput)
        await until(pilot, lambda: app.user_commands.find("review") is not None,
                    what="the command files read")
        home = Path(os.environ["HOME"])
        (home / ".claude/commands/test-it.md").write_text(
            "---\ndescription: Run the tests\n---\nRun the tests of $1.\n", encoding="utf-8")
        await pilot.press("/")
        menu = _menu(app)
        await until(pilot, lambda: "test-it" in _names(menu), what="the new command offered")
        prompt.clear()
        await turn(pilot, app, "/test-it shop", timeout=90)
        assert fake_llm.requests[0]["messages"][-1]["content"] == "Run the tests of shop."
        skill(home / ".claude/skills", "lint-rules", "How this team lints its code.")
        await turn(pilot, app, "lint it", timeout=90)
        system = fake_llm.requests[1]["messages"][0]["content"]
        assert "- lint-rules: How this team lints its code." in system
        await pilot.press(*"/lint")
        await until(pilot, lambda: "lint-rules" in _names(menu), what="the skill as a command")
        await finish(app)


async def test_help_and_the_palette_list_them(tmp_path: Path, commands: Path) -> None:
    app = make_app(write_config(tmp_path / "c.toml"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: app.user_commands.find("review") is not None,
                    what="the command files read")
        palette = {str(c.title): str(c.help) for c in app.get_system_commands(app.screen)}
        assert palette["/review"] == "Review a pull request (user)"
        assert palette["/component"] == "Make a component (project:frontend)"
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        assert ("/review [pr-number] [priority] [assignee]",
                "Review a pull request (user)") in screen.own
        assert any("broken.md:3: bad frontmatter" in why for why in screen.unused)
        await finish(app)
