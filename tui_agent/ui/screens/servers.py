"""The servers screen (``/servers``, ctrl+s): every MCP server, its state, tools, last
error and stderr tail, its login, with reconnect, log in, enable, disable and add (``a``,
the words of ``tui-agent mcp add``); and each tool's approval (auto / ask / not
allowed), which can be switched (``t``, ``x``) and is written to the config file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui_agent.core.permissions import Policy, Standing
from tui_agent.tools.metrics import summary
from tui_agent.tools.text import clean
from tui_agent.ui.widgets.messages import plain

STATE_STYLE = {"connected": "$success", "degraded": "$warning", "connecting": "$accent",
               "failed": "$error", "disabled": "$text-muted", "idle": "$text-muted"}
RETRY = {"closed": "", "open": "paused", "half-open": "next try"}
"""The retry column, in words, for the circuit breaker's state: nothing while a server's
starts and calls go through; "paused" after too many failures in a row (calls fail at
once until the pause is over); "next try" once it is (the next start or call tries)."""


@dataclass
class ServerControls:
    """What the screen may do; the app supplies it (the hub and the policy behind it)."""

    statuses: Callable[[], list[Any]]
    tools_of: Callable[[str], list[Any]]
    policy: Policy
    reconnect: Callable[[str], None]
    enable: Callable[[str], Awaitable[str | None]]
    disable: Callable[[str], Awaitable[None]]
    stats: Callable[[], dict[str, Any]] = lambda: {"servers": {}}
    """The hub's call metrics (``Hub.stats``)."""
    login: Callable[[str], str] = lambda name: f"{name} does not log in"
    """Start a login (the server reconnects, and its page opens if it asks for one), or
    cancel the one under way; what happened, in a sentence."""
    login_status: Callable[[str], str | None] = lambda name: None
    """Who is logged in to a server that logs in (None: one that does not)."""
    login_outcome: Callable[[str], Awaitable[tuple[bool, str] | None]] = \
        lambda name: _nothing()
    """Once the login started has ended: whether it worked, and the sentence saying so
    (None: no login was started)."""
    add: Callable[[str], Awaitable[tuple[bool, str]]] | None = None
    """Add a server from the words of ``tui-agent mcp add`` (None: this screen cannot)."""


