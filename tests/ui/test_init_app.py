"""``/init`` in the app: the model drafts the project's AGENTS.md in a turn with a fixed
instruction; the approval modal shows the draft's diff (a new file, or against the file
there); a denial writes nothing, an approval writes exactly the draft, and the next turn
reads it as memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, finish, noted, ready, send, turn, until, write_config
from tui_agent.core.prompt.init import draft_of
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.startup import Startup

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FIRST = "# Proj\n\nRun the tests:\n\n```sh\nmake test\n```\n"
SECOND = "# Proj\n\nRun the tests with `make check`.\n"


def answer(content: str) -> Reply:
    return Reply(text=f"I looked at the project.\n\n<agents-md>\n{content}</agents-md>\n")


async def modal_text(pilot: Pilot[Any], app: AgentApp) -> str:
    await until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.is_mounted,
                timeout=60, what="the approval question")
    return "\n".join(str(s.render()) for s in app.screen.query(Static))


async def test_init_drafts_shows_the_diff_and_writes_only_what_is_approved(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "home" / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "pkg").mkdir()
    monkeypatch.chdir(project / "pkg")
    memory = project / "AGENTS.md"  # the project root's, not the working directory's
    fake_llm.push(answer(FIRST), answer(FIRST), answer(SECOND), Reply(text="ok"))
    config = write_config(tmp_path / "user.toml", base_url=fake_llm.base_url)
    app = AgentApp(Startup(config=config, cwd=project / "pkg"))  # nothing to trust yet
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)

        await send(pilot, app, "/init")  # a new file, denied: nothing written
        shown = await modal_text(pilot, app)
        asked = fake_llm.requests[0]["messages"][-1]["content"]
        assert "<agents-md>" in str(asked) and str(memory) in str(asked)
        assert "Write AGENTS.md?" in shown and "creates AGENTS.md (new file)" in shown
        assert "+++ b/AGENTS.md" in shown and "+make test" in shown
        await pilot.press("n")
        await noted(pilot, app, "/init: denied")
        assert not memory.exists()

        await send(pilot, app, "/init")  # approved: exactly the draft
        await modal_text(pilot, app)
        await pilot.press("y")
        wrote = await noted(pilot, app, "/init: wrote")
        assert wrote.endswith("the next turn reads it as memory"), "its sole memory: trusted"
        assert memory.read_text(encoding="utf-8") == FIRST

        await send(pilot, app, "/init")  # the file there: the diff against it
        shown = await modal_text(pilot, app)
        assert "changes AGENTS.md (+1 −5)" in shown
        assert "--- a/AGENTS.md" in shown and "-make test" in shown
        assert "+Run the tests with `make check`." in shown
        assert "already has AGENTS.md" in str(fake_llm.requests[2]["messages"][-1]["content"])
        await pilot.press("y")
        await noted(pilot, app, "the next turn reads it as memory")
        assert memory.read_text(encoding="utf-8") == SECOND

        await turn(pilot, app, "hi", timeout=60)
        assert "`make check`" in fake_llm.requests[3]["messages"][0]["content"]
        await finish(app)


def test_the_draft_is_the_last_block_between_the_tags() -> None:
    reply = ("A first try:\n<agents-md>\nold\n</agents-md>\nBetter:\n"
             "  <agents-md>\r\n# T\n\n```md\n<x>\n```\n</agents-md>  \ndone")
    assert draft_of(reply) == "# T\n\n```md\n<x>\n```\n"
    assert draft_of("```markdown\n# T\n```") is None, "the protocol is the tags"
    assert draft_of("<agents-md>\n\n</agents-md>") is None, "an empty draft is none"
