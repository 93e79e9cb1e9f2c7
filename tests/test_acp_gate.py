"""The gate through the editor: a call that would ask becomes
``session/request_permission``, and each answer does what it says: allow once runs it
(and the next call asks again), allow always runs it and is written to the config file as
the app's ``a`` is (the next call does not ask), reject and a cancelled question deny it
(the server never sees it). A code-mode script's call asks naming the script, with the
script's option; a file write shows its diff, in the question and in the ``tool_call``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply

pytestmark = pytest.mark.slow


def echo_turn(fake: FakeLLM, call_id: str, text: str = "hi there") -> None:
    fake.push(Reply(tool_calls=[FakeToolCall("fake__echo", {"text": text}, id=call_id)]),
              Reply(text="done"))


def run_turns(editor: Editor, conf: Path, cwd: Path, *texts: str, args: tuple[str, ...] = ()
              ) -> list[str]:
    async def scenario() -> list[str]:
        async with running(editor, conf, *args, cwd=cwd) as (conn, _):
            sid = (await conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id
            return [await prompt(conn, sid, text) for text in texts]

    return asyncio.run(scenario())


def marked(marks: Path, what: str) -> int:
    path = marks / what
    return len(path.read_text().splitlines()) if path.exists() else 0


def tool_message(fake: FakeLLM, index: int) -> str:
    return str(fake.requests[index]["messages"][-1]["content"])


def two_echo_turns(fake_llm: FakeLLM, tmp_path: Path, *answers: str) -> tuple[Editor, Path]:
    """Two turns that each call the fake server's ``echo`` (ids c1, c2), the editor
    answering ``answers``; both end ``end_turn``. The editor, and the server's marks."""
    marks = tmp_path / "marks"
    marks.mkdir()
    echo_turn(fake_llm, "c1")
    echo_turn(fake_llm, "c2")
    editor = Editor(list(answers))
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", "--marks", str(marks)))
    assert run_turns(editor, conf, tmp_path, "echo", "again") == ["end_turn", "end_turn"]
    return editor, marks


def test_allow_once_runs_the_call_and_the_next_asks_again(fake_llm: FakeLLM,
                                                          tmp_path: Path) -> None:
    editor, marks = two_echo_turns(fake_llm, tmp_path, "allow_once", "allow_once")
    assert len(editor.asked) == 2 and marked(marks, "echo") == 2
    question, options = editor.asked[0]
    assert question.tool_call_id == "c1" and question.title == "fake: echo"
    assert question.raw_input == {"text": "hi there"}
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    started = editor.of("tool_call")[0]
    assert (started.tool_call_id, started.status) == ("c1", "pending")
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert done[0].tool_call_id == "c1" and done[0].content[0].content.text == "hi there"
    assert "hi there" in tool_message(fake_llm, 1)


def test_allow_always_is_written_to_the_config_and_asks_no_more(fake_llm: FakeLLM,
                                                                tmp_path: Path) -> None:
    echo_turn(fake_llm, "c1")
    echo_turn(fake_llm, "c2")
    editor = Editor(["allow_always"])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake"))
    assert run_turns(editor, conf, tmp_path, "echo", "again") == ["end_turn", "end_turn"]
    assert len(editor.asked) == 1
    assert 'auto = ["echo"]' in conf.read_text(encoding="utf-8")
    assert "hi there" in tool_message(fake_llm, 3)


