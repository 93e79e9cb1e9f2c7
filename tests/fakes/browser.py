"""A stand-in browser for ``$BROWSER``: it opens the login page and approves at once, that
is, it GETs the URL and follows the authorization server's redirect back to tui-agent's
loopback listener. It records each URL it was given in ``$FAKE_BROWSER_LOG`` if set, and
takes ``$FAKE_BROWSER_DELAY`` seconds first if set (a person who reads the page).

    BROWSER="python -m tests.fakes.browser %s"
"""

from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request


def main() -> None:
    url = sys.argv[1]
    log = os.environ.get("FAKE_BROWSER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(url + "\n")
    time.sleep(float(os.environ.get("FAKE_BROWSER_DELAY") or 0))
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 (loopback only)
            answer.read()
    except urllib.error.HTTPError as exc:  # a page that says the login failed, as a browser shows
        print(f"browser: HTTP {exc.code} from {exc.url}", file=sys.stderr)


if __name__ == "__main__":
    main()
