"""Skills in the app, through the pilot and the scripted model: found after the first
frame (a broken one is a warning note naming its file and line), a loaded skill is the
card of its ``skill`` call titled with the skill, and ``/skills`` lists every skill with
its origin, state and tokens."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.conftest import ROOT, TAG_VAR
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.skill_kit import pdf_skill, skill, user_skills
from tests.ui.kit import (
    SIZE,
    finish,
    make_app,
    noted,
    ready,
    send,
    shown,
    steady_cursor,
    toml_value,
    turn,
    until,
    write_config,
)
from tests.zygote import module
from tui_agent.config import paths
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.prompt import PromptInput
from tui_agent.ui.widgets.tool_card import ToolCard

pytestmark = pytest.mark.slow
Snap = Callable[..., bool]


def installed(home: Path) -> None:
    pdf_skill(user_skills(home))
    skill(home / ".claude" / "skills", "commit-style", "How this team writes commit "
          "messages, imperative, one line, then why.",
          extra="allowed-tools: git__git_log Bash(git:*)\n")
    skill(user_skills(home), "Broken_Name", "x")


@pytest.mark.anyio
async def test_a_loaded_skill_is_a_card_and_skills_lists_it(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path) -> None:
    installed(isolated_env)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf"}, id="s1")]),
                  Reply(text="Loaded."))
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        warning = await noted(pilot, app, "skill not offered")
        assert "/Broken_Name/SKILL.md:2: name 'Broken_Name' breaks the naming rules" in warning
        await turn(pilot, app, "fill in a.pdf", timeout=90)
        card = app.transcript.query_one(ToolCard)
        assert card.title() == "skill · pdf" and card.status == "done"
        await send(pilot, app, "/skills")
        listing = await noted(pilot, app, "2 skills, 1 loaded")
        rows = [line.split() for line in listing.splitlines()]
        assert rows[1][:3] == ["pdf", "user", "loaded"] and rows[1][4] == "tokens"
        assert rows[3][:3] == ["commit-style", "user", "listed"]
        assert "allowed-tools (asks on load): git__git_log Bash(git:*)" in listing
        assert "not offered (1):" in listing
        await finish(app)


def test_skills_listing(snap_compare: Snap, isolated_env: Path, tmp_path: Path) -> None:
    """/skills: each skill's origin, state, tokens, description, allowed-tools and file;
    then the broken ones with file, line and why (paths under home as ~)."""
    installed(isolated_env)
    app = make_app(write_config(tmp_path / "c.toml", model="openai/snapshot-model"))

    async def before(pilot: Pilot[Any]) -> None:
        assert isinstance(pilot.app, AgentApp)
        chat = pilot.app
        await until(pilot, chat.backend.ready.is_set)
        await noted(pilot, chat, "skill not offered")
        await send(pilot, chat, "/skills")
        await noted(pilot, chat, "2 skills, 0 loaded")
        steady_cursor(chat.chat.query_one(PromptInput))  # screenshots are compared
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(110, 36), run_before=before)


def skill_server_config(path: Path, base_url: str, *args: str) -> Path:
    """A config whose one server, ``docs``, is tests/fakes/skill_server.py (over stdio)."""
    command, *argv = module("tests.fakes.skill_server", *args)
    return write_config(path, base_url=base_url, extra=(
        f"\n[servers.docs]\ncommand = {toml_value(command)}\nargs = {toml_value(argv)}\n"
        f"cwd = {toml_value(str(ROOT))}\nenv = {{ {TAG_VAR} = "
        f"{toml_value(os.environ[TAG_VAR])} }}\nstartup_timeout = 60\n"))


async def load_server_skill(fake_llm: FakeLLM, config: Path, *keys: str) -> ToolCard:
    """The model loads ``pdf-processing`` from the server; ``keys`` answer the modal (none:
    no modal may open). The skill's card when the turn ended."""
    fake_llm.push(Reply(tool_calls=[FakeToolCall("skill", {"name": "pdf-processing"},
                                                 id="s1")]),
                  Reply(text="Loaded."))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: "pdf-processing" in app.backend.agent.skills.entries(),
                    timeout=60, what="the server's skills listed")
        before = app.turns_ended
        await send(pilot, app, "fill in a.pdf")
        if keys:
            await shown(pilot, app, ApprovalScreen, "the modal", timeout=60)
            await pilot.press(*keys)
        await until(pilot, lambda: app.turns_ended > before, timeout=60,
                    what="the turn to end")
        assert not keys or not isinstance(app.screen, ApprovalScreen)
        card = app.transcript.cards["s1"]
        await finish(app)
    return card


@pytest.mark.anyio
async def test_always_allowing_a_servers_skill_lasts_until_it_changes(
        fake_llm: FakeLLM, isolated_env: Path, tmp_path: Path) -> None:
    """``a`` on a server skill's modal remembers the skill as its server lists it: the next
    session loads it without asking; once the server lists another version, it asks
    again."""
    config = skill_server_config(tmp_path / "c.toml", fake_llm.base_url)
    card = await load_server_skill(fake_llm, config, "a")
    assert card.status == "done"
    pinned = json.loads((paths.state_dir() / "approvals.json").read_text())["tui-agent"]
    assert pinned["skill docs skill://pdf-processing/SKILL.md"]["always"] is True

    card = await load_server_skill(fake_llm, config)  # no modal: it is the same skill
    assert card.status == "done"

    changed = skill_server_config(tmp_path / "c2.toml", fake_llm.base_url, "--revision", "2")
    card = await load_server_skill(fake_llm, changed, "n")
    assert card.status == "denied"
    assert "Revision 2" not in json.dumps(fake_llm.requests[-1])
