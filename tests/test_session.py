"""Session files: durable at every message boundary, readable after any crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.zygote import REAL, TUI_AGENT
from tui_agent.config import paths
from tui_agent.core.events import Usage
from tui_agent.core.export import to_markdown
from tui_agent.core.session import SessionError, SessionStore, SessionWriter, load

ROOT = Path(__file__).resolve().parents[1]


def writer_at(tmp_path: Path, secrets: tuple[str, ...] = ()) -> SessionWriter:
    return SessionWriter.create(tmp_path / "20260101-000000-abcdef.jsonl",
                                {"model": "openai/m"}, secrets)


def test_round_trip(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "hi"})
    w.message({"role": "assistant", "content": "hello"}, usage=Usage(3, 2, 5, None))
    w.turn_end("end", Usage(3, 2, 5, 0.5))
    w.close()
    conv = load(w.path)
    assert conv.id == "20260101-000000-abcdef"
    assert conv.meta["model"] == "openai/m" and conv.meta["version"] == 1
    assert conv.messages == [{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": "hello"}]
    assert conv.usage == Usage(3, 2, 5, 0.5)
    assert conv.title() == "hi"


def test_partial_text_is_recovered_as_incomplete(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "tell me"})
    for piece in ("Once ", "upon ", "a time"):
        w.partial(piece)
        w.flush_partial()
    # no final message: the process died here
    conv = load(w.path)
    assert conv.entries[-1].incomplete
    assert conv.entries[-1].message == {"role": "assistant", "content": "Once upon a time"}


def test_finished_message_supersedes_its_partials(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "q"})
    w.partial("draft")
    w.flush_partial()
    w.message({"role": "assistant", "content": "final"})
    conv = load(w.path)
    assert conv.messages[-1] == {"role": "assistant", "content": "final"}
    assert not conv.entries[-1].incomplete


def test_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "kept"})
    w.close()
    with open(w.path, "ab") as f:
        f.write(b'{"kind":"message","seq":1,"message":{"role":"assis')
    conv = load(w.path)
    assert conv.messages == [{"role": "user", "content": "kept"}]
    assert conv.skipped_lines == 1


@pytest.mark.parametrize("torn", [b'{"kind":"message","seq":1,"message":{"role":"assis',
                                  b'{"kind":"partial","seq":1,"te', b"{", b"x" * 200_000])
def test_a_torn_tail_is_cut_before_the_next_record(tmp_path: Path, torn: bytes) -> None:
    """A crash left half a line; the resumed writer cuts it, so every kind of record
    written next (message, partial, turn) loads, and so do the ones before it."""
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "first"})
    w.close()
    with open(w.path, "ab") as f:
        f.write(torn)
    resumed = SessionWriter.resume(load(w.path))
    resumed.message({"role": "user", "content": "third prompt"})
    resumed.partial("half a rep")
    resumed.flush_partial()
    resumed.turn_end("end", Usage(1, 1, 2, None))
    resumed.close()
    conv = load(w.path)
    assert conv.skipped_lines == 0 and w.path.read_bytes().endswith(b"\n")
    assert [e.message for e in conv.entries] == [
        {"role": "user", "content": "first"}, {"role": "user", "content": "third prompt"},
        {"role": "assistant", "content": "half a rep"}]
    assert conv.entries[-1].incomplete and conv.usage == Usage(1, 1, 2, None)


def test_a_whole_record_lacking_only_its_newline_is_kept_by_loader_and_writer(
        tmp_path: Path) -> None:
    """One rule for a last line without its newline: a whole record is read by the loader,
    and the writer, continuing the file, ends that line instead of cutting it."""
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "first"})
    w.close()
    with open(w.path, "ab") as f:
        f.write(b'{"kind":"message","seq":1,"message":{"role":"assistant","content":"whole"}}')
    conv = load(w.path)
    assert conv.messages[-1] == {"role": "assistant", "content": "whole"}
    assert conv.skipped_lines == 0 and conv.next_seq == 2
    resumed = SessionWriter.resume(conv)
    resumed.message({"role": "user", "content": "next"})
    resumed.close()
    again = load(w.path)
    assert [m["content"] for m in again.messages] == ["first", "whole", "next"]
    assert again.skipped_lines == 0 and w.path.read_bytes().count(b"\n") == 4


def test_corrupt_line_in_the_middle_is_skipped(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "one"})
    w._file.write(b"\x00\xffnot json\n")
    w.message({"role": "assistant", "content": "two"})
    w.close()
    conv = load(w.path)
    assert [m["content"] for m in conv.messages] == ["one", "two"]
    assert conv.skipped_lines == 1


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    w = writer_at(tmp_path, secrets=("sk-very-secret", 'pa"ss\\word'))
    w.message({"role": "tool", "tool_call_id": "x",
               "content": 'token sk-very-secret and pa"ss\\word'})
    w.close()
    raw = w.path.read_text()
    assert "sk-very-secret" not in raw and "ss\\\\word" not in raw
    assert load(w.path).messages[0]["content"] == "token *** and ***"


def test_secrets_a_reloaded_config_brings_are_masked_from_then_on(tmp_path: Path) -> None:
    w = writer_at(tmp_path, secrets=("sk-very-secret",))
    w.mask_also(["ghp-new-token-123"])
    w.message({"role": "tool", "tool_call_id": "x",
               "content": "sk-very-secret ghp-new-token-123"})
    w.close()
    assert load(w.path).messages[0]["content"] == "*** ***"


def test_a_session_has_one_writer(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    with pytest.raises(SessionError, match="open in another"):
        SessionWriter(w.path)
    w.close()
    SessionWriter(w.path).close()


def test_store_finds_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with pytest.raises(SessionError, match="no session to resume"):
        store.find(None)
    for name in ("20260101-000000-aaaaaa", "20260102-000000-bbbbbb", "20260102-000000-bbcccc"):
        writer = SessionWriter.create(tmp_path / f"{name}.jsonl", {})
        writer.message({"role": "user", "content": name})
        writer.close()
        time.sleep(0.01)
    assert store.find(None).stem == "20260102-000000-bbcccc"
    assert store.find("20260101").stem == "20260101-000000-aaaaaa"
    with pytest.raises(SessionError, match="matches 2 sessions"):
        store.find("20260102-000000-bb")
    with pytest.raises(SessionError, match="no session 'zzz'"):
        store.find("zzz")


def test_markdown_export(tmp_path: Path) -> None:
    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "What is 2+3?"})
    w.message({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function",
         "function": {"name": "calc__add", "arguments": '{"a": 2, "b": 3}'}}]})
    w.message({"role": "tool", "tool_call_id": "c", "content": "5 ```fenced``` \x1b[31m"})
    w.message({"role": "assistant", "content": "It is **5**."})
    w.partial("And more")
    w.flush_partial()
    md = to_markdown(load(w.path))
    assert md.startswith("# Conversation 20260101-000000-abcdef")
    assert "## You\n\nWhat is 2+3?" in md
    assert "**Tool call** `calc__add`" in md and '"a": 2' in md
    assert "````\n5 ```fenced``` \n````" in md  # fence longer than the content's, no ESC
    assert "It is **5**." in md
    assert "incomplete" in md


def test_sigkill_mid_stream_leaves_a_loadable_session(fake_llm: FakeLLM) -> None:
    """Kill -9 the real CLI while a reply streams: every finished message is on disk,
    and the reply in flight comes back from its partial records."""
    fake_llm.push(Reply(text="The first answer."),
                  Reply(text="word " * 400, chunk_chars=5, delay=0.02))
    common = ["run", "--model", "openai/fake-model", "--api-base", fake_llm.base_url]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # The first turn only writes the session: the zygote's command does (a fresh process
    # costs ~4 s of CPU in imports). The one killed is the real process, so that SIGKILL
    # stops the very process that writes, with nothing between.
    first = subprocess.run([*TUI_AGENT, *common, "first question"], capture_output=True,
                           text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    session = next(paths.sessions_dir().glob("*.jsonl"))
    proc = subprocess.Popen([*REAL, *common, "--resume", session.stem, "second question"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.read(50)  # the second reply is streaming now
        deadline = time.monotonic() + 30
        while session.read_bytes().split(b"second question")[-1].count(b'"partial"') < 2:
            assert time.monotonic() < deadline, "no partial record was written"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    conv = load(session)
    assert conv.messages[:3] == [{"role": "user", "content": "first question"},
                                 {"role": "assistant", "content": "The first answer."},
                                 {"role": "user", "content": "second question"}]
    last = conv.entries[3]
    assert last.incomplete and last.message["content"].startswith("word word word")
    assert len(conv.entries) == 4


def test_resumed_session_repairs_calls_a_crash_left_unanswered(fake_llm: FakeLLM,
                                                               tmp_path: Path) -> None:
    from tests.conftest import model_for
    from tui_agent.core.agent import Agent
    from tui_agent.core.llm import LLM
    from tui_agent.core.permissions import ApproveAll
    from tui_agent.tools.local import NoTools

    w = writer_at(tmp_path)
    w.message({"role": "user", "content": "use a tool"})
    w.message({"role": "assistant", "content": None, "tool_calls": [
        {"id": "lost", "type": "function", "function": {"name": "x__y", "arguments": "{}"}}]})
    w.close()  # crashed before the tool answered
    conv = load(w.path)
    fake_llm.push(Reply(text="ok"))
    agent = Agent(LLM(model_for(fake_llm)), NoTools(), ApproveAll(),
                  history=conv.messages)

    async def go() -> None:
        async for _ in agent.run_turn("again"):
            pass

    import asyncio

    asyncio.run(go())
    sent = fake_llm.requests[0]["messages"]
    assert sent[2] == {"role": "tool", "tool_call_id": "lost",
                       "content": "not run: the session ended before this call finished"}
    assert json.dumps(sent[-1]) == json.dumps({"role": "user", "content": "again"})


def test_unused_fake_tool_call_helper() -> None:
    assert FakeToolCall("t", {"a": 1}).arguments_text() == '{"a": 1}'


def test_resume_after_a_skipped_line_never_overwrites(tmp_path: Path) -> None:
    """A corrupt line drops a message from the load; the next seq must still be new."""
    w = writer_at(tmp_path)
    for text in ("a", "b", "c"):
        w.message({"role": "user", "content": text})
    w.close()
    lines = w.path.read_bytes().split(b"\n")
    lines[2] = b"garbage"  # the record of "b" (seq 1)
    w.path.write_bytes(b"\n".join(lines))
    conv = load(w.path)
    assert [m["content"] for m in conv.messages] == ["a", "c"] and conv.next_seq == 3
    again = SessionWriter.resume(conv)
    again.message({"role": "user", "content": "d"})
    again.close()
    assert [m["content"] for m in load(w.path).messages] == ["a", "c", "d"]
