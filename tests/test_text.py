"""Untrusted text is made safe for the terminal, and secrets are masked even mid-stream."""

from __future__ import annotations

import pytest

from tui_agent.config.interpolate import StreamMasker, mask
from tui_agent.tools.text import clean


@pytest.mark.parametrize(("raw", "safe"), [
    ("plain text", "plain text"),
    ("red \x1b[31malert\x1b[0m", "red alert"),
    ("clip\x1b]52;c;SGVsbG8=\x07board", "clipboard"),
    ("a \x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "a link"),
    ("c1 \x9b2J csi", "c1  csi"),
    ("bell\x07 back\x08space", "bell backspace"),
    ("bidi \u202eevil\u202c", "bidi evil"),
    ("zero\u200bwidth", "zerowidth"),
    ("keep\nlines\tand tabs\r\n", "keep\nlines\tand tabs\n"),
    ("é 日本 emoji 🙂", "é 日本 emoji 🙂"),
])
def test_clean(raw: str, safe: str) -> None:
    assert clean(raw) == safe


TAGGED = "see\U000e0001\U000e0069\U000e0067\U000e006e\U000e007f here"
"""Unicode tag characters: invisible on a terminal, read by a model (hidden orders)."""


@pytest.mark.parametrize(("raw", "safe"), [
    (TAGGED, "see here"),
    ("soft\xadhyphen arabic\u061cmark mongolian\u180evowel", "softhyphen arabicmark "
     "mongolianvowel"),
    ("family \U0001f468\u200d\U0001f469\u200d\U0001f467", "family \U0001f468\u200d"
     "\U0001f469\u200d\U0001f467"),  # the joiner of an emoji sequence is kept
    ("lines\n\tand tabs only", "lines\n\tand tabs only"),
])
def test_clean_removes_every_format_character_but_the_emoji_joiner(raw: str,
                                                                   safe: str) -> None:
    assert clean(raw) == safe


def test_clean_knows_every_format_character_of_this_python() -> None:
    """The class is written out in the source: it must hold each Cf of unicodedata."""
    import unicodedata

    formats = "".join(chr(c) for c in range(0x110000)
                      if unicodedata.category(chr(c)) == "Cf" and c != 0x200D)
    assert clean(f"a{formats}b") == "ab"


@pytest.mark.parametrize("text", ["a\U000e0001b", TAGGED, "\x1b[2J\x7f\u202e\x9b",
                                  "\"quote\" and \\ é 🙂"])
def test_quoted_reads_back_as_the_same_string(text: str) -> None:
    """TOML's ``\\u`` takes four hex digits: a tag character needs ``\\U`` and eight."""
    import tomllib

    from tui_agent.config.printable import quoted

    written = quoted(text)
    assert all(c.isprintable() for c in written)
    assert tomllib.loads(f"k = {written}")["k"] == text


def test_mask_longest_first() -> None:
    assert mask("abc-123456 and abc-123456789", {"abc-123456", "abc-123456789"}) \
        == "*** and ***"


def test_stream_masker_catches_a_secret_split_across_pieces() -> None:
    masker = StreamMasker(frozenset({"sk-secret-42"}))
    pieces = ["the key is sk-se", "cret", "-42 ok, and sk-", "not it"]
    out = "".join(masker.feed(p) for p in pieces) + masker.flush()
    assert out == "the key is *** ok, and sk-not it"


def test_stream_masker_without_secrets_passes_through() -> None:
    masker = StreamMasker(frozenset())
    assert masker.feed("abc") == "abc" and masker.flush() == ""


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64])
def test_stream_cleaner_removes_sequences_split_across_pieces(size: int) -> None:
    """A streamed reply cut anywhere, even inside an escape sequence, comes out as
    clean() of the whole text: no tail of a sequence is left behind as text."""
    from tests.fakes.mcp_server import ESCAPES
    from tui_agent.tools.text import StreamCleaner

    text = "model says " + ESCAPES + " \x1b[1mbold\x1b[0m end"
    cleaner = StreamCleaner()
    out = "".join(cleaner.feed(text[i:i + size]) for i in range(0, len(text), size))
    assert out + cleaner.flush() == clean(text)


def test_stream_cleaner_never_holds_more_than_its_limit() -> None:
    from tui_agent.tools.text import StreamCleaner

    cleaner = StreamCleaner()
    text = "a\x1b]8;;" + "x" * 300  # an OSC that never ends: nothing is held back for it
    assert cleaner.feed(text) == clean(text) and cleaner.flush() == ""
