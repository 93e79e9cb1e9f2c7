"""SVG snapshot of tool cards whose calls run as tasks (MCP tasks): the task line with
the server's word, with a progress bar when the server reports progress too, one that
asks for input, and a hostile status message shown inert. Built like
tests/ui/test_snapshots_client.py: the real app, no servers, the events fed in."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.mcp_server import ESCAPES, MARKUP
from tests.ui.test_snapshots import Snap, app_for, feeding
from tui_agent.core.events import ApprovalDecided, TaskUpdate, ToolCallStarted, ToolProgress


def test_tool_cards_of_tasks(snap_compare: Snap, tmp_path: Path) -> None:
    """A task with the server's status message; one with a bar (progress beats the
    message on the line); one waiting for input; one whose server sends markup and
    escapes in its status message, which show as plain text."""
    events = [
        ToolCallStarted("r", "every__simulate-research-query", "every",
                        "simulate-research-query", {"topic": "owls"}),
        ApprovalDecided("r", "auto"),
        TaskUpdate("r", "3f2a1b9c-0d4e-4f1a-9b2c-7d8e9f0a1b2c", "working",
                   "Gathering sources..."),
        ToolCallStarted("i", "search__index", "search", "index", {"path": "src"}),
        ApprovalDecided("i", "auto"),
        TaskUpdate("i", "77aa55", "working", "indexing"),
        ToolProgress("i", 2, 5, "indexing src/tui_agent"),
        ToolCallStarted("q", "every__simulate-research-query", "every",
                        "simulate-research-query", {"topic": "python", "ambiguous": True}),
        ApprovalDecided("q", "auto"),
        TaskUpdate("q", "9e8d7c6b5a49", "input_required",
                   'Found multiple interpretations for "python". Requesting clarification...'),
        ToolCallStarted("h", "evil__crawl", "evil", "crawl", {}),
        ApprovalDecided("h", "auto"),
        TaskUpdate("h", f"id{ESCAPES}", "working", f"{MARKUP}{ESCAPES}"),
    ]
    assert snap_compare(app_for(tmp_path), terminal_size=(100, 40), run_before=feeding(events))
