"""A running tui-agent behind a front end that stays open: its settings, policy, hub,
agent and session, and what the front end may ask of them (switch the model or a
server, reload the config, start a conversation, list resources and prompts).

No Textual here: the chat app calls these methods and renders what comes back, so
the same logic serves ``--demo`` and a real model. Every part is made by
:mod:`tui_agent.wiring.build`. MCP (the hub) is imported in a thread, so that the
caller's event loop keeps drawing; litellm when the first turn needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tui_agent.codemode import spare
from tui_agent.config import Settings
from tui_agent.core.filters import ToolFilter
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import Gate, Policy
from tui_agent.core.session import Conversation, SessionWriter, load
from tui_agent.core.session.listing import SessionInfo, list_sessions
from tui_agent.wiring import build
from tui_agent.wiring.app_logins import AppLogins
from tui_agent.wiring.model_choice import ModelChoice
from tui_agent.wiring.notify import notifying_ask, notifying_review
from tui_agent.wiring.server_actions import ServerActions
from tui_agent.wiring.subagents import local_agents

T = TypeVar("T")

if TYPE_CHECKING:
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.connection import ServerStatus
    from tui_agent.tools.elicit import Ask
    from tui_agent.tools.hub import Changes, Hub
    from tui_agent.tools.news import LogLine
    from tui_agent.tools.sampling import Confirm, Review

PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
                 "MISTRAL_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
                 "AZURE_API_KEY", "TOGETHERAI_API_KEY", "COHERE_API_KEY")
"""Keys litellm reads from the environment, shown on the first-run screen."""


@dataclass
class Options:
    """How the app was started (the command line, after the config is loaded)."""

    settings: Settings
    demo: bool = False
    resume: str | None = None
    """A session id or prefix, or ``LATEST``."""
    notes_dir: Path | None = None
    tool_filter: ToolFilter = field(default_factory=ToolFilter)
    """``--servers``, ``--tools`` and their ``--exclude-`` forms: where each conversation's
    ``/tools`` switches start from."""


def keys_in_env(env: dict[str, str] | None = None) -> list[str]:
    source = os.environ if env is None else env
    return [k for k in PROVIDER_KEYS if source.get(k)]


class Runtime(ServerActions):
    """The parts of one running app, made from :class:`Options` and the front end's gate."""

    def __init__(self, options: Options, gate: Gate, ask: Ask | None = None,
                 sampling: tuple[Review, Confirm] | None = None) -> None:
        from tui_agent.tools.frontdesk import FrontDesk

        self.options = options
        self.settings = options.settings
        self.desk = FrontDesk(ask=notifying_ask(ask, lambda: self.agent), project=Path.cwd(),
                              shared_roots=list(self.settings.config.agent.roots))
        """What the app offers servers beyond their tools: the person, the model (through
        the person), the roots."""
        self.policy: Policy = build.policy_from(self.settings, options.tool_filter)
        self.hub: Hub | None = None
        self.ready = asyncio.Event()
        self.listeners: list[Callable[[ServerStatus], None]] = []
        self.log_listeners: list[Callable[[LogLine], None]] = []
        """Told each line a server logs."""
        self.resource_listeners: list[Callable[[str, str], None]] = []
        """Told ``(server, uri)`` when a watched resource changed."""
        self.login_pages: list[Callable[[str, str], None]] = []
        """Told ``(server, url)`` when a login a person asked for wants its page shown."""
        self.logins: Logins | None = None
        self.app_logins = AppLogins(lambda: (self.hub, self.logins))
        self.models = ModelChoice(lambda: self.settings, demo=options.demo)
        """``/model`` and ``/think``: what the person chose over the settings."""
        self.agent = build.agent(self.settings, self.models.make(), gate, self.policy)
        if sampling is not None:
            from tui_agent.tools.sampling import Sampler

            review, confirm = sampling
            self.desk.sampler = Sampler(notifying_review(review, lambda: self.agent), confirm,
                                        build.sampling_complete(
                lambda: self.settings, lambda: self.agent.llm.model,
                lambda: self.settings.secrets, self.models.settings_for))
        self.resumed: Conversation | None = None
        self._hooks_running: set[asyncio.Task[Any]] = set()

    # -- model ------------------------------------------------------------------

    @property
    def model_name(self) -> str | None:
        return self.agent.llm.model

    def has_model(self) -> bool:
        return bool(self.model_name)

    def set_model(self, name: str, api_base: str | None = None) -> None:
        """Use ``name`` from the next turn on, with its own settings (``[models]``), and
        at ``api_base`` when one is given (for the rest of the run). Raises
        ``ConfigError`` (and keeps the model in use) when its ``[models]`` table cannot be
        used (a variable it names is not set)."""
        self.settings.check(name)
        self.models.chosen = name
        if api_base is not None:
            self.models.api_bases[name] = api_base
            self._mask_servers()
        self._use_model()

    def _mask_servers(self) -> None:
        """The credentials in the URLs given with ``/model NAME URL`` join the secrets
        masked in the status bar, errors, ``/servers`` and the session file (also after
        a reload, whose settings are new)."""
        found: set[str] = set()
        for url in self.models.api_bases.values():
            found |= self.settings.mask_url_secrets(url)
        if found and self.agent.session is not None:
            self.agent.session.mask_also(found)

    def set_reasoning_effort(self, level: str | None) -> None:
        """``/think``: think at ``level`` from the next turn on, whichever model is chosen
        later (None: each model's own setting)."""
        self.models.reasoning_effort = level
        self._use_model()

    @property
    def reasoning_effort(self) -> str | None:
        """The reasoning level the next turn asks for (None: the provider's default)."""
        return self.models.settings_for(None).reasoning_effort

    def _use_model(self) -> None:
        self.agent.llm = self.models.make()
        self._use_prompt()
        if isinstance(self.agent.llm, LLM):
            from tui_agent.core.llm import preload

            preload()

    def _use_prompt(self) -> None:
        """The system prompt's own parts as the model in use is configured."""
        model = self.models.settings_for(None)
        self.agent.system_prompt = model.system_prompt
        self.agent.prompt.append = model.append_system_prompt

    def _remake_model(self, new: Settings) -> None:
        """The model (and its system prompt) after a reload; one picked with ``/model``
        whose ``[models]`` table the edit broke keeps the settings it had, with a warning
        saying why."""
        from tui_agent.config import ConfigError

        try:
            self._use_prompt()
            self.agent.llm = self.models.make()
        except ConfigError as exc:
            new.warnings.append(f"{self.models.name()} keeps the settings it had: {exc}")

    def model_choices(self) -> list[str]:
        return self.models.choices()

    # -- servers ----------------------------------------------------------------

    async def start(self) -> None:
        """Find the skills (in a thread: files are read) and start the MCP servers in the
        background (mcp is imported in a thread first)."""
        try:
            await asyncio.to_thread(build.local_skills, self.settings, self.agent.skills)
            await asyncio.to_thread(local_agents, self.settings, self.agent, None,
                                    self.models.settings_for)
            if self.settings.config.servers:
                await asyncio.to_thread(importlib.import_module, "tui_agent.tools.hub")
                # The hub's handlers import ``mcp`` itself, whose client imports the SDK's
                # server side too: seconds of imports, here rather than on the UI's loop.
                await asyncio.to_thread(importlib.import_module, "mcp")
                self.logins = await asyncio.to_thread(build.open_logins, self._show_login)
                logins = self.logins
                self.hub = build.open_hub(self.settings, with_disabled=True,
                                          logins=lambda: logins, desk=self.desk)
            if self.hub is not None:
                for listener in self.listeners:
                    self.hub.subscribe(listener)
                self.hub.log_listeners.extend(self.log_listeners)
                self.hub.resource_listeners.extend(self.resource_listeners)
                self.hub.start()
                self.agent.tools = self.hub
            if isinstance(self.agent.llm, LLM) and self.agent.llm.model:
                from tui_agent.core.llm import preload

                preload()
        finally:
            self.ready.set()

    async def reconfigure(self, options: Options) -> Changes:
        """Apply a config reloaded from disk, from the next turn on: the model settings
        (a model picked with ``/model`` stays), ``[agent]``, ``[code_mode]``, the approval
        rules, the hooks, and the servers (added ones start, removed ones stop, changed
        ones restart; one whose definition did not change keeps running as it is, even if
        only its approval lists changed, or the user switched it off in the servers
        screen)."""
        from tui_agent.tools.hub import Changes, same_server

        old, new = self.settings, options.settings
        self.options, self.settings = options, new
        self._mask_servers()
        fresh = build.policy_from(new, options.tool_filter)
        self.policy.rules, self.policy.persist = fresh.rules, fresh.persist
        self.policy.permission, self.policy.rule_files = fresh.permission, fresh.rule_files
        self.policy.read_only = fresh.read_only
        agent = self.agent
        if agent.session is not None:
            agent.session.mask_also(new.secrets)
        agent.settings = new.config.agent
        roots_moved = self.desk.shared_roots != new.config.agent.roots
        self.desk.shared_roots = list(new.config.agent.roots)
        agent.code_mode = build.code_mode(new)
        agent.scopes = build.file_scopes(new, Path.cwd())
        agent.hooks = build.hooks_from(new, Path.cwd())  # checked as the config was read
        if (old.config.model, old.config.models) != (new.config.model, new.config.models):
            self._remake_model(new)
        if self.hub is None:
            if not new.config.servers:
                return Changes()
            await asyncio.to_thread(importlib.import_module, "tui_agent.tools.hub")
            logins = self.logins = self.logins or build.open_logins(self._show_login)
            self.hub = build.open_hub(new, with_disabled=True, logins=lambda: logins,
                                      desk=self.desk)
            assert self.hub is not None
            for listener in self.listeners:
                self.hub.subscribe(listener)
            self.hub.log_listeners.extend(self.log_listeners)
            self.hub.resource_listeners.extend(self.resource_listeners)
            self.hub.start()
            agent.tools = self.hub
            return Changes(added=list(new.config.servers))
        running = self.hub.connections
        target = {
            name: running[name].config
            if name in running and name in old.config.servers
            and same_server(old.config.servers[name], config) else config
            for name, config in new.config.servers.items()}
        self.hub.unready = dict(new.unready)  # a server (re)made now is refused by these
        changes = await self.hub.apply(target)
        if roots_moved:
            await self.hub.roots_changed()
        return changes

    async def add_dir(self, folder: str) -> str:
        """``/add-dir``: ``folder`` (made absolute) added to ``[agent] roots`` for this
        session, as ``--add-dir`` does: the model's file scopes and the roots every server
        is offered grow, and the servers are told. The folder as added. Raises
        ``ConfigError`` naming a folder that is missing or a file."""
        from tui_agent.config import ConfigError

        path = Path(os.path.abspath(os.path.expanduser(folder)))
        if not path.exists():
            raise ConfigError(f"/add-dir {folder}: no such folder ({path})")
        if not path.is_dir():
            raise ConfigError(f"/add-dir {folder}: {path} is a file, not a folder")
        before = list(self.settings.config.agent.roots)
        self.settings.add_dirs([path])
        roots = list(self.settings.config.agent.roots)
        added = next((r for r in roots if r not in before), "")
        if added:
            self.desk.shared_roots = roots
            self.agent.scopes = build.file_scopes(self.settings, Path.cwd())
            if self.hub is not None:
                await self.hub.roots_changed()
        return added or str(path)

    # -- conversations ----------------------------------------------------------

    def ensure_session(self) -> SessionWriter:
        if self.agent.session is None:
            self.agent.session = build.new_session(self.settings, self.model_name)
        return self.agent.session

    def new_conversation(self, history: Conversation | None = None) -> None:
        self.save_metrics()
        old = self.agent
        if old.session is not None:  # SessionEnd, then SessionStart: hooks
            self._later(old.session_end("clear"))
            with contextlib.suppress(OSError):
                old.session.close()
        self.agent = build.agent(self.settings, old.llm, old.gate, self.policy,
                                 tools=old.tools, history=history, skills=old.skills)
        self.agent.subagents = old.subagents.fresh()
        self.agent.usage = history.usage if history else self.agent.usage
        self.policy.filter = self.options.tool_filter  # /tools switches are per conversation
        if history is not None:
            self.agent.session = build.resumed_session(self.settings, history)
        self.resumed = history
        self.agent.starting = self._later(self.agent.session_start(
            "resume" if history is not None else "clear"))

    def _later(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T] | None:
        """Run a hook event in the background (a sync caller: the app's /clear); its
        task, or None without a running loop."""
        try:
            task = asyncio.get_running_loop().create_task(work)
        except RuntimeError:  # no loop running (a test building the runtime alone)
            work.close()
            return None
        self._hooks_running.add(task)
        task.add_done_callback(self._hooks_running.discard)
        return task

    def resume(self, ref: str | None) -> Conversation:
        """Load a saved conversation (None: the latest) and continue it. Raises
        ``SessionError`` naming what was wrong."""
        conv = load(build.sessions().find(ref), self.settings.secrets)
        self.new_conversation(conv)
        return conv

    def current(self) -> Conversation | None:
        """The conversation going on, as its file holds it (None: nothing said yet).
        Reads the file: call it in a thread."""
        session = self.agent.session
        if session is None or session.blank:
            return None
        session.sync()
        return load(session.path, self.settings.secrets)

    def branch(self, conv: Conversation, index: int) -> Conversation:
        """``/rewind``: go on in a new branch of ``conv`` holding its messages before
        ``index`` (the old file kept). Raises ``SessionError``."""
        from tui_agent.core.session.branch import branch

        new = branch(conv, index, build.sessions(), self.settings.secrets)
        self.new_conversation(new)
        return new

    def sessions(self) -> list[SessionInfo]:
        """The saved conversations, newest first, with their dates, folders and titles
        (this config's secrets masked in them). Reads files: call it in a thread."""
        return list_sessions(build.sessions(), self.settings.secrets)

    def stats(self) -> dict[str, Any]:
        """The servers' call metrics so far (``Hub.stats``)."""
        return self.hub.stats() if self.hub is not None else {"servers": {}}

    def save_metrics(self) -> None:
        """The servers' call metrics so far, beside the conversation's session file."""
        build.save_metrics(self.hub, self.agent.session)

    async def close(self) -> None:
        await self.agent.session_end("prompt_input_exit")  # SessionEnd hooks: the app quits
        await spare.close()
        if self.agent.session is not None:
            with contextlib.suppress(OSError):
                self.agent.session.close()
        if self.hub is not None:
            await self.hub.close()
            self.save_metrics()
