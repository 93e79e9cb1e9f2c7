"""The composition root: the only place that turns :class:`~tui_agent.config.Settings`
into the running parts (the approval :class:`Policy`, the MCP :class:`Hub`, the model, the
:class:`Agent` with its :class:`CodeMode`, and the :class:`SessionWriter`).

Every front end (the chat app, ``tui-agent run``, the line-mode chat, ``servers`` and
``stubs``) builds its run from these functions, so a new part (an OAuth token store,
the handlers of a server's requests) is added here once and reaches them all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.config import Settings, paths
from tui_agent.config.rule_edit import TomlRuleFiles
from tui_agent.core.agent import Agent
from tui_agent.core.diffs import FileScope, Scopes
from tui_agent.core.filters import ToolFilter
from tui_agent.core.hooks import Hooks
from tui_agent.core.llm import LLM, ChatModel
from tui_agent.core.permissions import ApprovalStore, Gate, Policy, ServerRules
from tui_agent.core.permissions.rules import RuleSet
from tui_agent.core.scripts import CodeMode
from tui_agent.core.session import Conversation, SessionStore, SessionWriter, load
from tui_agent.core.skills.catalog import Catalog
from tui_agent.custom.hooks import parse_hooks
from tui_agent.tools.local import NoTools
from tui_agent.tools.metrics import write_report
from tui_agent.tools.roots import roots_of
from tui_agent.tools.spec import ToolSource

if TYPE_CHECKING:
    from tui_agent.config.models import ModelSettings
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.frontdesk import FrontDesk
    from tui_agent.tools.hub import Hub
    from tui_agent.tools.sampling import Complete, SampleRequest

LATEST = "\0latest"
"""``--resume`` given without an id: the latest conversation."""


def policy_from(settings: Settings, tool_filter: ToolFilter | None = None) -> Policy:
    """The config's per-server rules. "Always allow" answers are written back to the file
    each server came from, and the definitions they trust are pinned in the state dir."""
    from tui_agent.config.trust import trusted_writer
    from tui_agent.config.writeback import edit_list

    write = trusted_writer(settings)

    def persist(server: str, field: str, tool: str, add: bool) -> None:
        origin = settings.origins.get(server)
        if origin is not None:
            edit_list(origin, field, tool, add=add, write=write)

    rules = {name: ServerRules(tuple(s.allow), tuple(s.auto), tuple(s.ask), tuple(s.deny))
             for name, s in settings.config.servers.items()}
    # No rule here for an unsandboxed shell: the server that runs the commands marks its
    # tools (ToolSpec.asks) and the policy asks for every call of them. Guessing it in
    # this process (another environment, a self-test on the UI's loop) could disagree.
    permissions = settings.config.permissions
    return Policy(rules, ApprovalStore(paths.state_dir() / "approvals.json"), persist,
                  tool_filter or ToolFilter(), mode=permissions.default_mode,
                  read_only=tuple(permissions.read_only),
                  permission=RuleSet(settings.rules), rule_files=rule_files(settings))


def rule_files(settings: Settings) -> TomlRuleFiles:
    """Rules made in a session go to the user's config; removing one from a trusted
    project's file keeps the project trusted over that edit (the person's own)."""
    from tui_agent.config.trust import trusted_writer

    return TomlRuleFiles(paths.default_config_file(), trusted_writer(settings))


def open_hub(settings: Settings, *, with_disabled: bool = False,
             logins: Callable[[], Logins] | None = None,
             desk: FrontDesk | None = None) -> Hub | None:
    """A hub for the enabled servers of ``settings`` (and the disabled ones, in their
    ``disabled`` state, for a front end that can switch them on); None when there are none.
    ``logins`` makes how its remote servers log in, if it has servers (default: none may
    open a browser); ``desk`` is what the front end offers servers beyond their tools
    (default: nothing). Imports the MCP SDK: a front end that must stay responsive calls
    it after importing :mod:`tui_agent.tools.hub` in a thread."""
    servers = {n: s for n, s in settings.config.servers.items()
               if with_disabled or not s.disabled}
    if not servers:
        return None
    from tui_agent.tools.frontdesk import FrontDesk
    from tui_agent.tools.hub import Hub

    made = logins() if logins is not None else open_logins(None)
    offered = desk if desk is not None else FrontDesk()
    return Hub(servers, log_dir=paths.state_dir() / "logs",
               default_timeout=settings.config.agent.tool_timeout, secrets=settings.secrets,
               unready=settings.unready, client_side=lambda name, config: offered.side(name, config,
                                                             made.client_side(name, config)))


def open_logins(open_url: Callable[[str, str], None] | None, *, interactive: bool = False
                ) -> Logins:
    """The logins of a run, their tokens in the OS keyring or the state dir (see
    :class:`~tui_agent.tools.auth.logins.Logins` for ``open_url`` and ``interactive``)."""
    from tui_agent.tools.auth.logins import Logins
    from tui_agent.tools.auth.storage import TokenStore

    return Logins(TokenStore.default(paths.state_dir()), open_url, interactive=interactive)


def llm(settings: Settings) -> LLM:
    """litellm's client for ``settings``'s ``[model]``."""
    return LLM(settings.config.model)


def chat_model(model: ModelSettings, *, demo: bool = False) -> ChatModel:
    """The model of ``model``: litellm's client, or (``demo``, with no other model named)
    the offline tour's scripted one."""
    if demo:
        from tui_agent.demo import DEMO_MODEL

        if model.name is None or model.name == DEMO_MODEL:
            from tui_agent.demo.model import ScriptedTour

            return ScriptedTour()
    return LLM(model)


