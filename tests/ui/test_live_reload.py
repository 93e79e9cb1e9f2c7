"""Live reload: editing the config file while the app runs applies it. Added servers
start, removed ones stop, changed ones restart; an invalid edit keeps the last good
config and says what is wrong until it is fixed; "always allow" restarts nothing.
The real app (``Startup``, as the command builds it), real MCP servers, the file on disk."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import tagged_processes
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.ui.kit import SIZE, finish, noted, notes, ready, send, shown, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.startup import Startup

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def edit(config: Path, fake: FakeLLM, servers: dict[str, list[str]], extra: str = "") -> None:
    write_config(config, base_url=fake.base_url, servers=servers, extra=extra)


def app_with(tmp_path: Path, fake: FakeLLM, servers: dict[str, list[str]]
             ) -> tuple[AgentApp, Path]:
    """The app as the command builds it, on a config file with ``servers``."""
    config = tmp_path / "c.toml"
    edit(config, fake, servers)
    return AgentApp(Startup(config=config, cwd=tmp_path)), config


async def test_servers_follow_the_file_and_a_bad_edit_waits_for_its_fix(
        fake_llm: FakeLLM, tmp_path: Path, no_leftover_servers: str) -> None:
    app, config = app_with(tmp_path, fake_llm, {"a": []})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        hub = app.backend.hub
        assert hub is not None
        first_a = hub.connections["a"]

        edit(config, fake_llm, {"a": [], "b": []})
        await noted(pilot, app, "config reloaded: started b")
        await until(pilot, lambda: hub.connections["b"].state == "connected", what="b up")
        assert hub.connections["a"] is first_a, "an unchanged server is left alone"
        assert "2/2 servers" in str(app.status.render())

        edit(config, fake_llm, {"a": [], "b": []}, extra="\n[agent]\nmax_dpeth = 3\n")
        bad = await noted(pilot, app, "not applied")
        assert str(config) in bad and "max_dpeth" in bad and "did you mean 'max_depth'" in bad
        assert "line " in bad
        assert app.status.config_error and "config not applied" in str(app.status.render())
        assert hub.connections["b"].state == "connected", "the last good config stays"

        edit(config, fake_llm, {"a": ["--name", "renamed"]}, extra="\n[agent]\nmax_depth = 3\n")
        fixed = await noted(pilot, app, "the config is valid again")
        assert "stopped b" in fixed and "restarted a" in fixed and "[agent] applied" in fixed
        assert not app.status.config_error
        assert "b" not in hub.connections
        await until(pilot, lambda: hub.connections["a"].state == "connected", what="a again")
        assert hub.connections["a"] is not first_a
        assert hub.connections["a"].status().server_info == "renamed 1.0"
        assert app.backend.agent.settings.max_depth == 3
        await until(pilot, lambda: len(tagged_processes(no_leftover_servers)) == 1,
                    what="b's process and a's old one to end")
        await finish(app)


async def test_always_allow_written_by_the_app_restarts_nothing(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.push(Reply(tool_calls=[FakeToolCall("a__echo", {"text": "hi"}, id="c1")]),
                  Reply(text="done"))
    app, config = app_with(tmp_path, fake_llm, {"a": []})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        hub = app.backend.hub
        assert hub is not None
        first_a = hub.connections["a"]
        before = app.turns_ended
        await send(pilot, app, "echo")
        await shown(pilot, app, ApprovalScreen, "the modal")
        await pilot.press("a")
        await until(pilot, lambda: app.turns_ended > before, what="the turn")
        assert 'auto = ["echo"]' in config.read_text()
        # Let the watcher see the file the app wrote (it polls twice a second).
        await pilot.pause(2)
        assert hub.connections["a"] is first_a and first_a.restarts == 0
        assert not any("config reloaded" in n for n in notes(app)), "nothing to say"
        assert app.backend.policy.standing("a", "echo") == "auto"
        await finish(app)


async def test_a_theme_edit_applies_at_once(fake_llm: FakeLLM, tmp_path: Path) -> None:
    app, config = app_with(tmp_path, fake_llm, {})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        assert app.theme == "tui-agent-night"
        edit(config, fake_llm, {}, extra='\n[ui]\ntheme = "tui-agent-day"\n')
        await noted(pilot, app, "[ui] applied")
        assert app.theme == "tui-agent-day"
        await finish(app)


async def test_a_reload_keeps_what_the_user_chose_in_the_app(fake_llm: FakeLLM,
                                                             tmp_path: Path) -> None:
    """A server switched off in the servers screen stays off, and a model picked with
    /model stays picked, when an unrelated edit is applied."""
    app, config = app_with(tmp_path, fake_llm, {"a": [], "b": []})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        hub = app.backend.hub
        assert hub is not None
        await app.backend.disable("a")
        app.backend.set_model("openai/picked-in-the-app")
        edit(config, fake_llm, {"a": [], "b": []},
             extra="\n[agent]\nmax_depth = 4\n")
        config.write_text(re.sub(r"(?m)^timeout = 20$", "timeout = 25", config.read_text()))
        await noted(pilot, app, "[model] applied")
        assert hub.connections["a"].state == "disabled"
        assert app.backend.model_name == "openai/picked-in-the-app"
        assert app.backend.agent.llm.settings.timeout == 25  # type: ignore[attr-defined]
        await finish(app)


@pytest.mark.parametrize("settle", [0.0, 0.3])
async def test_quitting_during_a_reload_leaves_no_server_behind(
        settle: float, fake_llm: FakeLLM, tmp_path: Path, no_leftover_servers: str) -> None:
    """A quit while a reload loads the files (cancelled) or starts servers (waited for):
    either way every server process ends with the app (the autouse check)."""
    app, config = app_with(tmp_path, fake_llm, {"a": []})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        edit(config, fake_llm, {"a": ["--name", "changed"], "b": [], "c": []})
        app.reload_config()
        await pilot.pause(settle)
        await finish(app)
    assert app.return_code == 0


async def test_a_rule_edited_into_the_file_applies_from_the_next_call(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``[permissions]`` follows the file as the servers' lists do: a deny rule added
    while the app runs refuses the next matching call, named with its line."""
    app, config = app_with(tmp_path, fake_llm, {})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        policy = app.backend.policy
        assert policy.judge("fs", "rm", arguments={"path": "/etc/x"}).verdict == "ask"
        rule = 'deny = ["mcp__fs__rm(path=/etc/**)"]'
        edit(config, fake_llm, {}, extra=f"\n[permissions]\n{rule}\n")
        line = config.read_text().splitlines().index(rule) + 1
        await until(pilot, lambda: app.backend.policy.permission_rules() != [],
                    what="the rule applied")
        judged = app.backend.policy.judge("fs", "rm", arguments={"path": "/etc/x"})
        assert judged.verdict == "deny" and judged.by.endswith(f"c.toml:{line})"), judged.by
        await finish(app)


async def test_a_hook_edited_into_the_file_runs_from_the_next_event(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``[hooks]`` follows the file too: a guard added while the app runs is the agent's
    from then on, and one taken out is gone."""
    from tests.hook_kit import hooks_toml

    app, config = app_with(tmp_path, fake_llm, {})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        assert app.backend.agent.hooks is None
        edit(config, fake_llm, {}, extra="\n" + hooks_toml("PreToolUse", "true", "mcp__fs__rm"))
        await until(pilot, lambda: app.backend.agent.hooks is not None, what="the hook")
        hooks = app.backend.agent.hooks
        assert hooks is not None and hooks.wants("PreToolUse", "mcp__fs__rm")
        edit(config, fake_llm, {})
        await until(pilot, lambda: app.backend.agent.hooks is None, what="the hook gone")
        await finish(app)
