"""The chat itself: start-up (the config loaded after the first frame, the project
question, the servers) and the one way out (quit key, ``/quit``, signals); its screen is
``chat_screen.py``'s.
The app composes its collaborators and routes to them: the turn (send, run, stop,
resume) is ``turn.py``'s, the backend's callbacks (servers, resources, logs, logins)
``listeners.py``'s, the ways out ``chat_exits.py``'s (with ``exits.py``'s helpers).

:class:`~tui_agent.ui.app.AgentApp` adds the slash commands and live reload on top.
The first frame needs only Textual: the config is loaded and validated in a thread
once the screen is up (``Startup``), MCP is imported in a thread after that, litellm
when a turn needs it, Markdown when the first reply arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from typing import TYPE_CHECKING

from textual import work
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import MountError, Widget

from tui_agent.config import paths
from tui_agent.ui import exits, gcpause, textual_fixes
from tui_agent.ui.chat_exits import WaysOut
from tui_agent.ui.chat_screen import ChatScreen
from tui_agent.ui.listeners import Listeners
from tui_agent.ui.startup import Startup
from tui_agent.ui.themes import DEFAULT_THEME, bundled_files, first_themes, load_all
from tui_agent.ui.turn import Turns
from tui_agent.ui.widgets.prompt import PromptHistory, PromptInput
from tui_agent.ui.widgets.status import StatusBar
from tui_agent.ui.widgets.transcript import Transcript

WARM_UP = ("tui_agent.ui.composer", "tui_agent.ui.commands", "tui_agent.ui.actions",
           "tui_agent.ui.screens.files")
"""Modules the first frame does without and the first keys need: imported in a thread
once the config is loaded."""

if TYPE_CHECKING:
    from tui_agent.core.attachments import Attachment, Prepared
    from tui_agent.core.permissions import PendingCall
    from tui_agent.custom.registry import Registry
    from tui_agent.ui.widgets.agent_card import AgentCard
    from tui_agent.wiring.runtime import Options, Runtime


class ChatApp(WaysOut):
    """A chat with one model, its MCP tools, and the approval gate."""

    options: Options
    backend: Runtime

    def __init__(self, start: Options | Startup) -> None:
        """``start``: loaded settings (tests, the demo), or a ``Startup`` whose config is
        loaded once the first frame is drawn; ``options`` and ``backend`` exist once
        ``loaded`` is set, and the commands wait for it."""
        super().__init__()
        textual_fixes.apply()
        exits.harden_driver()
        self.start = start
        self.loaded = asyncio.Event()
        self.config_error: str | None = None
        """Why the config could not be loaded (the app then exits with code 2)."""
        self.attachments: list[str] = []
        self.images: list[Attachment] = []  # /image and pasted images, for the next message
        self.prompt_list: list[tuple[str, str]] = []
        self._user_commands: Registry | None = None
        self.theme_problems: list[str] = []
        self._themes_left = False
        self.turns = Turns(self)
        self.listeners = Listeners(self)
        self._shutting_down = False
        self._signals_seen = 0
        self._hung_up = False
        if not isinstance(start, Startup):
            self._configure(start)

    def _configure(self, options: Options) -> None:
        from tui_agent.ui.gate import ModalAsker, ModalGate, ModalSampler
        from tui_agent.wiring.runtime import Runtime

        self.options = options
        sampler = ModalSampler(self, lambda: self.backend.model_name)
        self.backend = Runtime(options, ModalGate(self, remember_in=self._remember_in,
                                                  on_waiting=self._waiting),
                               ask=ModalAsker(self), sampling=(sampler.review, sampler.confirm))
        self.listeners.attach(self.backend)
        self.loaded.set()

    @property
    def user_commands(self) -> Registry:
        """The commands from files (and skills), once read (``ui/user_commands.py``); none
        before (their reader is not imported on the way to the first frame)."""
        if self._user_commands is None:
            from tui_agent.custom.registry import Registry

            self._user_commands = Registry()
        return self._user_commands

    @user_commands.setter
    def user_commands(self, commands: Registry) -> None:
        self._user_commands = commands

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

    @property
    def prompt_history(self) -> PromptHistory:
        return self.chat.query_one(PromptInput).prompt_history

    # -- start-up ---------------------------------------------------------------------

    def on_mount(self) -> None:
        if not self.is_headless:  # the real terminal, not a test's pilot
            self._install_signal_handlers()
        start = self.start
        self._load_themes(start.theme() if isinstance(start, Startup)
                          else start.settings.config.ui.theme)

    def on_ready(self) -> None:
        """The first frame is drawn: once it is on the terminal, load what is slow (the
        config, then MCP servers in the background; litellm when a turn needs it)."""
        gcpause.first_frame_drawn()
        self.chat.show_footer()
        writer = getattr(self._driver, "_writer_thread", None)
        if not isinstance(writer, exits.SafeWriter):  # a test's headless app
            self.begin()
            return
        loop = asyncio.get_running_loop()
        started = False

        def begin_once() -> None:
            nonlocal started
            if not started:
                started = True
                self.begin()

        def written() -> None:  # from the writer's thread
            with contextlib.suppress(RuntimeError):  # the loop closed: the app has ended
                loop.call_soon_threadsafe(begin_once)

        writer.when_written(written)
        self.set_timer(FRAME_OUT_WITHIN, begin_once)  # a terminal that takes no more

    @work(group="startup")
    async def begin(self) -> None:
        self._load_other_themes()
        if not self.loaded.is_set():
            from tui_agent.config import ConfigError

            assert isinstance(self.start, Startup)
            try:
                options = await asyncio.to_thread(self.start.options)
                options = await self._ask_about_project(options)
            except ConfigError as exc:
                self.config_error = str(exc)
                self.exit(2, return_code=2)
                return
            if self.return_code is not None:  # quit while it loaded: start no servers
                return
            self._configure(options)
            if options.settings.config.ui.theme != self._theme_wanted:
                self._use_theme(options.settings.config.ui.theme)
            self.config_loaded(options)
        self.prompt_history.secrets = self.options.settings.secrets
        self.show_model()
        self.status.code_mode = self.options.settings.config.code_mode.enabled
        self.status.mode = self.options.settings.config.permissions.default_mode
        self.transcript.script_servers = self._script_servers
        self.start_backend()
        self._warm_up()
        try:
            await self._greet()
        except (MountError, NoMatches):  # the screen went away under the greeting
            if self.return_code is None:  # not a quit during start-up
                raise

    @work(thread=True, group="warm-up", exit_on_error=False)
    def _warm_up(self) -> None:
        """Import, in a thread, what the first ``@``, enter and slash command would
        otherwise import on the event loop (kept off the first frame: 10-40 ms each, a
        frame or two of the first keystroke's echo)."""
        for name in WARM_UP:
            importlib.import_module(name)

    def config_loaded(self, options: Options) -> None:
        """The config was loaded (at start-up, or reloaded): a subclass may watch its
        files."""

    async def _ask_about_project(self, options: Options) -> Options:
        from tui_agent.ui.screens.consent import settle_project

        assert isinstance(self.start, Startup)
        return await settle_project(self, self.start, options)

    def _script_servers(self) -> list[str]:
        code = self.backend.agent.code_mode
        return code.bound_servers() if code is not None else []

    def _load_themes(self, wanted: str | None) -> None:
        themes, self.theme_problems, self._themes_left = first_themes(
            wanted or DEFAULT_THEME, paths.config_dir() / "themes")
        for theme in themes:
            self.register_theme(theme)
        self._use_theme(wanted or DEFAULT_THEME)

    def _load_other_themes(self) -> None:
        """Every other shipped theme (for ``/theme``), once the first frame is out."""
        if self._themes_left:
            self._themes_left = False
            themes, problems = load_all(bundled_files())
            self.theme_problems += problems
            for theme in themes:
                if theme.name not in self.available_themes:
                    self.register_theme(theme)

    def _use_theme(self, wanted: str) -> None:
        self._theme_wanted = wanted
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
            panel = welcome(self.options.demo)
            await self.transcript.add(panel)
            self.transcript.call_after_refresh(self._welcome_from_its_title, panel)
            if self.options.demo:
                self.query_one(PromptInput).load_text("Show me around")

    def _welcome_from_its_title(self, panel: Widget) -> None:
        """On a terminal too short for the first-run ``panel``, it is read from its title:
        the anchored view would open at its end (the first message sent brings the view
        down again). Not once anything came after it: the view follows that."""
        transcript = self.transcript
        if transcript.children and transcript.children[-1] is panel \
                and transcript.max_scroll_y > 0:
            transcript.release_anchor()
            transcript.scroll_home(animate=False)

    def show_model(self) -> None:
        """The model in use on the status bar, and whether its cost can be known."""
        self.status.model = self.backend.model_name or "no model"
        self.show_price()
        self._learn_price()

    @work(thread=True, group="price", exit_on_error=False)
    def _learn_price(self) -> None:
        """Read litellm's price file (not litellm: seconds to import) in a thread, then
        show whether the model has a price; called only once the first frame is out."""
        read = getattr(self.backend.agent.llm, "read_price_list", None)
        if read is not None and self.backend.has_model():
            read()
            self.call_from_thread(self.show_price)

    def show_price(self) -> None:
        """Whether the model's cost can be known, as far as it is without blocking (a
        local model's at once, another's once a request learnt it): a model with no
        price says "cost unknown" from the start, not ``$0.0000``."""
        known = getattr(self.backend.agent.llm, "price_known", None)
        self.status.priced = known() if known is not None and self.backend.has_model() \
            else None

    @work(group="backend", exit_on_error=False)
    async def start_backend(self) -> None:
        await self.backend.start()
        from tui_agent.core.skills.report import tilde

        if self.options.resume is None:  # a resumed one fired "resume" as it was loaded
            for event in await self.backend.agent.session_start("startup"):  # its hooks
                await self.transcript.note(getattr(event, "message", ""), "warning")

        for problem in self.backend.agent.skills.problems:
            await self.transcript.note(f"skill not offered: {tilde(problem)}", "warning")
        from tui_agent.ui import agent_actions

        await agent_actions.tell_problems(self)
        self.listeners.refresh_servers()
        await self.backend_started()
        if self.backend.hub is not None:
            await self.backend.hub.wait_all()
            self.prompt_list = await self.backend.prompts()
            from tui_agent.tools.text import clean

            self.chat.query_one(PromptInput).extra_commands = [
                "".join(clean(ref).split()) for ref, _ in self.prompt_list]
            self.prompts_listed()

    async def backend_started(self) -> None:
        """The backend has started (its servers still starting): a subclass reads what
        else it offers then."""

    def prompts_listed(self) -> None:
        """The servers' prompts are in :attr:`prompt_list`."""

    def _remember_in(self, server: str) -> str | None:
        origin = self.options.settings.origins.get(server)
        return origin.file.name if origin else None

    def _waiting(self, call: PendingCall) -> None:
        self.transcript.waiting(call.id, call.agent_id)

    def on_agent_card_stop_asked(self, message: AgentCard.StopAsked) -> None:
        """``x`` on an agent card: that one sub-agent stops (``agent_actions.py``)."""
        from tui_agent.ui import agent_actions

        agent_actions.stop(self, message.card)

    # -- the turn (turn.py) --------------------------------------------------------------

    async def send(self, text: str, files: Prepared | None = None) -> None:
        await self.turns.send(text, files)

    def show_pending(self) -> None:
        self.turns.show_pending()

    def turn_running(self) -> bool:
        return self.turns.running()

    @property
    def turns_ended(self) -> int:
        """Turns finished, failed or stopped (tests and benchmarks wait on it)."""
        return self.turns.ended

    def action_stop(self) -> None:
        self.turns.stop()

    async def resume(self, ref: str) -> None:
        await self.turns.resume(ref)

    @work(group="hooks", exit_on_error=False)
    async def hear_start(self) -> None:
        """Show what the SessionStart hooks of a new conversation (``/clear``, a resume),
        run in the background, say to the person, once they are done."""
        starting = self.backend.agent.starting
        if starting is None:
            return
        await asyncio.wait({starting})
        if not starting.cancelled() and starting.exception() is None:
            for event in starting.result():
                await self.transcript.note(getattr(event, "message", ""), "warning")


FRAME_OUT_WITHIN = 0.5
"""Seconds the loading waits for the first frame to reach the terminal, at most."""
