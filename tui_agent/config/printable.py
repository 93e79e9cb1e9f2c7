"""What the command line may print of untrusted or secret-bearing text: the one
sanitiser and the one masking path every output goes through.

- :func:`clean` makes untrusted text (a server's error or stderr, a description, the
  model's words) safe for a terminal: escape sequences (CSI cursor moves, OSC 52
  clipboard writes, OSC 8 links, DCS/APC/PM/SOS strings), C0 and C1 controls, DEL, and
  every format character (bidi, zero-width, soft hyphen, the invisible tag characters)
  but the zero-width joiner of emoji are removed; newlines and tabs are kept.
- :func:`safe_name` shows a name (a server's, a tool's) with those characters written
  out as ``\\x1b``, ``\\u202e``: nothing reaches the terminal live, and a person sees
  that the name is not what it looks like (stripping them would make two names look
  alike, and hide that the name is hostile).
- :func:`shown` is :func:`clean` after :func:`~tui_agent.config.interpolate.mask`: the
  path of every printed line that may quote a secret. The secrets it masks are the
  configuration's (``Settings.secrets``: keys, ``${VAR}`` values, secret-named env and
  header values, and each server URL's :func:`~tui_agent.config.urls.url_secrets`),
  and the tokens learned at run time. A URL printed as such goes through
  :func:`~tui_agent.config.urls.mask_url` first.

:mod:`tui_agent.tools.text` re-exports :func:`clean` and builds the streaming cleaner
on it; this module lives in ``config`` so that every layer can import it.
"""

from __future__ import annotations

import functools
import re

from tui_agent.config.interpolate import mask

# ESC-introduced sequences first (CSI with its parameters, OSC/DCS/APC/PM/SOS up to
# their terminator, two-byte escapes), then the 8-bit C1 forms, then lone controls.
ESCAPES = (
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|[\x90\x9d\x9e\x9f\x98][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
CONTROLS = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but \t and \n), DEL, C1
    # Every format character (Unicode category Cf) but U+200D, the zero-width joiner that
    # joins emoji: zero-width spaces and joiners, bidi marks, overrides and isolates,
    # the soft hyphen, Arabic and Mongolian marks, U+2060-206F, the BOM, the
    # interlinear annotations, and the tag characters (invisible text that can hide
    # instructions from the reader, not from the model). Written out, not computed at
    # import: tests/test_text.py checks it against unicodedata.
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200c"
    "\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)


def clean(text: str) -> str:
    """``text`` without escape sequences, control characters (but ``\\n`` and ``\\t``)
    and format characters (bidi overrides, zero-width and tag characters; but U+200D,
    which joins emoji). ``\\r\\n`` becomes ``\\n``."""
    # Fast path: nothing to strip (most tool output: printable lines, tabs). Every
    # character removed below is one Python counts as not printable.
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    text = text.replace("\r\n", "\n")
    escapes, controls = _patterns()
    return controls.sub("", escapes.sub("", text))


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """:data:`ESCAPES` and :data:`CONTROLS` compiled, the first time text needs them (not
    on the way to the app's first frame)."""
    return re.compile(ESCAPES), re.compile(CONTROLS)


def safe_name(name: str) -> str:
    """``name`` as printed: each control, DEL, C1, bidi or zero-width character
    (newline and tab too: in a name they are as foreign as ESC; every character Python
    counts as not printable) written out as its Python escape (``\\x1b``)."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def shown(text: str, secrets: set[str] | frozenset[str] = frozenset()) -> str:
    """``text`` as a command prints it: every known secret masked, then cleaned."""
    return clean(mask(text, secrets))


def quoted(text: str) -> str:
    """``text`` as a TOML basic string: quoted, with every character Python counts as
    not printable written as ``\\uXXXX``, or ``\\UXXXXXXXX`` beyond U+FFFF (a tag
    character; ``json.dumps`` leaves DEL, C1, bidi and tag characters as they are)."""
    import json  # not on the way to the app's first frame

    return "".join(c if c.isprintable() else _escaped(c)
                   for c in json.dumps(text, ensure_ascii=False))


def _escaped(char: str) -> str:
    """TOML's escape of ``char``: four hex digits reach only U+FFFF."""
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