def code_mode(settings: Settings, *, on: bool = False) -> CodeMode:
    """Code mode as ``[code_mode]`` and the servers' own ``code_mode`` set it, with a
    script child kept started ahead; ``on``: as if ``[code_mode] enabled`` were true
    (``tui-agent stubs``)."""
    limits = settings.config.code_mode
    return CodeMode(limits.model_copy(update={"enabled": True}) if on else limits,
                    settings.config.servers, warm=not on)


def agent(settings: Settings, llm: ChatModel, gate: Gate, policy: Policy, *,
          tools: ToolSource | None = None, session: SessionWriter | None = None,
          history: Conversation | None = None, skills: Catalog | None = None,
          cwd: Path | None = None) -> Agent:
    """An agent on ``settings``'s ``[agent]``, system prompt (with project memory of
    ``cwd``, default the working directory) and code mode; ``history``: the saved
    conversation it continues, from its last compaction; ``skills``: the catalog it
    offers (default: an empty one, filled by :func:`local_skills`). Its sub-agents are the
    built-in ``general`` until :func:`~tui_agent.wiring.subagents.local_agents` reads the
    agent files."""
    from tui_agent.wiring.prompt import system_prompt
    from tui_agent.wiring.subagents import subagents

    cwd = cwd or Path.cwd()
    made = Agent(llm, tools if tools is not None else NoTools(), gate,
                 settings=settings.config.agent, policy=policy, session=session,
                 prompt=system_prompt(settings, cwd),
                 history=history.messages if history else (),
                 compaction=history.compaction if history else None,
                 code_mode=code_mode(settings), scopes=file_scopes(settings, cwd),
                 skills=skills, hooks=hooks_from(settings, cwd))
    made.subagents = subagents(settings, cwd)  # general alone: local_agents reads the files
    return made


def hooks_from(settings: Settings, cwd: Path | None = None) -> Hooks | None:
    """The configured hooks (a held project's are not among them), run in ``cwd`` with
    the project's folder as ``CLAUDE_PROJECT_DIR``; None when there are none. Raises
    :class:`~tui_agent.config.ConfigError` for a hook that cannot be honoured (the front
    ends check it as they load the config)."""
    config = parse_hooks(settings.hooks)
    if not config:
        return None
    cwd = cwd or Path.cwd()
    return Hooks(config, cwd=cwd,
                 project_dir=settings.project.root if settings.project is not None else cwd)


def trusted_project(settings: Settings) -> Path | None:
    """The project's root when its content may be read (it is trusted, or asks for
    nothing that needs trust), else None."""
    return settings.project.root if settings.project is not None and settings.held is None \
        else None


def local_skills(settings: Settings, catalog: Catalog) -> None:
    """Find the skills in the user's folders and (trusted) the project's, and offer them
    in ``catalog``; the ones not offered go to ``catalog.problems``. Reads only each
    ``SKILL.md``'s frontmatter; blocking: the app calls it in a thread."""
    from tui_agent.core.skills.local import LocalSkills
    from tui_agent.custom.skills import skill_dirs

    local = LocalSkills.found_in(skill_dirs(project=trusted_project(settings)))
    catalog.origins[:] = [o for o in catalog.origins if not isinstance(o, LocalSkills)]
    catalog.origins.insert(0, local)
    catalog.problems[:] = local.problems


