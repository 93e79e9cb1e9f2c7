"""Building the real app for tests: a config file on disk (so "always allow" has a file to
write to), the scripted LLM server, our MCP servers, and a pilot helper that waits for a
condition instead of sleeping a fixed time."""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import TextArea

from tests.conftest import FAKE_MODEL, ROOT, TAG_VAR
from tests.zygote import module
from tui_agent.config import load
from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.servers import ServersScreen
from tui_agent.ui.widgets.messages import Note
from tui_agent.wiring.runtime import Options

SIZE = (100, 32)
S = TypeVar("S", bound=Screen[Any])


def toml_value(value: Any) -> str:
    return json.dumps(value)


def write_config(path: Path, *, base_url: str | None = None, model: str | None = FAKE_MODEL,
                 servers: dict[str, list[str]] | None = None, extra: str = "") -> Path:
    """A config file with a comment in each section (write-back must keep them).
    ``servers`` maps a name to the arguments of tests/fakes/mcp_server.py."""
    lines = ["# written by the UI tests; comments must survive", "[model]"]
    if model:
        lines.append(f"name = {toml_value(model)}  # the scripted server")
    if base_url:
        lines += [f"api_base = {toml_value(base_url)}", 'api_key = "sk-test-key"',
                  "max_retries = 0", "timeout = 20"]
    for name, args in (servers or {}).items():
        command, *argv = module("tests.fakes.mcp_server", *args)
        lines += ["", f"[servers.{name}]  # a test server",
                  f"command = {toml_value(command)}", f"args = {toml_value(argv)}",
                  f"cwd = {toml_value(str(ROOT))}",
                  f"env = {{ {TAG_VAR} = {toml_value(os.environ[TAG_VAR])} }}",
                  "startup_timeout = 20"]
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def with_asking_server(path: Path, base_url: str, *, auto: bool = True) -> Path:
    """A config whose one server is tests/fakes/asking_server.py (over stdio), all of its
    tools auto-approved unless ``auto`` is False."""
    approvals = 'auto = ["*"]\n' if auto else ""
    command, *argv = module("tests.fakes.asking_server")
    return write_config(path, base_url=base_url, extra=(
        f"\n[servers.asking]\ncommand = {toml_value(command)}\nargs = {toml_value(argv)}\n"
        f"cwd = {toml_value(str(ROOT))}\n"
        f"env = {{ {TAG_VAR} = {toml_value(os.environ[TAG_VAR])} }}\n"
        f"{approvals}startup_timeout = 30\n"))


async def open_servers(pilot: Pilot[Any], app: AgentApp) -> ServersScreen:
    """The servers screen, opened with its key."""
    await pilot.press("ctrl+s")
    return await shown(pilot, app, ServersScreen, "the servers screen")


def make_app(config: Path | None = None, **options: Any) -> AgentApp:
    """The app on ``config``; its notifications are recorded (:func:`notices`) and stay on
    screen for :data:`TOAST_SECONDS` unless the app gives one its own timeout."""
    app = AgentApp(Options(load(config), **options))
    told = NOTICES[app] = []
    notify = app.notify

    def recording(message: str, *, timeout: float | None = None, **rest: Any) -> None:
        told.append(str(message))
        notify(message, timeout=TOAST_SECONDS if timeout is None else timeout, **rest)

    app.notify = recording  # type: ignore[method-assign]
    return app


NOTICES: weakref.WeakKeyDictionary[App[Any], list[str]] = weakref.WeakKeyDictionary()
TOAST_SECONDS = 120.0
"""How long a test app's notifications last. Textual's five seconds can pass between a
notification and a busy machine's next look at the screen (a test found none there)."""


def notices(app: App[Any]) -> list[str]:
    """Every notification an app of :func:`make_app` raised so far, expired or not."""
    return NOTICES[app]


async def until(pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 20,
                what: str = "the condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await pilot.pause(0.05)


async def shown(pilot: Pilot[Any], app: App[Any], kind: type[S], what: str = "the screen",
                timeout: float = 20, *, replacing: Screen[Any] | None = None) -> S:
    """The screen on top, once it is a ``kind`` and mounted (a modal pushed but not yet
    mounted has no widgets to query or keys to take), and not ``replacing`` (the one a
    key just answered: it stays on top until it is dismissed)."""
    await until(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted
                and app.screen is not replacing, timeout, what)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


def steady_cursor(*fields: TextArea) -> None:
    """Each field's cursor drawn and still, for a screenshot. Blinking stops, and the
    lines the field drew so far are forgotten: Textual's TextArea keeps drawn lines in a
    cache whose key leaves out ``cursor_blink`` and the focus, so a line drawn in the
    blink's off phase came back once blinking stopped, without the cursor. That was a
    busy machine's screenshot (the blink had turned off before the test stopped it), and
    a quiet one's showed the cursor (a resumed script's snapshot, 2 of 4 busy rounds)."""
    for field in fields:
        field.cursor_blink = False
        field.notify_style_update()  # empties the line cache (TextArea's own override)
        field.refresh()


def laid_out(root: Widget) -> list[Widget]:
    """The widgets under ``root`` that Textual lays out: displayed, and every ancestor
    displayed too (folding hides what scrolled far up)."""
    return [w for w in root.walk_children(Widget)
            if w.display and all(getattr(a, "display", True) for a in w.ancestors)]


async def ready(pilot: Pilot[Any], app: AgentApp) -> None:
    """The config is loaded, the backend has started and every server has finished its
    first start."""
    await until(pilot, app.loaded.is_set, what="the config")
    await until(pilot, app.backend.ready.is_set, what="the backend")
    if app.backend.hub is not None:
        await asyncio.wait_for(app.backend.hub.wait_all(), 30)


async def send(pilot: Pilot[Any], app: AgentApp, text: str) -> None:
    prompt = app.chat.query_one("#prompt")
    prompt.focus()
    prompt.load_text(text)  # type: ignore[attr-defined]
    await pilot.press("enter")


async def turn(pilot: Pilot[Any], app: AgentApp, text: str, timeout: float = 30) -> None:
    """Send ``text`` and wait until the turn has ended."""
    before = app.turns_ended
    await send(pilot, app, text)
    await until(pilot, lambda: app.turns_ended > before, timeout, "the turn to end")


async def finish(app: AgentApp) -> None:
    """Quit as the user would, so every server is closed."""
    await app.action_quit()


def notes(app: AgentApp) -> list[str]:
    """The text of every note in the transcript, oldest first."""
    return [str(n.render()) for n in app.transcript.query(Note)]


async def noted(pilot: Pilot[Any], app: AgentApp, text: str, timeout: float = 30) -> str:
    """The first note holding ``text``, once there is one."""
    await until(pilot, lambda: any(text in n for n in notes(app)), timeout=timeout,
                what=f"a note saying {text!r}")
    return next(n for n in notes(app) if text in n)


async def stream_reply(pilot: Pilot[Any], app: AgentApp, text: str, chunk: int) -> None:
    """``text`` streamed into the transcript as the model's reply to "go", ``chunk``
    characters a delta, then the turn's end; returns once the reply holds all of it."""
    from tui_agent.core.events import TextDelta, TurnDone, Usage
    from tui_agent.ui.widgets.messages import AssistantMessage

    await app.transcript.user("go")
    for start in range(0, len(text), chunk):
        await app.transcript.show(TextDelta(text[start:start + chunk]))
    await app.transcript.show(TurnDone(Usage()))
    await until(pilot, lambda: app.transcript.query_one(AssistantMessage).source == text,
                what="the whole reply")
