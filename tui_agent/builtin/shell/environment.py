"""The environment a command runs with: a minimal one, built up from what a shell needs
(PATH, HOME, locale, terminal type, the user's name) rather than filtered down from the
server's own, so a key the server was given (``OPENAI_API_KEY``, a token in a
``*_TOKEN``) never reaches a command."""

from __future__ import annotations

from collections.abc import Mapping

PASSED = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
          "TMPDIR")
"""Variables passed through when the server has them (none holds a secret)."""


def command_env(source: Mapping[str, str]) -> dict[str, str]:
    """The environment for one command: :data:`PASSED` from ``source`` (none of them a
    secret) and a dumb terminal (no colours to strip, no pager waiting for a key)."""
    env = {k: source[k] for k in PASSED if k in source}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(TERM="dumb", NO_COLOR="1", PAGER="cat", GIT_PAGER="cat",
               GIT_TERMINAL_PROMPT="0")
    return env
