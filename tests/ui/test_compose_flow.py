"""Writing a message in the app, against litellm and the scripted server: the ``@`` file
picker, files that cannot go (nothing is sent, the prompt comes back), images (``/image``
and a pasted path) for a model that reads them and one that does not, copying out
(``/copy``, ``c`` on a code block), ``ctrl+e`` in ``$EDITOR``, and the diff of a real
``server-filesystem`` edit in the approval modal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual import events

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import filesystem
from tests.test_media import png
from tests.ui.kit import SIZE, finish, make_app, ready, send, shown, turn, until, write_config
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.screens.files import FilePicker
from tui_agent.ui.widgets.messages import CodeBlock, Note, UserMessage
from tui_agent.ui.widgets.prompt import PromptInput

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (root / "red.png").write_bytes(png(8, 8))
    (root / "build.log").write_text("noise\n", encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def notes(app: object) -> list[str]:
    return [str(n.render()) for n in app.transcript.query(Note)]  # type: ignore[attr-defined]


async def test_keys_typed_after_the_at_before_the_picker_opens_are_its_query(
        project: Path, tmp_path: Path) -> None:
    """The picker opens a moment after the ``@``: keys typed meanwhile landed in the
    prompt, the picker opened empty, and enter glued its first file after them
    (``see @readmsrc/app.py``). They are the picker's query instead; esc puts them back."""
    app = make_app(write_config(tmp_path / "c.toml", base_url="http://127.0.0.1:9/v1"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        prompt = app.chat.query_one(PromptInput)
        prompt.focus()
        for round_, then in (("first", "enter"), ("second", "escape")):
            # All in the prompt's queue at once: "a", "p", "p" come before the app opens
            # the picker that "@" asked for.
            for key in ("s", "e", "e", "space", "@", "a", "p", "p"):
                char = " " if key == "space" else key
                prompt.post_message(events.Key(key, char))
            await until(pilot, lambda: isinstance(app.screen, FilePicker)
                        and app.screen.shown == "app", what=f"the {round_} ranking")
            assert prompt.text.endswith("see @")
            await pilot.press(then)
            await until(pilot, lambda: not isinstance(app.screen, FilePicker))
            if then == "enter":
                assert prompt.text == "see @src/app.py "
            else:
                assert prompt.text == "see @src/app.py see @app"
        await finish(app)


async def test_files_images_copy_and_editor(project: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write(' and make it short\\n')\n",
                      encoding="utf-8")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    with FakeLLM([Reply(text="It returns 42:\n\n```python\nprint(42)\n```\n"),
                  Reply(text="red")]) as server:
        app = make_app(write_config(tmp_path / "c.toml", base_url=server.base_url,
                                    extra="vision = true\n"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot, app)
            prompt = app.chat.query_one(PromptInput)
            prompt.focus()
            await pilot.press("w", "h", "a", "t", "space", "@")
            picker = await shown(pilot, app, FilePicker, "the picker")
            await until(pilot, lambda: picker.files is not None)
            assert picker.files == [".gitignore", "notes.md", "red.png", "src/app.py"]
            await pilot.press("a", "p", "p", "enter")
            await until(pilot, lambda: prompt.text == "what @src/app.py ",
                        what="the path in the prompt")

            await pilot.press("ctrl+e")  # the editor appends to what was typed
            await until(pilot, lambda: prompt.text.endswith("and make it short"),
                        what="the editor's text")
            await pilot.press("enter")
            await until(pilot, lambda: len(server.requests) == 1, what="the request")
            await until(pilot, lambda: app.turns_ended == 1)
            sent = server.requests[0]["messages"][-1]["content"]
            assert sent.startswith("what @src/app.py  and make it short\n\n"
                                   '<file path="src/app.py" size="26 B">\ndef main():')
            sent = app.transcript.query(UserMessage).last()
            assert "file src/app.py · 26 B" in str(sent.render())

            await send(pilot, app, "/copy")
            await until(pilot, lambda: app.clipboard.startswith("It returns 42:"))
            prompt.focus()
            await pilot.press("alt+up")  # the latest code block is one key up
            assert app.focused is app.transcript.query_one(CodeBlock)
            await pilot.press("c")
            await until(pilot, lambda: app.clipboard == "print(42)", what="the code copied")
            await pilot.press("o", "k")  # typing goes on in the prompt
            await until(pilot, lambda: prompt.has_focus and prompt.text == "ok")
            prompt.clear()

            before = len(server.requests)
            for bad, said in (("@missing.txt look", "missing.txt: no such file"),
                              ("@src look", "src is a directory")):
                await send(pilot, app, bad)
                await until(pilot, lambda: any(said in n for n in notes(app)))  # noqa: B023
                assert prompt.text == bad  # given back to fix
                prompt.clear()
            assert len(server.requests) == before  # nothing was sent

            prompt.post_message(events.Paste(str(project / "red.png")))
            await until(pilot, lambda: len(app.images) == 1, what="the pasted image")
            assert prompt.text == ""  # attached, not typed
            pending = str(app.chat.query_one("#pending").render())
            assert "image red.png · 75 B" in pending
            await turn(pilot, app, "what colour?")
            parts = server.requests[-1]["messages"][-1]["content"]
            assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
            assert not app.images and not app.chat.query_one("#pending").display
            await finish(app)


async def test_an_image_for_a_model_that_reads_none(project: Path, tmp_path: Path,
                                                    fake_llm: FakeLLM) -> None:
    app = make_app(write_config(tmp_path / "c.toml", base_url=fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "/image red.png")
        await until(pilot, lambda: any("does not read images" in n for n in notes(app)))
        assert not app.images and fake_llm.requests == []
        await send(pilot, app, "/image notes.md")
        await until(pilot, lambda: any("not an image the models read" in n
                                       for n in notes(app)))
        await send(pilot, app, "@" + "z" * 5000 + ".txt hi")  # a name too long for the system
        await until(pilot, lambda: any("cannot read it" in n or "no such file" in n
                                       for n in notes(app)))
        assert fake_llm.requests == []
        await finish(app)


async def test_the_modal_shows_the_diff_of_a_real_edit(project: Path, tmp_path: Path,
                                                       fake_llm: FakeLLM) -> None:
    target = project / "src" / "app.py"
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fs__edit_file", {
        "path": str(target), "edits": [{"oldText": "return 42", "newText": "return 43"}]},
        id="e")]), Reply(text="done"))
    config = write_config(tmp_path / "c.toml", base_url=fake_llm.base_url, extra=(
        f"\n[servers.fs]\ncommand = {json.dumps(filesystem())}\n"
        f"args = [{json.dumps(str(project))}]\nstartup_timeout = 30\n"))
    app = make_app(config)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await send(pilot, app, "make it 43")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen)
                    and bool(app.screen.query(".diff")), 30, "the modal and its diff")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen) and modal.call.change is not None
        diff = str(modal.query_one(".diff").render())
        assert "-    return 42" in diff and "+    return 43" in diff
        assert not modal.query_one(".arguments").display
        await pilot.press("d")
        await until(pilot, lambda: modal.query_one(".arguments").display)
        await pilot.press("y")
        await until(pilot, lambda: app.turns_ended == 1, 30)
        assert target.read_text(encoding="utf-8") == "def main():\n    return 43\n"
        await finish(app)
