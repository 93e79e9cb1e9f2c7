"""The first time a project's servers appear: the exact commands they would run, and
the user's answer. ``y`` trusts this project as it is now (remembered until what it
asks for changes) · ``n`` or ``esc``: not now (the settings a project may set freely
apply, its servers and the rest do not; asked again at the next start).

Everything shown comes from files in a directory the user may have just cloned: it
is cleaned of control characters and shown as inert text.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui_agent.config.held import HeldProject
from tui_agent.config.show import held_lines
from tui_agent.tools.text import clean
from tui_agent.ui.screens.question import Question
from tui_agent.ui.widgets.messages import key_hints, plain

if TYPE_CHECKING:
    from tui_agent.ui.startup import Startup
    from tui_agent.wiring.runtime import Options


WHY_CONFIG = ("Its config files want to start these servers on this machine, or to change "
              "where your model requests go, what they carry or what your servers may "
              "reach. None of it applies until you agree.")
WHY_CONTENT = ("Its files would give the model instructions (they are sent with every "
               "request). None of it is read until you agree.")


class ProjectConsent(Question[bool]):
    BINDINGS = [
        Binding("y", "trust", "Trust this project"),
        Binding("n", "decline", "Not now"),
        Binding("escape", "decline", "Not now", show=False),
    ]

    def __init__(self, held: HeldProject) -> None:
        super().__init__()
        self.held = held

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Content.assemble("Trust the project in ",
                                          (clean(str(self.held.project.root)), "bold"), "?"),
                         classes="title")
            yield Static(plain(WHY_CONFIG if self.held.asks_config() else WHY_CONTENT),
                         classes="why")
            with VerticalScroll(id="body"):
                yield Static(plain("\n".join(clean(line) for line in held_lines(self.held))))
            yield Static(key_hints([("y", "trust it as it is now"),
                                    ("n", "not now (asked again next time)"),
                                    ("esc", "not now")]), classes="keys")

    def action_trust(self) -> None:
        self.dismiss(True)

    def action_decline(self) -> None:
        self.dismiss(False)


async def settle_project(app: App[Any], start: Startup, options: Options) -> Options:
    """A project whose servers (or held settings) the user has not agreed to yet: show
    exactly what they would run and ask. Agreeing records this content as trusted and
    loads again (asking again if the files changed meanwhile)."""
    from tui_agent.config.trust import record_trust

    while (held := options.settings.held) is not None and app.return_code is None:
        if not await app.push_screen_wait(ProjectConsent(held)):
            options.settings.warnings.append(
                f"the project in {held.project.root} is not trusted: its servers were "
                "not started and its settings that need your trust are not used (you "
                "will be asked again at the next start)")
            break
        try:
            await asyncio.to_thread(record_trust, held)
        except OSError as exc:
            options.settings.warnings.append(
                f"cannot record that you trust {held.project.root} ({exc}); its servers "
                "stay off")
            break
        options = await asyncio.to_thread(start.options)
    return options
