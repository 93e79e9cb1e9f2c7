"""The app with one server whose ``${VAR}`` is unset (issue 46): it starts, the chat
works, the other server connects, and that server shows as failed with why (the file,
the server, the variable) in the servers' statuses the servers screen draws."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.ui.kit import SIZE, make_app, ready, turn, until, write_config
from tui_agent.ui.widgets.messages import AssistantMessage

GH = '\n[servers.gh]\nurl = "http://127.0.0.1:9/mcp"\n' \
     'headers = { Authorization = "Bearer ${GH_TOKEN}" }\n'


@pytest.mark.anyio
async def test_the_app_runs_without_the_unset_server(fake_llm: FakeLLM, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GH_TOKEN", raising=False)
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url,
                          servers={"good": []}, extra=GH)
    fake_llm.push(Reply(text="still here"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)

        def states() -> dict[str, str]:
            return {s.name: s.state for s in app.backend.statuses()}

        await until(pilot, lambda: states() == {"good": "connected", "gh": "failed"},
                    what="the servers' states")
        gh = next(s for s in app.backend.statuses() if s.name == "gh")
        assert gh.last_error is not None
        assert gh.last_error.startswith(f"not started: {config}: line ")
        assert "set GH_TOKEN, or remove it from server 'gh'" in gh.last_error
        await turn(pilot, app, "hi", timeout=120)  # litellm imports in a busy round
        assert [m.source for m in app.transcript.query(AssistantMessage)] == ["still here"]
        await app.action_quit()
