"""SVG snapshots of the client side of MCP: the elicitation form with every kind of field,
the consent to open a link, a server's request for the model and the reply, tool cards
with a server's progress and warnings, and the approval modal with a server's hints.
Built like tests/ui/test_snapshots.py: the real app, a fixed model name, no servers; the
screens are pushed with what a server would have sent (hostile text included, shown
inert)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.screen import Screen

from tests.fakes.mcp_server import ESCAPES, MARKUP
from tests.ui.kit import steady_cursor
from tests.ui.test_snapshots import SIZE, Before, Snap, app_for, feeding, settle
from tui_agent.core.events import (
    ApprovalDecided,
    ServerLog,
    ToolCallStarted,
    ToolProgress,
    ToolResult,
)
from tui_agent.core.permissions import PendingCall
from tui_agent.tools.elicit import UrlAsk, parse_form
from tui_agent.tools.sampling import SampleRequest
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.screens.elicit import ElicitScreen, UrlConsent
from tui_agent.ui.screens.sampling import SampledReply, SamplingScreen

BOOKING = {"type": "object", "required": ["name", "guests"], "properties": {
    "name": {"type": "string", "title": "Name", "minLength": 2,
             "description": f"who the table is for {MARKUP}{ESCAPES}"},
    "email": {"type": "string", "format": "email", "title": "Email"},
    "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 12,
               "default": 2},
    "time": {"type": "string", "title": "Time", "oneOf": [
        {"const": "19", "title": "7 pm"}, {"const": "20", "title": "8 pm"}], "default": "20"},
    "terrace": {"type": "boolean", "title": "Outside, on the terrace", "default": True},
    "diet": {"type": "array", "title": "Dietary needs", "items": {
        "type": "string", "enum": ["vegetarian", "vegan", "gluten-free"]},
        "default": ["vegan"]},
}}


def pushing(screen: Screen[Any]) -> Before:
    async def before(pilot: Pilot[Any]) -> None:
        from textual.widgets import Input, TextArea

        await settle(pilot)
        await pilot.app.push_screen(screen)
        for field in screen.query("Input, TextArea"):  # a focused field's cursor: no blink
            assert isinstance(field, Input | TextArea)
            if isinstance(field, TextArea):
                steady_cursor(field)
            else:
                field.cursor_blink = False
        await pilot.pause(0.2)
    return before


def test_elicitation_form(snap_compare: Snap, tmp_path: Path) -> None:
    """Every kind of field with its default, required ones starred, bounds as hints; the
    server's hostile description shows as plain text."""
    form = parse_form("bistro", "Book a table: how many, and when?", BOOKING)
    assert snap_compare(app_for(tmp_path), terminal_size=(100, 44),
                        run_before=pushing(ElicitScreen(form)))


def test_elicitation_form_with_problems(snap_compare: Snap, tmp_path: Path) -> None:
    """ctrl+s with a missing name and too many guests: each problem under its field."""
    form = parse_form("bistro", "Book a table: how many, and when?", BOOKING)
    screen = ElicitScreen(form)

    async def before(pilot: Pilot[Any]) -> None:
        await pushing(screen)(pilot)
        from textual.widgets import Input

        screen.query_one("#field-2", Input).value = "40"
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=(100, 44), run_before=before)


