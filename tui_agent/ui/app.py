"""The Textual app: the chat screen, its commands, and the workers that run turns.

The first frame needs only Textual and our config: MCP is imported in a thread
once the screen is up, litellm when a turn needs it, Markdown when the first
reply arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from contextlib import aclosing
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

from tui_agent.config import paths
from tui_agent.core.approval import PendingCall
from tui_agent.core.events import TurnDone
from tui_agent.ui.backend import Backend, Options
from tui_agent.ui.commands import COMMANDS, Command, CommandError, parse, unescape
from tui_agent.ui.gate import ModalGate
from tui_agent.ui.themes import DEFAULT_THEME, bundled_files, load_all, user_files
from tui_agent.ui.widgets.prompt import PromptHistory, PromptInput
from tui_agent.ui.widgets.status import ServerCount, StatusBar
from tui_agent.ui.widgets.transcript import Transcript


class ChatScreen(Screen[None]):

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield PromptInput(PromptHistory(paths.state_dir() / "prompt-history.jsonl"), id="prompt")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PromptInput).focus()


class AgentApp(App[int]):
    """``tui-agent``: a chat with one model, its MCP tools, and the approval gate."""

    TITLE = "tui-agent"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses find it too
    BINDINGS = [
        Binding("escape", "stop", "Stop", show=False),
        Binding("ctrl+s", "command('servers')", "Servers"),
        Binding("ctrl+t", "command('model')", "Model"),
        Binding("ctrl+n", "command('new')", "New"),
        Binding("ctrl+l", "command('clear')", "Clear", show=False),
        Binding("f1", "command('help')", "Help"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, options: Options) -> None:
        super().__init__()
        self.options = options
        self.backend = Backend(options, ModalGate(self, remember_in=self._remember_in,
                                                  on_waiting=self._waiting))
        self.backend.listeners.append(self._server_changed)
        self.attachments: list[str] = []
        self.prompt_list: list[tuple[str, str]] = []
        self.theme_problems: list[str] = []
        self.turns_ended = 0
        """Turns finished, failed or stopped (tests and benchmarks wait on it)."""

    def get_default_screen(self) -> Screen[None]:
        self.chat = ChatScreen()
        return self.chat

    # -- widgets of the chat screen -----------------------------------------------

    @property
    def transcript(self) -> Transcript:
        return self.chat.query_one(Transcript)

    @property
    def status(self) -> StatusBar:
        return self.chat.query_one(StatusBar)

    # -- start-up ---------------------------------------------------------------------

    def on_mount(self) -> None:
        self._load_themes()

    def on_ready(self) -> None:
        """The first frame is up: now start what is slow (MCP servers, then litellm)."""
        self.status.model = self.backend.model_name or "no model"
        self.status.code_mode = self.options.settings.config.code_mode.enabled
        self.transcript.script_servers = self._script_servers
        self.start_backend()
        self.call_after_refresh(self._greet)

    def _script_servers(self) -> list[str]:
        code = self.backend.agent.code_mode
        return code.bound_servers() if code is not None else []

    def _load_themes(self) -> None:
        themes, self.theme_problems = load_all(
            [*bundled_files(), *user_files(paths.config_dir() / "themes")])
        for theme in themes:
            self.register_theme(theme)
        wanted = self.options.settings.config.ui.theme
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self.theme_problems.append(f"[ui] theme: no theme named '{wanted}'; using "
                                       f"{DEFAULT_THEME} (/theme lists them)")
            self.theme = DEFAULT_THEME

    async def _greet(self) -> None:
        from tui_agent.ui.widgets.welcome import welcome

        for problem in [*self.options.settings.warnings, *self.theme_problems]:
            await self.transcript.note(problem, "warning")
        if self.options.resume is not None:
            await self.resume(self.options.resume)
        elif not self.backend.has_model() or self.options.demo:
            await self.transcript.add(welcome(self.options.demo))
            if self.options.demo:
                self.query_one(PromptInput).load_text("Show me around")

    @work(group="backend", exit_on_error=False)
    async def start_backend(self) -> None:
        await self.backend.start()
        self._refresh_servers()
        if self.backend.hub is not None:
            await self.backend.hub.wait_all()
            self.prompt_list = await self.backend.prompts()

    def _server_changed(self, _status: object) -> None:
        self._refresh_servers()
        top = self.screen
        refresh = getattr(top, "refresh_data", None)
        if refresh is not None:
            refresh()

    def _refresh_servers(self) -> None:
        self.status.servers = ServerCount.of([(s.state, s.tools)
                                              for s in self.backend.statuses()])

    def _remember_in(self, server: str) -> str | None:
        origin = self.options.settings.origins.get(server)
        return origin.file.name if origin else None

    def _waiting(self, call: PendingCall) -> None:
        self.transcript.waiting(call.id)

    # -- sending ----------------------------------------------------------------------

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        try:
            command = parse(event.text)
        except CommandError as exc:
            await self.transcript.note(str(exc), "error")
            return
        if command is not None:
            await self.run_command(command)
            return
        await self.send(unescape(event.text))

    async def send(self, text: str) -> None:
        if self._turn_running():
            self.notify("a reply is still coming: esc stops it", severity="warning")
            return
        if not self.backend.has_model():
            from tui_agent.core.llm import NO_MODEL_HELP

            await self.transcript.note(NO_MODEL_HELP.replace("no model is configured",
                                                             "No model yet"), "warning")
            return
        await self.transcript.user(text + "".join(f"\n📎 {a}" for a in self.attachments))
        self.run_turn(text, list(self.attachments))
        self.attachments.clear()

    def _turn_running(self) -> bool:
        return any(w.group == "turn" and w.is_running for w in self.workers)

    @work(group="turn", exclusive=True, exit_on_error=False)
    async def run_turn(self, text: str, attachments: list[str]) -> None:
        transcript, status = self.transcript, self.status
        status.activity = "working… (esc stops)"
        try:
            await self.backend.ready.wait()
            blocks = [await self.backend.attachment(ref) for ref in attachments]
            self.backend.ensure_session()
            agent = self.backend.agent
            async with aclosing(agent.run_turn("\n\n".join([*blocks, text]))) as events:
                async for event in events:
                    await transcript.show(event)
                    if isinstance(event, TurnDone):
                        status.usage = agent.usage
        except asyncio.CancelledError:
            await transcript.cancelled()
            status.usage = self.backend.agent.usage
            raise
        except Exception as exc:  # a failure of ours ends the turn, visibly, not the app
            await transcript.note(f"the turn failed: {type(exc).__name__}: {exc}", "error")
        finally:
            status.activity = ""
            self.turns_ended += 1

    def action_stop(self) -> None:
        for worker in self.workers:
            if worker.group == "turn" and worker.is_running:
                worker.cancel()

    # -- commands ---------------------------------------------------------------------

    async def action_command(self, name: str) -> None:
        await self.run_command(Command(name))

    async def run_command(self, command: Command) -> None:
        from tui_agent.ui import actions

        await actions.run(self, command)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for info in COMMANDS:
            async def callback(name: str = info.name) -> None:
                await self.run_command(Command(name))

            yield SystemCommand(f"/{info.name}", info.help, callback)

    async def resume(self, ref: str) -> None:
        from tui_agent.core.session import SessionError
        from tui_agent.headless import LATEST

        self.action_stop()
        try:
            conv = self.backend.resume(None if ref == LATEST else ref)
        except SessionError as exc:
            await self.transcript.note(str(exc), "error")
            return
        await self.transcript.replay(conv.messages)
        self.status.usage = self.backend.agent.usage
        await self.transcript.note(f"resumed {conv.id} ({len(conv.entries)} messages)")

    async def action_quit(self) -> None:
        self.action_stop()
        await self.backend.close()
        self.exit(0)


def run_app(options: Options) -> int:
    app = AgentApp(options)
    code = app.run()
    return code if isinstance(code, int) else 0

