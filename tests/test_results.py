"""MCP results as text: structured content as YAML, structured errors, summaries, caps."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from tui_agent.tools.results import cap, render, structured_error, to_yaml


def text(value: str) -> TextContent:
    return TextContent(type="text", text=value)


def test_text_blocks_are_joined() -> None:
    out = render(CallToolResult(content=[text("one"), text("two")]))
    assert (out.text, out.is_error) == ("one\ntwo", False)


def test_structured_content_is_yaml_and_its_json_twin_is_dropped() -> None:
    data = {"city": "Paris", "temps": [21.5, 19], "ok": True, "note": None,
            "nested": {"a": "1", "empty": []}}
    out = render(CallToolResult(content=[text('{"city": "Paris"}')], structured_content=data))
    assert out.text == (
        "city: Paris\ntemps:\n  - 21.5\n  - 19\nok: true\nnote: null\n"
        'nested:\n  a: "1"\n  empty: []')


def test_a_text_that_holds_the_structure_is_the_one_copy() -> None:
    """server-filesystem's file read: ``{"content": X}`` and the text X. The model gets X
    once, as written (not indented under a YAML key as well)."""
    body = "def f():\n    return 1\n"
    out = render(CallToolResult(content=[text(body)], structured_content={"content": body}))
    assert (out.text, out.value) == (body, {"content": body})
    # With more in the structure than the text says, the YAML stays and the text that it
    # repeats goes.
    out = render(CallToolResult(content=[text(body)],
                                structured_content={"content": body, "lines": 2}))
    assert out.text == "content: |-\n  def f():\n      return 1\n  \nlines: 2"


def test_a_wrapped_primitive_is_unwrapped() -> None:
    out = render(CallToolResult(content=[text("42")], structured_content={"result": 42}))
    assert out.text == "42"


def test_yaml_quotes_what_would_read_as_something_else() -> None:
    assert to_yaml({"a": "yes", "b": "12", "c": "- x", "d": "#c", "e": "a: b"}) == (
        'a: "yes"\nb: "12"\nc: "- x"\nd: "#c"\ne: "a: b"')
    assert to_yaml({"poem": "line 1\nline 2"}) == "poem: |-\n  line 1\n  line 2"
    assert to_yaml([{"a": 1, "b": 2}]) == "- a: 1\n  b: 2"


@pytest.mark.parametrize(("data", "expected"), [
    ({"message": "disk full", "code": 28}, "disk full (code=28)"),
    ({"error": "not found", "statusCode": 404, "retryable": False},
     "not found (code=404 retriable=false)"),
    ({"error": {"message": "upstream timed out", "code": "E_TIMEOUT"}, "retriable": "no"},
     "upstream timed out (code=E_TIMEOUT retriable=false)"),
    ({"detail": "bad input", "errorCode": "E1", "retriable": 1},
     "bad input (code=E1 retriable=true)"),
    ({"message": "m", "error": "e", "detail": "d"}, "m"),
    ({"error": {"message": "inner"}, "detail": "d", "retriable": "TRUE"},
     "inner (retriable=true)"),
    ({"code": 3}, None),
])
def test_structured_errors(data: dict[str, Any], expected: str | None) -> None:
    assert structured_error(data) == expected


def test_an_error_prefers_the_structured_message_over_text() -> None:
    out = render(CallToolResult(content=[text("raw")], is_error=True,
                                structured_content={"message": "why", "retriable": "false"}))
    assert (out.text, out.is_error) == ("why (retriable=false)", True)
    plain = render(CallToolResult(content=[text("plain failure")], is_error=True))
    assert plain.text == "plain failure"


def test_other_blocks_are_summarised() -> None:
    out = render(CallToolResult(content=[
        ImageContent(type="image", data="A" * 400, mime_type="image/png"),
        ResourceLink(type="resource_link", uri="file:///x", name="x.txt"),
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="mem://a", mime_type="text/plain", text="inline text")),
        EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri="mem://b", mime_type="application/zip", blob="QUJD")),
    ]))
    assert out.text.splitlines() == [
        "[image: image/png, 300 B]", "[resource link: x.txt <file:///x>]",
        "[resource mem://a (text/plain)]", "inline text",
        "[resource mem://b (application/zip), 3 B of binary data]"]


def test_with_neither_text_nor_structured_content_the_raw_json_is_cut() -> None:
    out = render(CallToolResult(content=[], _meta={"blob": "z" * 5000}))
    assert out.text.startswith('{"_meta": {"blob": "zzz')
    assert "characters in all)" in out.text
    assert len(out.text) < 2_100


def test_escapes_are_stripped_everywhere() -> None:
    out = render(CallToolResult(content=[text("\x1b]52;c;eA==\x07a\x1b[31mb")],
                                structured_content={"k\x1b[2J": "v\u202e\x9b1m"}))
    assert "\x1b" not in out.text and "\u202e" not in out.text and "\x9b" not in out.text
    assert out.text == "k: v\nab"  # the C1 CSI "\\x9b1m" goes whole


def test_cap_says_what_it_cut_and_where_the_rest_is(tmp_path: Any) -> None:
    assert cap("short", 100) == "short"
    long = "x" * 1000
    cut = cap(long, 100, tmp_path / "r.txt")
    assert cut.startswith("x" * 400)
    assert "[output cut: the first 400 of 1,000 characters (about 100 tokens) are shown." in cut
    assert str(tmp_path / "r.txt") in cut