EVERYTHING_FORM: dict[str, Any] = {"type": "object", "required": ["name"], "properties": {
    "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
    "check": {"title": "Boolean", "type": "boolean",
        "description": "Agree to the terms and conditions"},
    "firstLine": {"title": "String with default", "type": "string",
        "description": "Favorite first line of a story",
        "default": "It was a dark and stormy night."},
    "email": {"title": "String with email format", "type": "string", "format": "email",
        "description": "Your email address (will be verified, and never shared with anyone "
                       "else)"},
    "homepage": {"type": "string", "format": "uri", "title": "String with uri format",
        "description": "Portfolio / personal website"},
    "birthdate": {"title": "String with date format", "type": "string", "format": "date",
        "description": "Your date of birth"},
    "integer": {"title": "Integer", "type": "integer",
        "description": "Your favorite integer (do not give us your phone number, pin, or "
                       "other sensitive info)",
        "minimum": 1, "maximum": 100, "default": 42},
    "number": {"title": "Number in range 1-1000", "type": "number",
        "description": "Favorite number (there are no wrong answers)", "minimum": 0,
        "maximum": 1000, "default": 3.14},
    "untitledSingleSelectEnum": {"type": "string", "title": "Untitled Single Select Enum",
        "description": "Choose your favorite friend",
        "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"],
        "default": "Monica"},
    "untitledMultipleSelectEnum": {"type": "array", "title": "Untitled Multiple Select Enum",
        "description": "Choose your favorite instruments", "minItems": 1, "maxItems": 3,
        "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]},
        "default": ["Guitar"]},
    "titledSingleSelectEnum": {"type": "string", "title": "Titled Single Select Enum",
        "description": "Choose your favorite hero",
        "oneOf": [{"const": "hero-1", "title": "Superman"},
                  {"const": "hero-2", "title": "Green Lantern"},
                  {"const": "hero-3", "title": "Wonder Woman"}],
        "default": "hero-1"},
    "titledMultipleSelectEnum": {"type": "array", "title": "Titled Multiple Select Enum",
        "description": "Choose your favorite types of fish", "minItems": 1, "maxItems": 3,
        "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"},
                            {"const": "fish-2", "title": "Salmon"},
                            {"const": "fish-3", "title": "Trout"}]},
        "default": ["fish-1"]},
    "legacyTitledEnum": {"type": "string", "title": "Legacy Titled Single Select Enum",
        "description": "Choose your favorite type of pet",
        "enum": ["pet-1", "pet-2", "pet-3", "pet-4", "pet-5"],
        "enumNames": ["Cats", "Dogs", "Birds", "Fish", "Reptiles"], "default": "pet-1"},
}}
"""server-everything's ``trigger-elicitation-request`` form (2026.8.31): twelve fields, taller
than the screen at 120x40."""


def test_a_long_form_scrolls_and_keeps_its_buttons_120x40(snap_compare: Snap,
                                                          tmp_path: Path) -> None:
    """A form taller than the screen: the fields scroll inside the modal, the first has
    the focus, and the buttons with their keys stay docked at the bottom."""
    form = parse_form("everything", "Please provide inputs for the following fields:",
                      EVERYTHING_FORM)
    assert snap_compare(app_for(tmp_path), terminal_size=(120, 40),
                        run_before=pushing(ElicitScreen(form)))


def test_a_long_form_scrolls_and_keeps_its_buttons_80x24(snap_compare: Snap,
                                                         tmp_path: Path) -> None:
    """The same form on a small terminal: still the buttons and keys in sight."""
    form = parse_form("everything", "Please provide inputs for the following fields:",
                      EVERYTHING_FORM)
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24),
                        run_before=pushing(ElicitScreen(form)))


RESEARCH = {"type": "object", "required": ["interpretation"], "properties": {
    "interpretation": {"type": "string", "title": "Clarification",
                       "description": "Which interpretation of the topic do you mean?",
                       "oneOf": [{"const": f"i{n}", "title": f"Interpretation number {n}"}
                                 for n in range(1, 21)]}}}
"""server-everything's research-query clarification, with twenty choices instead of three."""


def test_a_long_choice_scrolls_inside_the_form_120x40(snap_compare: Snap,
                                                      tmp_path: Path) -> None:
    """A single choice of twenty, moved down to the tenth and picked: the list scrolls in
    its own room inside the form, and the buttons and keys below it stay uncovered (a
    dropdown used to open over them, past the dialog)."""
    form = parse_form("everything", 'The research query "python" could have multiple '
                      "interpretations. Please clarify what you're looking for:", RESEARCH)

    async def before(pilot: Pilot[Any]) -> None:
        await pushing(ElicitScreen(form))(pilot)
        await pilot.press("enter", *["down"] * 9, "space")
        await pilot.pause(0.2)

    assert snap_compare(app_for(tmp_path), terminal_size=(120, 40), run_before=before)