def file_scopes(settings: Settings, project: Path) -> Scopes:
    """Where each configured server's files are, for the diff of a call that writes one:
    a local server's roots (relative paths from the project); a Docker server's volumes
    (its other paths are only in the container); a remote server's are not here."""
    def scope(server: str) -> FileScope | None:
        config = settings.config.servers.get(server)
        if config is None:
            return None
        if config.transport in ("docker", "docker-gateway"):
            return FileScope(mounts=_mounts(config.volumes), elsewhere="the container")
        if config.transport in ("sse", "http"):
            return FileScope(elsewhere="the remote server")
        base = Path(os.path.expanduser(config.cwd)) if config.cwd else project
        return FileScope(roots_of(config, settings.config.agent.roots, project),
                         base=base if base.is_absolute() else project / base)

    return scope


def _mounts(volumes: list[str]) -> list[tuple[str, Path]]:
    """``/host:/target[:ro]`` as ``("/target", Path("/host"))``; named volumes have no
    host path to read."""
    found = []
    for volume in volumes:
        source, target = volume.split(":")[:2]
        source = os.path.expandvars(os.path.expanduser(source))
        if source.startswith("/"):
            found.append((target, Path(source)))
    return found


def sessions() -> SessionStore:
    """Where conversations are kept."""
    return SessionStore(paths.sessions_dir())


def new_session(settings: Settings, model: str | None, path: Path | None = None, *,
                cwd: Path | None = None) -> SessionWriter:
    """A new session file (at ``path``, or a fresh one in the store) of a conversation in
    ``cwd`` (default: the working directory; an ACP session's is the editor's folder,
    where ``/rewind`` finds its checkpoints); one with the demo's scripted model is marked
    ``demo`` (listed, never continued without its id)."""
    from tui_agent.demo import DEMO_MODEL

    meta: dict[str, Any] = {"model": model, "cwd": str(cwd) if cwd else os.getcwd()}
    if model == DEMO_MODEL:
        meta["demo"] = True
    return SessionWriter.create(path or sessions().new_path(), meta, settings.secrets)


def resumed_session(settings: Settings, conversation: Conversation) -> SessionWriter:
    """The writer that continues ``conversation``'s file."""
    return SessionWriter.resume(conversation, settings.secrets)


def open_session(settings: Settings, model: str | None, *, resume: str | None = None,
                 session_file: Path | None = None
                 ) -> tuple[SessionWriter, Conversation | None]:
    """The session to write: resumed (``resume``: an id, a prefix or :data:`LATEST`),
    named (``session_file``, continued if it exists), or new. Raises ``SessionError``."""
    conv: Conversation | None = None
    if resume is not None:
        conv = load(sessions().find(None if resume == LATEST else resume), settings.secrets)
    elif session_file is not None and session_file.exists():
        conv = load(session_file, settings.secrets)
    if conv is not None:
        return resumed_session(settings, conv), conv
    return new_session(settings, model, session_file), None


def save_metrics(hub: Hub | None, session: SessionWriter | None) -> None:
    """The servers' call metrics so far, beside the conversation's session file (none
    for a conversation nobody said anything in: its file is not kept)."""
    if hub is not None and session is not None and not session.blank:
        with contextlib.suppress(OSError):
            write_report(session.path, hub.stats())


def sampling_complete(settings: Callable[[], Settings],
                      current: Callable[[], str | None],
                      secrets: Callable[[], frozenset[str]],
                      model_settings: Callable[[str], ModelSettings] | None = None
                      ) -> Complete:
    """How a server's sampling request runs: on ``[model] sampling_model`` of the
    settings in force, else the chat's model (``current()``), with the settings that model
    is used with (``model_settings``: the app's, where ``/model NAME URL`` set a server;
    by default :meth:`Settings.model_for`, ``[models]`` included), within the request's
    ``maxTokens``; the config's ``secrets()`` masked in what goes to it."""
    async def complete(request: SampleRequest) -> tuple[str, str]:
        from tui_agent.core.messages import complete_text
        from tui_agent.tools.sampling import as_messages

        now = settings()
        name = now.config.model.sampling_model or current()
        if not name:
            raise RuntimeError("no model is configured")
        update: dict[str, Any] = {"max_tokens": request.max_tokens}
        if request.temperature is not None:
            update["temperature"] = max(0.0, min(request.temperature, 2.0))
        used = model_settings(name) if model_settings is not None else now.model_for(name)
        llm = LLM(used.model_copy(update=update))
        return await complete_text(llm, as_messages(request), secrets()), name

    return complete