@pytest.mark.parametrize("answer", ["reject_once", "cancelled"])
def test_reject_and_a_cancelled_question_deny_the_call(fake_llm: FakeLLM, tmp_path: Path,
                                                       answer: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    echo_turn(fake_llm, "c1")
    editor = Editor([answer])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake", "--marks", str(marks)))
    assert run_turns(editor, conf, tmp_path, "echo") == ["end_turn"]
    assert marked(marks, "echo") == 0
    failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    why = "rejected in the editor" if answer == "reject_once" else "was cancelled"
    assert failed and why in failed[0].content[0].content.text
    assert why in tool_message(fake_llm, 1)


def test_a_scripts_call_asks_naming_the_script(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A script calling a read-only tool twice: one question, naming the script, whose
    "allow the script" answers the second call too."""
    code = 'r = fake.add(a=2, b=3)\ns = fake.add(a=4, b=5)\nresult = [r, s]'
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": code},
                                                 id="s1")]), Reply(text="ran"))
    editor = Editor(["allow_script"])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake"))
    assert run_turns(editor, conf, tmp_path, "script it", args=("--code-mode",)) == \
        ["end_turn"]
    assert len(editor.asked) == 1
    question, options = editor.asked[0]
    assert question.title == "fake: add (called by the script s1)"
    assert "allow_script" in [o.option_id for o in options]
    script = editor.of("tool_call")[0]
    assert (script.tool_call_id, script.kind, script.title) == ("s1", "execute",
                                                                "code-mode script")
    assert "5" in tool_message(fake_llm, 1) and "9" in tool_message(fake_llm, 1)


def test_a_script_that_names_nothing_to_approve_ahead_offers_no_script_answer(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """``echo`` is not marked read-only: approving the script could approve no call
    ahead, so the option is not offered and the question says each call asks."""
    code = 'r = fake.echo(text="from the script")\nresult = r'
    fake_llm.push(Reply(tool_calls=[FakeToolCall("executeToolCode", {"code": code},
                                                 id="s1")]), Reply(text="ran"))
    editor = Editor(["allow_once"])
    conf = config(tmp_path, fake_llm, fake_server_toml("fake"))
    assert run_turns(editor, conf, tmp_path, "script it", args=("--code-mode",)) == \
        ["end_turn"]
    question, options = editor.asked[0]
    assert "allow_script" not in [o.option_id for o in options]
    said = " ".join(c.content.text for c in question.content or [] if c.type == "content")
    assert "each call of this script asks" in said
    assert "from the script" in tool_message(fake_llm, 1)


def test_a_file_write_shows_its_diff(fake_llm: FakeLLM, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.ui.test_script_approval import filesystem_server, project_files

    project = project_files(tmp_path, monkeypatch)
    target = str(project / "out.txt")
    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "fs__write_file", {"path": target, "content": "new\n"}, id="w1")]), Reply(text="ok"))
    editor = Editor(["allow_once"])
    conf = config(tmp_path, fake_llm, filesystem_server(project))
    assert run_turns(editor, conf, project, "write it") == ["end_turn"]
    question, _ = editor.asked[0]
    diffs = [c for c in question.content or [] if c.type == "diff"]
    assert [(d.path, d.old_text, d.new_text) for d in diffs] == [(target, "old\n", "new\n")]
    started = editor.of("tool_call")[0]
    assert started.kind == "edit" and [loc.path for loc in started.locations] == [target]
    assert [(c.type, c.old_text, c.new_text) for c in started.content] == \
        [("diff", "old\n", "new\n")]
    assert (project / "out.txt").read_text(encoding="utf-8") == "new\n"


def test_the_question_masks_and_cleans_as_the_tool_call_does(
        fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write whose content and whose file hold the api key and escape sequences: the
    permission question's arguments and diff show neither, as the ``tool_call`` does."""
    from tests.ui.test_script_approval import filesystem_server, project_files

    secret = "sk-test-key"
    project = project_files(tmp_path, monkeypatch)
    (project / "out.txt").write_text(f"old {secret}\x1b[2J\n", encoding="utf-8")
    target = str(project / "out.txt")
    fake_llm.push(Reply(tool_calls=[FakeToolCall(
        "fs__write_file", {"path": target, "content": f"new {secret}\x1b]0;t\x07\n"},
        id="w1")]), Reply(text="ok"))
    editor = Editor(["reject_once"])
    conf = config(tmp_path, fake_llm, filesystem_server(project))
    assert run_turns(editor, conf, project, "write it") == ["end_turn"]
    question, _ = editor.asked[0]
    started = editor.of("tool_call")[0]
    for shown in (question, started):
        diffs = [c for c in shown.content or [] if c.type == "diff"]
        assert [d.path for d in diffs] == [target]
        seen = json.dumps([shown.raw_input, [(d.old_text, d.new_text) for d in diffs]])
        assert secret not in seen and "\\u001b" not in seen and "\\u0007" not in seen
        assert "new " in seen and "old " in seen


def test_an_option_never_offered_for_the_call_rejects_it(fake_llm: FakeLLM,
                                                         tmp_path: Path) -> None:
    """``allow_script`` answered for a call no script made, and an id never offered at
    all: each denies the call, which the server never sees."""
    editor, marks = two_echo_turns(fake_llm, tmp_path, "allow_script", "yes_please")
    assert len(editor.asked) == 2 and marked(marks, "echo") == 0
    failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    for call in ("c1", "c2"):
        assert any(u.tool_call_id == call and "never offered" in u.content[0].content.text
                   for u in failed)
