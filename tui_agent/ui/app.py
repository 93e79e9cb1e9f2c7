"""The Textual app: :class:`~tui_agent.ui.chat.ChatApp` with its key bindings, the slash
commands (typed, bound to keys, or from the command palette) and live reload of the
config files."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from textual import work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from tui_agent.config import paths
from tui_agent.ui.chat import ChatApp
from tui_agent.ui.startup import Startup
from tui_agent.ui.widgets.prompt import PromptInput

if TYPE_CHECKING:
    from textual.timer import Timer

    from tui_agent.config.watch import Watch
    from tui_agent.ui.commands import Command
    from tui_agent.wiring.runtime import Options


class AgentApp(ChatApp):
    """``tui-agent``: a chat with one model, its MCP tools, and the approval gate."""

    TITLE = "tui-agent"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses find it too
    BINDINGS = [
        Binding("escape", "stop", "Stop", show=False),
        Binding("ctrl+c", "interrupt", show=False, system=True),
        Binding("ctrl+s", "command('servers')", "Servers"),
        Binding("ctrl+t", "command('model')", "Model"),
        Binding("ctrl+n", "command('new')", "New"),
        Binding("ctrl+l", "command('clear')", "Clear", show=False),
        Binding("f1", "command('help')", "Help"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, start: Options | Startup) -> None:
        super().__init__(start)
        self.config_watch: Watch | None = None
        self.reload_error: str | None = None
        """Why the config on disk is not applied (an invalid edit), until it is fixed."""
        self._reload_timer: Timer | None = None
        self._reloading = False
        self._applying = False
        """A reload is starting and stopping servers (a quit waits for it to finish)."""

    # -- commands ---------------------------------------------------------------------

    async def backend_started(self) -> None:
        """The commands from files are read (off the UI thread) and offered."""
        from tui_agent.ui import user_commands

        await user_commands.load(self)

    def on_prompt_input_menu_opened(self) -> None:
        """The ``/`` menu opened: it offers the command files as they are now."""
        self.run_worker(self._commands_refreshed(), group="commands", exclusive=True,
                        exit_on_error=False)

    async def _commands_refreshed(self) -> None:
        from tui_agent.ui import user_commands

        before = self.user_commands
        await user_commands.refresh(self)
        if self.user_commands is not before:
            self.chat.query_one(PromptInput).refresh_menu()

    def prompts_listed(self) -> None:
        from tui_agent.ui import user_commands

        user_commands.offer(self)

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        # The commands and what they do are imported with the first use, not on the way to
        # the first frame.
        from tui_agent.ui.commands import CommandError, parse, unescape
        from tui_agent.wiring.user_commands import run as user_command

        if event.text.startswith("/"):
            from tui_agent.ui import user_commands

            await user_commands.refresh(self)  # a command file added since counts
        found = user_command(self.user_commands, event.text)  # never a built-in's name
        if found is not None:
            from tui_agent.ui import user_commands

            await user_commands.run(self, *found, typed=event.text)
            return
        try:
            command = parse(event.text)
        except CommandError as exc:
            await self.transcript.note(str(exc), "error")
            self._give_back(event.text)
            return
        if command is not None:
            await self.run_command(command)
            return
        await self.loaded.wait()
        if await self.turns.refused(event.text):
            return
        from tui_agent.ui import composer  # attachments and Markdown: not on the first frame

        files = await composer.outgoing(self, unescape(event.text))
        if files is not None:
            await self.send(files.text, files)

    def _give_back(self, text: str) -> None:
        """What was typed goes back into the prompt (a command that could not run), to be
        corrected rather than typed again; unless something new was typed meanwhile."""
        prompt = self.chat.query_one(PromptInput)
        if not prompt.text.strip():
            prompt.load_text(text)
            prompt.move_cursor(prompt.document.end)

    async def on_prompt_input_file_wanted(self, event: PromptInput.FileWanted) -> None:
        from tui_agent.ui import composer

        await composer.pick_file(self)

    async def on_prompt_input_image_pasted(self, event: PromptInput.ImagePasted) -> None:
        await self.loaded.wait()
        from tui_agent.ui import composer

        await composer.attach_image(self, event.path, event.path.name)

    async def on_prompt_input_editor_wanted(self, event: PromptInput.EditorWanted) -> None:
        from tui_agent.ui import composer

        await composer.edit_prompt(self)

    def action_interrupt(self) -> None:
        """Ctrl-C, which a terminal's user presses to stop what runs: the reply in flight
        stops, as with esc. Otherwise (or over a modal, whose own keys answer it) it says
        how to quit, as Textual does. A selection in the prompt is copied first (the
        prompt takes ctrl+c when it has one)."""
        if self.turn_running() and len(self.screen_stack) == 1:
            self.action_stop()
        else:
            self.action_help_quit()

    async def action_cycle_mode(self) -> None:
        """Shift+tab: the next permission mode (default → plan → auto)."""
        from tui_agent.ui import modes

        await modes.cycle(self)

    async def action_command(self, name: str) -> None:
        from tui_agent.ui.commands import Command

        await self.run_command(Command(name))

    async def run_command(self, command: Command) -> None:
        from tui_agent.ui import actions

        await self.loaded.wait()
        await actions.run(self, command)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        from tui_agent.ui.commands import COMMANDS, Command

        yield from super().get_system_commands(screen)
        for info in COMMANDS:
            async def callback(name: str = info.name) -> None:
                await self.run_command(Command(name))

            yield SystemCommand(f"/{info.name}", info.help, callback)
        from tui_agent.ui import user_commands

        yield from user_commands.palette(self)
        yield from self._prompt_commands()

    def _prompt_commands(self) -> Iterable[SystemCommand]:
        """Each server's prompts, as ``/server:prompt``; one that takes arguments asks for
        them in a form. (The palette reads markup: the server's text is escaped.)"""
        from textual.markup import escape

        from tui_agent.tools.text import clean
        from tui_agent.ui.commands import Command

        for ref, description in self.prompt_list:
            server, _, name = ref.partition(":")

            async def callback(server: str = server, name: str = name) -> None:
                await self.run_command(Command("prompt", server=server, prompt=name, ask=True))

            about = next(iter(clean(description).strip().splitlines()), "")[:200]
            yield SystemCommand(escape(f"/{clean(ref)}"),
                                escape(f"MCP prompt of {clean(server)}"
                                       + (f": {about}" if about else "")), callback)

    # -- live reload ------------------------------------------------------------------

    def config_loaded(self, options: Options) -> None:
        """Poll the files this config came from (and the user config, even if absent);
        the prompt history masks the reloaded config's secrets."""
        from tui_agent.config.watch import Watch

        self.prompt_history.secrets = options.settings.secrets
        files = [*options.settings.files, paths.default_config_file()]
        self.config_watch = Watch(files)
        if self._reload_timer is None:
            self._reload_timer = self.set_interval(RELOAD_EVERY, self._poll_config)

    def _poll_config(self) -> None:
        if (self._reloading or self.config_watch is None or self._shutting_down
                or not self.config_watch.changed()):
            return
        self._reloading = True
        self.reload_config()

    def reload_now(self) -> None:
        """Apply the config files at once, not at the next poll: the app itself just
        wrote one (``/mcp add``). Marked as the watcher marks it: one reload, not two."""
        self._reloading = True
        self.reload_config()

    @work(group="reload", exit_on_error=False)
    async def reload_config(self) -> None:
        """Apply the config files' new content: servers added, removed or restarted, the
        rest from the next turn. An invalid edit keeps the last good config and says what
        is wrong (file, line) until it is fixed. (A worker: a project whose servers
        changed asks again.)"""
        from tui_agent.config import ConfigError

        assert isinstance(self.start, Startup)
        self._reloading = True
        try:
            try:
                options = await asyncio.to_thread(self.start.options)
                options = await self._ask_about_project(options)
            except ConfigError as exc:
                self.status.config_error = True
                if str(exc) != self.reload_error:
                    self.reload_error = str(exc)
                    await self.transcript.note(f"the config was edited but not applied; the "
                                               f"last good one stays: {exc}", "error")
                return
            previous = self.options.settings
            old = previous.config
            self._applying = True
            try:
                changes = await self.backend.reconfigure(options)
            finally:
                self._applying = False
            self.options = options
            self.config_loaded(options)
            new = options.settings.config
            if new.ui.theme != old.ui.theme:
                self._use_theme(new.ui.theme)
            self.show_model()
            self.status.code_mode = new.code_mode.enabled
            self.listeners.refresh_servers()
            said = [f"{what} {', '.join(names)}" for what, names in (
                ("started", changes.added), ("stopped", changes.removed),
                ("restarted", changes.restarted)) if names]
            said += [f"[{section}] applied" for section in ("model", "models", "agent",
                                                            "code_mode", "ui")
                     if getattr(old, section) != getattr(new, section)]
            fixed = self.reload_error is not None
            self.reload_error, self.status.config_error = None, False
            if said or fixed:
                head = "the config is valid again" if fixed else "config reloaded"
                await self.transcript.note(f"{head}: {'; '.join(said) or 'nothing changed'}")
            for warning in options.settings.warnings:
                if warning not in previous.warnings:
                    await self.transcript.note(warning, "warning")
        finally:
            self._reloading = False

    async def before_shutdown(self) -> None:
        """A reload waiting for the project question is cancelled; one that is starting
        and stopping servers is waited for, so that none it started is left running."""
        reloads = [w for w in self.workers if w.group == "reload" and w.is_running]
        if reloads and not self._applying:
            for worker in reloads:
                worker.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RELOAD_GRACE):
                for worker in reloads:
                    with contextlib.suppress(Exception):
                        await worker.wait()


RELOAD_EVERY = 0.5
"""Seconds between looks at the config files (an edit applies within about a second)."""
RELOAD_GRACE = 12.0
"""Seconds a quit waits for a reload that is starting and stopping servers."""


def run_app(start: Options | Startup, err: IO[str] | None = None) -> int:
    """Run the app; a config it could not load is printed once the terminal is back."""
    app = AgentApp(start)
    code = app.run()
    if app.config_error is not None:
        (err or sys.stderr).write(f"tui-agent: {app.config_error}\n")
        return 2
    return code if isinstance(code, int) else 0

