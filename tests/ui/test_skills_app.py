"""Skills in the app, through the pilot and the scripted model: found after the first
frame (a broken one is a warning note naming its file and line), a loaded skill is the
card of its ``skill`` call titled with the skill, and ``/skills`` lists every skill with
its origin, state and tokens."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.skill_kit import pdf_skill, skill, user_skills
from tests.ui.kit import SIZE, finish, make_app, noted, ready, send, turn, until, write_config
from tui_agent.ui.app import AgentApp
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
        chat.chat.query_one(PromptInput).cursor_blink = False
        await send(pilot, chat, "/skills")
        await noted(pilot, chat, "2 skills, 0 loaded")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(110, 36), run_before=before)
