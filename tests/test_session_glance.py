"""A session's title and whether anything was said in it, when a ``SessionStart`` hook
adds context: the hook's words are the model's, not the person's, so they are never the
title (``tui-agent sessions``, ACP's ``session/list`` and ``session_info_update``), and a
session nobody says anything in stays blank (its file removed at close). ACP's list reads
only the first lines of each file (:func:`~tui_agent.core.session.peek.peek`) and gives
the same titles as a whole read. With a real agent on the scripted model, and a hook
script as Claude Code's documentation writes one."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.hook_kit import script
from tests.test_agent import RecordingGate
from tui_agent.acp import history
from tui_agent.config import Settings, load
from tui_agent.core.agent import Agent
from tui_agent.core.hooks import Hooks
from tui_agent.core.llm import LLM
from tui_agent.core.session import load as load_session
from tui_agent.core.session.peek import peek
from tui_agent.core.session.records import SESSION_START_CONTEXT, first_words
from tui_agent.core.session.store import SessionStore
from tui_agent.custom.hooks import HookCommand, HookConfig, HookGroup
from tui_agent.wiring import build

pytestmark = pytest.mark.anyio

CONTEXT_SH = """#!/bin/bash
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "SessionStart",'
echo '  "additionalContext": "the branch is main"}}'
"""


def settings(tmp_path: Path, fake: FakeLLM) -> Settings:
    file = tmp_path / "config.toml"
    file.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake.base_url}"\n'
                    'api_key = "sk-test"\nmax_retries = 0\n', encoding="utf-8")
    return load(file, cwd=tmp_path)


def agent_with_hook(tmp_path: Path, fake: FakeLLM, store: Path) -> Agent:
    conf = settings(tmp_path, fake)
    writer = build.new_session(conf, "openai/fake-model", store / f"{time.time_ns()}.jsonl",
                               cwd=tmp_path)
    agent = build.agent(conf, LLM(conf.model_for(None)), RecordingGate(),
                        build.policy_from(conf), session=writer, cwd=tmp_path)
    hook = script(tmp_path, "context.sh", CONTEXT_SH)
    agent.hooks = Hooks(HookConfig((HookGroup("SessionStart", "", (HookCommand(str(hook)),)),)),
                        cwd=tmp_path, project_dir=tmp_path)
    return agent


async def test_a_session_start_hooks_words_are_never_the_title(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    with FakeLLM() as fake:
        fake.push(Reply(text="Hello."))
        agent = agent_with_hook(tmp_path, fake, store)
        await agent.session_start("startup")
        assert agent.messages == [], "held until something is said"
        _ = [e async for e in agent.run_turn("my real question")]
        assert agent.session is not None
        agent.session.close()
        sent = fake.requests[0]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        f"{SESSION_START_CONTEXT}\nthe branch is main", "my real question"]
    [path] = store.glob("*.jsonl")
    conv = load_session(path)
    assert conv.title() == "my real question" == peek(path).title
    [listed], _ = history.page(SessionStore(store), frozenset(), str(tmp_path), None)
    assert listed.title == "my real question"


async def test_a_session_nobody_said_anything_in_is_removed_though_a_hook_added_context(
        tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    with FakeLLM() as fake:
        agent = agent_with_hook(tmp_path, fake, store)
        await agent.session_start("startup")
        assert agent.session is not None and agent.session.blank
        agent.session.close()
    assert list(store.glob("*.jsonl")) == []


def test_first_words_skip_every_note_of_tui_agents_own() -> None:
    from tui_agent.core.session.records import NOT_TYPED

    for note in NOT_TYPED:
        assert first_words([{"role": "user", "content": f"{note}\nx"},
                            {"role": "user", "content": "typed"}]) == "typed"


def test_a_glance_reads_the_first_lines_and_titles_as_a_whole_read(tmp_path: Path) -> None:
    """The title, the header and whether anything was said, as :func:`load` would give
    them (a demo's mark, a crash's partial reply, a masked secret), without reading
    past the first prompt: a torn tail far below it changes nothing."""
    def write(name: str, *records: Mapping[str, object]) -> Path:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return path

    meta = {"kind": "meta", "cwd": "/work"}
    plain = write("plain", meta, {"kind": "message", "seq": 0, "message": {
        "role": "user", "content": "fix the sk-secret-123 leak"}},
        *({"kind": "message", "seq": n, "message": {"role": "assistant", "content": "x"}}
          for n in range(1, 500)))
    with plain.open("ab") as file:
        file.write(b'{"kind": "message", "seq": 9999, "mess')  # torn: never read
    demo = write("demo", {**meta, "demo": True}, {"kind": "message", "seq": 0, "message": {
        "role": "user", "content": "show me"}})
    cut = write("cut", meta, {"kind": "partial", "seq": 0, "delta": "half a re"})
    header = write("header", meta)
    for path in (plain, demo, cut, header):
        glance, conv = peek(path, {"sk-secret-123"}), load_session(path, {"sk-secret-123"})
        assert glance.title == conv.title(), path.name
        assert glance.said == bool(conv.entries), path.name
        assert glance.meta == conv.meta
    assert "sk-secret-123" not in peek(plain, {"sk-secret-123"}).title
