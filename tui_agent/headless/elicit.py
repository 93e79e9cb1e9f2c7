"""``--elicit``: how a headless run answers a server that asks the person for something.
``ask`` asks on the controlling terminal (each field in turn, its default in brackets) and
declines without one; ``defaults`` accepts with the schema's defaults (SEP-1034) where
they make a whole answer, and declines otherwise; ``decline`` declines everything.

A URL is opened only when the person says so on the terminal: never under ``defaults``;
and where no browser opens it, the person is asked again (the server hears "accept" only
once they say the link is open).
"""

from __future__ import annotations

import asyncio
from typing import IO

from tui_agent.headless.gate import in_daemon_thread
from tui_agent.tools.elicit import Answer, Field, Form, UrlAsk, Value, defaults, problems, read

TRIES = 3
"""Times a field is asked again after an answer it cannot take."""
DONE = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}


class TerminalAsker:
    """The ``Ask`` of ``tui-agent run``: ``mode`` is ``ask``, ``defaults`` or ``decline``;
    what it did is told on ``err``."""

    def __init__(self, mode: str, err: IO[str], tty_path: str = "/dev/tty") -> None:
        self.mode, self.err, self.tty_path = mode, err, tty_path
        self._one_at_a_time = asyncio.Lock()

    async def __call__(self, request: Form | UrlAsk) -> Answer:
        async with self._one_at_a_time:
            answer = await self._answer(request)
        what = "a link to open" if isinstance(request, UrlAsk) else "input"
        said = request.message.splitlines()[0][:120] if request.message else ""
        self.err.write(f"tui-agent: {request.server} asked for {what} ({said}): "
                       f"{DONE[answer.action]}\n")
        return answer

    async def _answer(self, request: Form | UrlAsk) -> Answer:
        if self.mode == "decline":
            return Answer("decline")
        if self.mode == "defaults":
            if isinstance(request, UrlAsk):
                return Answer("decline")  # a link is opened only by a person's say-so
            content = defaults(request)
            return Answer("decline") if problems(request, content) else \
                Answer("accept", content)
        return await in_daemon_thread(lambda: self._on_terminal(request),
                                      lambda exc: Answer("decline"), "elicitation-prompt")

    def _on_terminal(self, request: Form | UrlAsk) -> Answer:
        try:  # a tty is not seekable, so "r+" cannot open it: one handle each way
            tty_in = open(self.tty_path, encoding="utf-8")  # noqa: SIM115
            tty = open(self.tty_path, "w", encoding="utf-8")  # noqa: SIM115
        except OSError:
            return Answer("decline")  # nobody to ask
        with tty_in, tty:
            if isinstance(request, UrlAsk):
                return url_dialogue(request, tty_in, tty)
            return form_dialogue(request, tty_in, tty)


def form_dialogue(form: Form, tty_in: IO[str], tty: IO[str]) -> Answer:
    """Ask for each field of ``form`` on a terminal, then whether to send it."""
    tty.write(f"\n? {form.server} asks: {form.message}\n")
    content: dict[str, Value] = {}
    for f in form.fields:
        value = _field(f, tty_in, tty)
        if value is _GONE:
            return Answer("cancel")
        content[f.name] = value  # type: ignore[assignment]
    while True:
        tty.write("  [y] send  [n] decline  [c] cancel: ")
        tty.flush()
        line = tty_in.readline()
        choice = line.strip().lower()
        if not line or choice in ("c", "cancel"):
            return Answer("cancel")
        if choice in ("n", "no"):
            return Answer("decline")
        if choice in ("y", "yes", ""):
            return Answer("accept", {k: v for k, v in content.items() if v is not None})


_GONE = object()


def _field(f: Field, tty_in: IO[str], tty: IO[str]) -> object:
    """One field's value (None: left empty), or ``_GONE`` at the end of input."""
    label = f.title + (" (required)" if f.required else "")
    if f.description:
        tty.write(f"  {f.description.splitlines()[0][:200]}\n")
    if f.options:
        many = " (numbers separated by commas)" if f.kind == "choices" else ""
        tty.write(f"  {label}{many}:\n")
        for i, (_, name) in enumerate(f.options, 1):
            tty.write(f"    {i}. {name}\n")
    for _ in range(TRIES + 1):
        shown = _shown_default(f)
        tty.write(f"  {label}{f' [{shown}]' if shown else ''}: " if not f.options else
                  f"  choice{f' [{shown}]' if shown else ''}: ")
        tty.flush()
        line = tty_in.readline()
        if not line:
            return _GONE
        try:
            value = _chosen(f, line) if f.options else read(f, line)
        except ValueError as exc:
            tty.write(f"    {exc}\n")
            continue
        if value is None:
            value = f.default
        wrong = problems(Form("", "", (f,)), {f.name: value})
        if not wrong:
            return value
        tty.write(f"    {wrong[f.name]}\n")
    return f.default


def _chosen(f: Field, line: str) -> Value:
    """The options picked by number (or by value)."""
    picked: list[str] = []
    for part in (p.strip() for p in line.split(",")):
        if not part:
            continue
        if part.isdigit() and 1 <= int(part) <= len(f.options):
            picked.append(f.options[int(part) - 1][0])
        elif part in {v for v, _ in f.options}:
            picked.append(part)
        else:
            raise ValueError(f"{part!r} is not one of the numbers listed")
    if not picked:
        return None
    return picked if f.kind == "choices" else picked[0]


def _shown_default(f: Field) -> str:
    if f.default is None:
        return ""
    if f.options:
        values = f.default if isinstance(f.default, list) else [f.default]
        numbers = [str(i) for i, (v, _) in enumerate(f.options, 1) if v in values]
        return ",".join(numbers)
    if isinstance(f.default, bool):
        return "yes" if f.default else "no"
    return str(f.default)


def url_dialogue(ask: UrlAsk, tty_in: IO[str], tty: IO[str]) -> Answer:
    """Show the link and who asks; open it only on the person's ``y``. Where no browser
    takes it, the server is told nothing yet: the link is there to open elsewhere, and
    the person answers once more (``y`` once it is open)."""
    from tui_agent.tools.auth.browser import opened_in_browser

    tty.write(f"\n? {ask.server} asks you to open a link: {ask.message}\n  {ask.url}\n"
              "  [y] open it in the browser  [n] decline  [c] cancel: ")
    tty.flush()
    line = tty_in.readline()
    choice = line.strip().lower()
    if choice in ("y", "yes"):
        if opened_in_browser(ask.url):
            return Answer("accept")
        tty.write("  no browser could be opened here: open the link above yourself.\n"
                  "  [y] it is open  [n] decline  [c] cancel: ")
        tty.flush()
        line = tty_in.readline()
        choice = line.strip().lower()
        if choice in ("y", "yes"):
            return Answer("accept")
    return Answer("decline") if choice in ("n", "no", "") and line else Answer("cancel")
