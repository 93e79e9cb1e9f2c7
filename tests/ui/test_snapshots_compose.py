"""SVG snapshots of writing a message: the ``@`` file picker, images waiting for the next
message and the chips of a sent one, and the approval modal showing the diff a write
would make (``--snapshot-update`` rewrites them after an intended change)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from tests.test_media import png
from tests.ui.kit import make_app, shown, until, write_config
from tests.ui.test_snapshots import SIZE, WRITE, Snap, app_for, settle
from tui_agent.core.attachments import prepare, read_attachment
from tui_agent.core.diffs import FileScope, change_of
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.screens.files import FilePicker
from tui_agent.ui.widgets.prompt import PromptInput


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    for name in ("src/tui_agent/app.py", "src/tui_agent/chat.py", "src/tui_agent/app.tcss",
                 "tests/test_app.py", "docs/apis.md", "README.md", "pyproject.toml"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n", encoding="utf-8")
    (root / "shots").mkdir()
    (root / "shots" / "red.png").write_bytes(png(8, 8))
    monkeypatch.chdir(root)
    return root


def test_file_picker(snap_compare: Snap, tmp_path: Path, project: Path) -> None:
    """``@`` typed in the prompt: the project's files, matched fuzzily, letters marked."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("r", "e", "a", "d", "space", "@")
        app = pilot.app
        await shown(pilot, app, FilePicker)
        assert isinstance(app.screen, FilePicker)
        picker = app.screen
        for field in picker.query(Input):  # a blinking cursor is on or off by the clock
            field.cursor_blink = False
        await until(pilot, lambda: picker.files is not None)
        await pilot.press("a", "p", "p")
        await until(pilot, lambda: picker.shown == "app")  # ranked in a worker thread
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=SIZE, run_before=before)


def test_image_chips(snap_compare: Snap, tmp_path: Path, project: Path) -> None:
    """An image waiting for the next message (over the prompt), and a sent message's
    chips: a file and an image, each with its size."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentApp)
        files = prepare("what does @src/tui_agent/app.py draw, and is it this?", project,
                        [read_attachment(project / "shots" / "red.png", "red.png")])
        await app.transcript.user(files.text, [a.chip() for a in files.attachments])
        prompt = app.chat.query_one(PromptInput)
        prompt.load_text("/image shots/red.png")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.images) == 1)
        await pilot.pause(0.2)

    config = write_config(tmp_path / "c.toml", model="openai/snapshot-model",
                          extra="vision = true\n")
    assert snap_compare(make_app(config), terminal_size=SIZE, run_before=before)


def test_approval_modal_with_a_diff(snap_compare: Snap, tmp_path: Path, project: Path) -> None:
    """A write's diff instead of its arguments (``d`` swaps them), coloured, and a path
    outside the server's roots flagged."""
    (project / "notes").mkdir()
    (project / "notes" / "today.md").write_text("# Today\n\n- write the modal\n- test it\n",
                                                encoding="utf-8")
    arguments = {"path": "notes/today.md", "content": "# Today\n\n- ship the modal\n- test it\n"
                 "- write the README\n"}
    change = change_of("write_file", arguments,
                       FileScope(roots=[Path("/srv/project")], base=project))
    call = replace(WRITE, arguments=arguments, change=change)

    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.app.push_screen(ApprovalScreen(call, remember_in="config.toml"))
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=SIZE, run_before=before)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_tab_says_above_the_prompt_when_no_command_fits(snap_compare: Snap, tmp_path: Path,
                                                         size: tuple[int, int]) -> None:
    """``/zq`` + tab: no command fits (the ``/`` menu has closed): said in the line above
    the prompt, in the warning colour, and the typed ``/zq`` stays in sight (a toast
    covered it)."""
    async def before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("/", "z", "q", "tab")
        app = pilot.app
        assert isinstance(app, AgentApp)
        await until(pilot, lambda: app.chat.query_one("#tab-hint").display)
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=size, run_before=before)
