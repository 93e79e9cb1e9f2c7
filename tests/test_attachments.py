"""Files and images into the prompt, headless and in the core: ``@path`` references, the
``--image`` flag, every kind of file that cannot go (and that nothing is sent then), the
project's file list for the picker, and the diff a writing tool call would make."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_media import png
from tui_agent.cli import main
from tui_agent.core.attachments import (
    MOST,
    TEXT_CAP,
    AttachError,
    content,
    pasted_image,
    prepare,
    references,
    split_message,
)
from tui_agent.core.diffs import FileScope, change_of
from tui_agent.core.project_files import list_files, rank


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (root / "red.png").write_bytes(png(8, 8))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.chdir(root)
    return root


def test_references_are_read_and_the_rest_is_left_as_typed(project: Path) -> None:
    (project / "my notes.txt").write_text("spaced\n", encoding="utf-8")
    text = 'explain @src/app.py, ask @alice, mail a@b.com, see @"my notes.txt" and @@notes.md'
    assert [shown for shown, _ in references(text, project)] == ["src/app.py",
                                                                "my notes.txt"]
    prepared = prepare(text, project)
    assert prepared.text.endswith("and @notes.md")  # @@ is a plain @
    sent = content(prepared)
    assert isinstance(sent, str) and sent.startswith(prepared.text)
    assert '<file path="src/app.py" size="26 B">\ndef main():\n    return 42\n</file>' in sent
    words, chips = split_message(sent)
    assert words == prepared.text
    assert chips == ["file src/app.py · 26 B", "file my notes.txt · 7 B"]


def test_a_long_text_file_is_cut_with_a_note(project: Path) -> None:
    (project / "big.log").write_text("é" * TEXT_CAP, encoding="utf-8")  # 2 bytes each
    attachment = prepare("@big.log", project).attachments[0]
    assert attachment.cut and len(attachment.text.encode()) <= TEXT_CAP
    assert 'note="cut: the first 97.7 KB of 195.3 KB"' in attachment.block()
    assert attachment.chip() == "file big.log · 195.3 KB · cut to the first 97.7 KB"


def unreadable(project: Path) -> str:
    """A file this process cannot read: mode 000, or (as root, who reads those) a file
    whose read fails."""
    if os.geteuid() != 0:
        (project / "secret.txt").write_text("no", encoding="utf-8")
        (project / "secret.txt").chmod(0)
        return "secret.txt: cannot read it (permission denied)"
    return "/proc/self/mem: cannot read it (Input/output error)"


def test_what_cannot_go_is_named_and_why(project: Path) -> None:
    (project / "huge.bin").touch()
    os.truncate(project / "huge.bin", 50 * 1024 * 1024)  # sparse: no 50 MB written
    (project / "blob.bin").write_bytes(b"\x7fELF\0\0\x01" * 100)
    os.mkfifo(project / "pipe")
    expected = {
        "@missing.txt": "missing.txt: no such file",
        "@src": "src is a directory: name a file in it (after @, the picker lists them)",
        "@src/": "src/ is a directory: name a file in it (after @, the picker lists them)",
        "@huge.bin": f"huge.bin is 50.0 MB: the largest file tui-agent attaches is "
                     f"{MOST // 1024 // 1024}.0 MB",
        "@blob.bin": "blob.bin is a binary file: only text files and images (PNG, JPEG, "
                     "GIF, WebP) can be attached",
        "@pipe": "pipe is not a regular file",
        '@"my\nnotes.txt"': '@"my: the quoted name is not closed on its line (a file name '
                            'cannot hold a line break): end it with " on the same line, or '
                            "write @@ for a plain @",
        '@"notes.md': '@"notes.md please: the quoted name is not closed on its line (a file '
                      'name cannot hold a line break): end it with " on the same line, or '
                      "write @@ for a plain @",
        '@""': "@\"\" names no file: put the file's name between the quotes",
    }
    message = unreadable(project)
    expected["@" + message.split(":")[0]] = message
    for prompt, said in expected.items():
        with pytest.raises(AttachError) as caught:
            prepare(f"look at {prompt} please", project)
        assert str(caught.value) == said


def test_headless_at_path_and_image(project: Path, fake_llm: FakeLLM,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    fake_llm.push(Reply(text="42"), Reply(text="red"))
    base = ["run", "--model", "openai/fake-model", "--api-base", fake_llm.base_url]
    assert main([*base, "what does @src/app.py return?"]) == 0
    sent = fake_llm.requests[0]["messages"][-1]["content"]
    assert sent.startswith("what does @src/app.py return?\n\n<file path=\"src/app.py\"")
    assert "return 42" in sent
    assert main([*base, "--model", "openai/gpt-4o", "--image", "red.png", "colour?"]) == 0
    parts = fake_llm.requests[1]["messages"][-1]["content"]
    assert parts[0] == {"type": "text",
                        "text": 'colour?\n\n<image path="red.png" size="75 B"/>'}
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    capsys.readouterr()


def test_headless_refusals_send_nothing(project: Path, fake_llm: FakeLLM,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "--model", "openai/fake-model", "--api-base", fake_llm.base_url]
    for args, said in (
            (["explain @nope.py"], "nope.py: no such file"),
            (['explain @"my\nnotes.md"'], '@"my: the quoted name is not closed on its line'),
            (["--image", "notes.md", "hi"], "notes.md is not an image the models read"),
            (["--image", "red.png"], "the prompt is empty"),
            (["--image", "red.png", "hi"],
             "fake-model does not read images (as far as litellm knows; set [model] vision = "
             "true if it does): red.png was not sent")):
        assert main([*base, *args]) == 2, args
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert fake_llm.requests == []


def test_a_pasted_path_to_an_image(project: Path) -> None:
    assert pasted_image(str(project / "red.png"), project) == project / "red.png"
    assert pasted_image("'red.png'", project) == project / "red.png"
    assert pasted_image((project / "red.png").as_uri(), project) == project / "red.png"
    assert pasted_image("notes.md", project) is None
    assert pasted_image("red.png\nand more", project) is None
    assert pasted_image("x" * 5000 + ".png", project) is None  # too long a name
    assert references("see @" + "y" * 5000 + " now", project) == []


def test_the_picker_lists_what_git_or_gitignore_keeps(project: Path) -> None:
    (project / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n", encoding="utf-8")
    for name in ("a.log", "keep.log", "build/out.txt", "node_modules/x/i.js", ".hidden/h"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x", encoding="utf-8")
    walked = list_files(project)
    assert walked == [".gitignore", "keep.log", "notes.md", "red.png", "src/app.py"]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert list_files(project) == [".gitignore", ".hidden/h", "keep.log", "node_modules/x/i.js",
                                   "notes.md", "red.png", "src/app.py"]
    ranked = [path for path, _ in rank("app", list_files(project))]
    assert ranked[0] == "src/app.py"
    assert rank("srcapp", ["src/app.py", "docs/scrapbook/app.md"])[0] == (
        "src/app.py", [0, 1, 2, 4, 5, 6])
    assert rank("zzz", list_files(project)) == []


def test_the_diff_of_a_write_and_of_edits(project: Path) -> None:
    scope = FileScope(roots=[project], base=project)
    edit = change_of("edit_file", {"path": "src/app.py", "edits": [
        {"oldText": "return 42", "newText": "return 43"}]}, scope)
    assert edit is not None and not edit.new_file and (edit.added, edit.removed) == (1, 1)
    assert edit.diff.splitlines()[2:] == ["@@ -1,2 +1,2 @@", " def main():",
                                          "-    return 42", "+    return 43"]
    assert edit.warnings == ()
    new = change_of("write_file", {"path": str(project / "new.txt"), "content": "a\nb"},
                    scope)
    assert new is not None and new.new_file and new.diff.splitlines() == [
        "--- /dev/null", f"+++ b{project}/new.txt", "@@ -0,0 +1,2 @@", "+a", "+b",
        "\\ No newline at end of file"]
    outside = change_of("write_file", {"path": "../elsewhere.txt", "content": "x"}, scope)
    assert outside is not None and outside.warnings[0].startswith("outside the server's roots")
    missed = change_of("edit_file", {"path": "notes.md", "old_string": "absent",
                                     "new_string": "y"}, scope)
    assert missed is not None and "edit 1's old text is not in the file" in missed.warnings[0]
    assert change_of("read_file", {"path": "notes.md", "content": "x"}, scope) is None
    assert change_of("write_file", {"path": "notes.md"}, scope) is None
    docker = FileScope(mounts=[("/work", project)], elsewhere="the container")
    mounted = change_of("write_file", {"path": "/work/notes.md", "content": "# Notes\n+\n"},
                        docker)
    assert mounted is not None and mounted.local == project / "notes.md" and mounted.added == 1
    inside = change_of("write_file", {"path": "/etc/x", "content": "x"}, docker)
    assert inside is not None and inside.local is None and inside.warnings == (
        "the file is in the container, not on this machine: the diff is against nothing "
        "known",)


def test_the_terminal_gate_shows_the_diff_and_the_arguments_on_d(project: Path) -> None:
    from tui_agent.core.permissions import PendingCall
    from tui_agent.headless.gate import TerminalGate

    arguments = {"path": "notes.md", "content": "# Notes\nmore\n"}
    change = change_of("write_file", arguments, FileScope(roots=[project], base=project))
    call = PendingCall("c", "fs__write_file", "fs", "write_file", arguments, change=change)
    said = io.StringIO()
    decision = TerminalGate()._dialogue(call, io.StringIO("d\ny\n"), said)
    assert decision.approved
    shown = said.getvalue()
    assert "changes notes.md (+1 −0)\n  --- a/notes.md\n  +++ b/notes.md\n" in shown
    assert shown.index("+more") < shown.index('"content"')  # the arguments after d
    assert "[d] show the arguments" in shown