class ServersScreen(Screen[None]):
    DEFAULT_CSS = """
    ServersScreen { background: $background; }
    ServersScreen .title { text-style: bold; padding: 0 1; background: $panel; }
    ServersScreen #servers { height: auto; max-height: 40%; }
    ServersScreen #detail-pane { height: auto; max-height: 40%;
                                 border-top: solid $panel-lighten-1; }
    ServersScreen #detail { height: auto; padding: 0 1; color: $text-muted; }
    ServersScreen #detail.-failed { color: $error; }
    ServersScreen #tools { height: 1fr; border-top: solid $panel-lighten-1; }
    ServersScreen #message { height: auto; padding: 0 1; color: $warning; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("r", "reconnect", "Reconnect"),
        Binding("e", "enable", "Enable"),
        Binding("d", "disable", "Disable"),
        Binding("a", "add", "Add"),
        Binding("t", "toggle_auto", "Auto/ask"),
        Binding("x", "toggle_allowed", "Allow/deny"),
        Binding("l", "login", "Log in", show=False),
        # ctrl+s opened this screen and closes it again; not shown, so the footer keeps
        # room at 100 columns for the screen's own keys and ctrl+q.
        Binding("ctrl+s", "app.pop_screen", "Servers", show=False),
    ]

    def __init__(self, controls: ServerControls) -> None:
        super().__init__()
        self.controls = controls
        self._shown: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("MCP servers", classes="title")
        with Vertical():
            yield DataTable(id="servers", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail-pane"):
                yield Static(id="detail")
            yield DataTable(id="tools", cursor_type="row", zebra_stripes=True)
            yield Static(id="message")
        yield Footer()

    def on_mount(self) -> None:
        servers = self.query_one("#servers", DataTable)
        for label, width in (("server", 20), ("state", 11), ("transport", 14), ("tools", 6),
                             ("restarts", 9), ("retry", 10)):
            servers.add_column(label, width=width)
        tools = self.query_one("#tools", DataTable)
        for label, width in (("tool", 28), ("approval", 12), ("description", 54)):
            tools.add_column(label, width=width)
        self.refresh_data()
        servers.focus()

    def selected(self) -> str | None:
        table = self.query_one("#servers", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value)

    def refresh_data(self) -> None:
        table = self.query_one("#servers", DataTable)
        keep = table.cursor_row
        table.clear()
        for st in self.controls.statuses():
            state = Content.styled(st.state, STATE_STYLE.get(st.state, ""))
            table.add_row(plain(st.name), state, st.transport, str(st.tools), str(st.restarts),
                          RETRY.get(st.circuit, st.circuit), key=st.name)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
        self._show_server()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "servers":
            self._show_server()

    def _status(self, name: str | None) -> Any:
        return next((s for s in self.controls.statuses() if s.name == name), None)

    def _show_server(self) -> None:
        name = self.selected()
        st = self._status(name)
        detail = self.query_one("#detail", Static)
        tools = self.query_one("#tools", DataTable)
        keep = tools.cursor_row
        tools.clear()
        if st is None:
            detail.update("no MCP servers are configured: a adds one (or add [servers.NAME] "
                          "to the config)")
            return
        if name != self._shown:  # another server: its pane starts at its state
            self._shown = name
            self.query_one("#detail-pane", VerticalScroll).scroll_home(animate=False)
        detail.update(plain("\n".join(self._detail_lines(st))))
        detail.set_class(st.state == "failed", "-failed")
        policy = self.controls.policy
        for spec in self.controls.tools_of(st.name):
            standing = policy.standing(spec.server, spec.tool)
            first = clean(spec.description).strip().splitlines()
            tools.add_row(plain(spec.tool), _standing(standing), plain(first[0] if first else ""),
                          key=spec.tool)
        if tools.row_count:
            tools.move_cursor(row=min(keep, tools.row_count - 1))
        elif st.state == "idle":  # in the wide column: the approval one cut it short
            tools.add_row("", "", plain("(starts when a turn needs its tools)"))
        elif st.state != "connected":
            tools.add_row("", "", plain(f"(no tools while {st.state})"))

    def _detail_lines(self, st: Any) -> list[str]:
        """What the pane says of a server: its state, login and errors first (they must
        show without scrolling), then what it told us and its logs, then its calls."""
        lines = [f"{st.state}" + (f" · {st.server_info}" if st.server_info else "")
                 + (f" · protocol {st.protocol}" if st.protocol else "")]
        login = self.controls.login_status(st.name)
        if login is not None:
            hint = "l cancels" if login.startswith("logging in") else "l logs in"
            lines.append(f"login: {login} ({hint})")
        if st.last_error:
            lines.append(f"last error: {st.last_error}")
        if st.circuit == "open":
            lines.append("retries paused after failures in a row: calls fail at once until "
                         "the next try (r reconnects now)")
        if st.held_back:
            lines.append("not offered to the model:")
            lines += [f"  {why}" for why in st.held_back]
        if st.instructions:
            lines.append("instructions (the model reads them):")
            lines += [f"  {line}" for line in st.instructions.splitlines()]
        if st.stderr:
            lines.append("stderr (last lines):")
            lines += [f"  {line}" for line in st.stderr]
        if st.logs:
            lines.append("server log (last lines):")
            lines += [f"  {line}" for line in st.logs]
        if st.log_file:
            lines.append(f"log: {st.log_file}")
        stats = self.controls.stats().get("servers", {}).get(st.name)
        if stats and (stats["calls"] or stats.get("restarts") or stats.get("breaker_trips")):
            lines.append(f"calls: {summary(stats)}")
            lines += [f"  {tool}: {summary(t)}" for tool, t in stats["tools"].items()]
        return lines

    def _say(self, text: str) -> None:
        self.query_one("#message", Static).update(plain(text))

    def action_add(self) -> None:
        if self.controls.add is None:
            self._say("servers cannot be added here")
            return
        from tui_agent.ui.screens.add_server import AddServerScreen

        def added(said: str | None) -> None:
            if said:
                self._say(said)
                self.refresh_data()

        self.app.push_screen(AddServerScreen(self.controls.add), added)

    def action_reconnect(self) -> None:
        name = self.selected()
        if name is not None:
            self.controls.reconnect(name)
            self._say(f"reconnecting {name}")

    def action_login(self) -> None:
        name = self.selected()
        if name is not None:
            self._say(self.controls.login(name))
            self.refresh_data()
            app = self.app  # the outcome is told wherever the person is by then
            app.run_worker(self._tell_login(app, name), group="logins", exit_on_error=False)

    async def _tell_login(self, app: Any, name: str) -> None:
        """How the login ended: a notification, and this screen's message line."""
        ended = await self.controls.login_outcome(name)
        if ended is None:
            return
        ok, said = ended
        app.notify(said, title="login", severity="information" if ok else "error",
                   markup=False, timeout=8 if ok else 15)
        if app.screen is self:
            self._say(said)
            self.refresh_data()

    async def action_enable(self) -> None:
        name = self.selected()
        if name is not None:
            problem = await self.controls.enable(name)
            self._say(problem or f"{name} enabled for this session")
            self.refresh_data()

    async def action_disable(self) -> None:
        name = self.selected()
        if name is not None:
            await self.controls.disable(name)
            self._say(f"{name} disabled for this session")
            self.refresh_data()

    def _tool(self) -> tuple[str, str, str] | None:
        server = self.selected()
        tools = self.query_one("#tools", DataTable)
        if server is None or not tools.row_count:
            return None
        tool = str(tools.coordinate_to_cell_key(Coordinate(tools.cursor_row, 0)).row_key.value)
        spec = next((s for s in self.controls.tools_of(server) if s.tool == tool), None)
        return server, tool, spec.fingerprint if spec else ""

    def _set(self, standing: Standing) -> None:
        picked = self._tool()
        if picked is None:
            return
        server, tool, fp = picked
        problem = self.controls.policy.set_standing(server, tool, standing, fp)
        self._say(problem or f"{tool}: {standing}")
        self._show_server()

    def action_toggle_auto(self) -> None:
        picked = self._tool()
        if picked is not None:
            now = self.controls.policy.standing(picked[0], picked[1])
            self._set("ask" if now == "auto" else "auto")

    def action_toggle_allowed(self) -> None:
        picked = self._tool()
        if picked is not None:
            now = self.controls.policy.standing(picked[0], picked[1])
            self._set("ask" if now == "not allowed" else "not allowed")


async def _nothing() -> None:
    return None


def _standing(standing: Standing) -> Content:
    style = {"auto": "$success", "ask": "$warning", "not allowed": "$error"}[standing]
    return Content.styled(standing, style)