def test_url_consent(snap_compare: Snap, tmp_path: Path) -> None:
    """The server, why it asks and the whole URL; nothing opens until ``o``."""
    ask = UrlAsk("payments", "Pay the deposit on the restaurant's page",
                 "https://pay.example.com/deposit?id=7&amount=20")
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=pushing(UrlConsent(ask)))


def test_tool_cards_with_progress(snap_compare: Snap, tmp_path: Path) -> None:
    """A call whose server knows the total (a bar and its message), one that does not (the
    count so far), a warning the server logged during a call, and a finished call whose
    bar is gone."""
    events = [
        ToolCallStarted("i", "search__index", "search", "index", {"path": "src"}),
        ApprovalDecided("i", "auto"),
        ToolProgress("i", 2, 5, "indexing src/tui_agent"),
        ServerLog("search", "warning", "skipped 3 files larger than 1 MB", id="i"),
        ToolCallStarted("c", "crawl__fetch", "crawl", "fetch", {"url": "https://example.com"}),
        ApprovalDecided("c", "auto"),
        ToolProgress("c", 17, None, None),
        ToolCallStarted("d", "search__count", "search", "count", {}),
        ApprovalDecided("d", "auto"),
        ToolProgress("d", 1, 2, "counting"),
        ToolResult("d", False, "1,204 files", 0.8),
    ]
    assert snap_compare(app_for(tmp_path), terminal_size=(100, 40), run_before=feeding(events))


def test_approval_modal_with_the_servers_hints(snap_compare: Snap, tmp_path: Path) -> None:
    """The server's hints as badges under the title, destructive in the error colour."""
    call = PendingCall("c1", "shop__cancel_order", "shop", "cancel_order", {"order": 1182},
                       "Cancel an order and refund it.", fingerprint="f" * 32,
                       hints=("destructive", "idempotent", "open-world"), rule_helps=True)
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=pushing(ApprovalScreen(call, remember_in="config.toml")))


SAMPLE = SampleRequest("notes", (("user", "Summarise these notes in one line:\n- buy milk\n"
                                          "- call Ada about the review"),
                                 ("assistant", "Which notes?"),
                                 ("user", f"The ones above. {MARKUP}{ESCAPES}")),
                       "You summarise notes tersely.", 120)


def test_sampling_request(snap_compare: Snap, tmp_path: Path) -> None:
    """The server, the model it would run on, the system prompt and messages; the last
    message editable; a hostile message shows as plain text."""
    assert snap_compare(app_for(tmp_path), terminal_size=(100, 40),
                        run_before=pushing(SamplingScreen(SAMPLE, "openai/gpt-4o-mini")))


def test_sampling_reply(snap_compare: Snap, tmp_path: Path) -> None:
    """The model's reply, shown before it goes back to the server."""
    assert snap_compare(app_for(tmp_path), terminal_size=SIZE,
                        run_before=pushing(SampledReply(SAMPLE, "Buy milk; call Ada.")))


def test_prompt_arguments(snap_compare: Snap, tmp_path: Path) -> None:
    """A prompt called without its required argument: a form of its arguments with what
    each is for, the one given filled in, the missing one starred and focused."""
    from tui_agent.tools.prompts import PromptArgument, PromptInfo
    from tui_agent.ui.screens.prompt_args import PromptArguments

    prompt = PromptInfo("weather", "forecast", f"The week's weather for a place {MARKUP}",
                        (PromptArgument("city", "Name of the city", True),
                         PromptArgument("state", "Name of the state"),
                         PromptArgument("days", "How many days ahead (1 to 7)")))
    assert snap_compare(app_for(tmp_path), terminal_size=(80, 24),
                        run_before=pushing(PromptArguments(prompt, {"state": "Ohio"})))
