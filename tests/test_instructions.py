"""A server's ``instructions`` reach the model: in the system prompt under the server's
name (after the user's own prompt), cleaned of control sequences and capped; only for the
servers whose tools the model has; and the servers screen shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import model_for
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_agent import RecordingGate
from tests.test_client_side import asking_server, hub_of
from tui_agent.core.agent import Agent
from tui_agent.core.llm import LLM
from tui_agent.core.messages import system_text
from tui_agent.core.permissions import Policy, ServerRules
from tui_agent.tools.client import ClientSide

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SAID = "Call roots before anything else. Book tables with book, never by hand."


async def test_the_model_reads_the_instructions_of_the_servers_it_can_use(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="noted"), Reply(text="noted"))
    async with hub_of({"a": asking_server()}, tmp_path,
                      client_side=lambda n, c: ClientSide()) as hub:
        assert hub.statuses()[0].instructions == SAID
        agent = Agent(LLM(model_for(fake_llm)), hub, RecordingGate(),
                      system_prompt="Be brief.")
        async for _ in agent.run_turn("hi"):
            pass
        system = fake_llm.requests[0]["messages"][0]
        assert system["role"] == "system"
        assert system["content"] == system_text("Be brief.", {"a": SAID})
        assert system["content"].startswith("Be brief.\n\n") and f"## a\n{SAID}" in \
            system["content"]
        # A server none of whose tools the model may use says nothing to it.
        agent.policy = Policy(rules={"a": ServerRules(allow=[])})
        async for _ in agent.run_turn("again"):
            pass
        assert fake_llm.requests[1]["messages"][0] == {"role": "system", "content": "Be brief."}
