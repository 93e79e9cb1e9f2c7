"""The commands that print and exit: ``servers`` (and ``servers --stats``), ``stubs``,
``login``, ``logout``, ``sessions``, ``skills``, ``agents`` and ``export``. Each takes
what the command line settled and returns the exit code; problems are printed to
``err``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tui_agent.config import ServerConfig, Settings
from tui_agent.config.printable import safe_name
from tui_agent.core.filters import ToolFilter
from tui_agent.core.session import Conversation, SessionError, load
from tui_agent.headless import stoppable
from tui_agent.headless.login import describe_login, show_login, terminal_logins
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted
from tui_agent.wiring import build
from tui_agent.wiring.build import LATEST
from tui_agent.wiring.subagents import agent_files

if TYPE_CHECKING:
    from tui_agent.core.skills.catalog import Catalog
    from tui_agent.tools.frontdesk import FrontDesk
    from tui_agent.tools.hub import Hub


def servers(settings: Settings, chosen: ToolFilter, out: IO[str], err: IO[str], *,
            resources: bool = False, config: Path | None = None,
            width: int | None = None) -> int:
    """``servers``: start every configured server, report on each, stop them (``width``:
    the columns its tables keep to; default ``out``'s)."""
    from tui_agent.headless.report import report

    logins = terminal_logins(err)
    hub = build.open_hub(settings, logins=lambda: logins, desk=_desk(settings, err))
    if hub is None:
        return _no_servers(config, out)
    return stoppable.run(report(settings, build.policy_from(settings, chosen), hub, out,
                                resources=resources, logins=logins, width=width))


def skills(settings: Settings, out: IO[str], err: IO[str], *, servers: bool = False) -> int:
    """``skills``: the skills found in the folders and, with ``servers``, those the
    configured servers serve (started, listed, stopped: no skill file is read), as
    ``/skills`` lists them; 1 if any was not offered."""
    from tui_agent.core.skills.catalog import Catalog

    catalog = Catalog()
    build.local_skills(settings, catalog)
    hub = build.open_hub(settings, logins=lambda: terminal_logins(err),
                         desk=_desk(settings, err)) if servers else None
    if hub is None:
        return _skills_report(catalog, out)
    return stoppable.run(_with_server_skills(hub, catalog, out, err))


def agents(settings: Settings, out: IO[str]) -> int:
    """``agents``: the agents found, as ``/agents`` lists them; 1 if a file is broken."""
    from tui_agent.core.subagents.report import agents_report
    from tui_agent.wiring.subagents import subagents

    found = subagents(settings, found=agent_files(settings))
    out.writelines(f"{line}\n" for line in agents_report(found.definitions(), found.problems))
    return 1 if found.problems else 0


def _skills_report(catalog: Catalog, out: IO[str]) -> int:
    from tui_agent.core.skills.report import skills_report

    out.writelines(f"{line}\n" for line in skills_report(catalog))
    return 1 if catalog.not_offered() else 0


async def _with_server_skills(hub: Hub, catalog: Catalog, out: IO[str], err: IO[str]) -> int:
    """The report with the servers' skills, listed by the servers started for it (one
    that did not connect is said on ``err``)."""
    from tui_agent.core.skills.servers import attach

    hub.start()
    try:
        await hub.wait_all()
        for status in hub.statuses():
            if status.state not in ("connected", "degraded", "idle"):
                err.write(f"tui-agent: server {safe_name(status.name)} is {status.state}: "
                          "its skills are not listed\n")
        attach(catalog, hub)
        return _skills_report(catalog, out)
    finally:
        await hub.close()


def stubs(settings: Settings, chosen: ToolFilter, out: IO[str], err: IO[str], *,
          only: list[str], names_only: bool = False, config: Path | None = None) -> int:
    """``stubs``: the stub tree code mode would show the model (as if it were on)."""
    from tui_agent.headless.report import stubs as print_stubs

    hub = build.open_hub(settings, logins=lambda: terminal_logins(err),
                         desk=_desk(settings, err))
    if hub is None:
        return _no_servers(config, out)
    return stoppable.run(print_stubs(build.code_mode(settings, on=True),
                                   build.policy_from(settings, chosen), hub, out, err,
                                   only=only, names_only=names_only))


def _desk(settings: Settings, err: IO[str]) -> FrontDesk:
    """What ``servers`` and ``stubs`` offer the servers: what the app offers (a person to
    ask, the model, the roots), so a server lists the tools it registers only for a client
    that declares them. Nobody answers during a report: a question is declined and a
    request for the model refused, as ``run`` does without a terminal, each said on
    ``err``."""
    from tui_agent.headless.elicit import TerminalAsker
    from tui_agent.headless.sampling import terminal_sampler
    from tui_agent.tools.frontdesk import FrontDesk

    complete = build.sampling_complete(lambda: settings,
                                       lambda: settings.config.model.name,
                                       lambda: settings.secrets)
    return FrontDesk(ask=TerminalAsker("decline", err), project=Path.cwd(),
                     shared_roots=list(settings.config.agent.roots),
                     sampler=terminal_sampler("deny", complete, err))


def login(settings: Settings, name: str, out: IO[str], err: IO[str]) -> int:
    """``login NAME``: log in to one remote server (its page in the browser, the link
    printed), keep the tokens, and say who is logged in until when."""
    from tui_agent.tools.auth.logins import could_not_log_in, logged_in

    config = _remote(settings, name, err)
    if config is None:
        return 2
    logins = build.open_logins(show_login(err))
    logins.allow(name)
    only = settings.config.model_copy(update={"servers": {name: config}})
    hub = build.open_hub(Settings(config=only), logins=lambda: logins)
    assert hub is not None

    async def connect() -> int:
        async with hub:
            await hub.wait_all()
            status = hub.statuses()[0]
        if status.state != "connected":
            err.write(f"tui-agent: {could_not_log_in(name, status.last_error or 'failing')}\n")
            return 1
        who = logins.status(config)
        if who is None:  # it answered without asking anyone to log in
            out.write(f"{name} needs no login: it connected without asking for one\n")
            return 0
        out.write(logged_in(name, describe_login(who)) + "\n")
        return 0

    return stoppable.run(connect())


def logout(settings: Settings, name: str, out: IO[str], err: IO[str]) -> int:
    """``logout NAME``: forget the server's tokens and client registration."""
    config = _remote(settings, name, err)
    if config is None:
        return 2
    forgot = build.open_logins(None).forget(config)
    out.write(f"logged out of {name}\n" if forgot else f"not logged in to {name}\n")
    return 0


def _remote(settings: Settings, name: str, err: IO[str]) -> ServerConfig | None:
    """The server ``name``, if it is one that logs in; else why not, on ``err``."""
    from tui_agent.tools.auth.logins import Logins, own_authorization

    config = settings.config.servers.get(name)
    if config is None:
        known = ", ".join(safe_name(n) for n in sorted(settings.config.servers)) or "none"
        err.write(f"tui-agent: no server named '{safe_name(name)}' (the servers: {known})\n")
        return None
    if not Logins.applies(config):
        why = f"it is a {config.transport} server (only sse and http servers log in)" \
            if config.transport not in ("sse", "http") else \
            "it sends its own Authorization header" if own_authorization(config) else \
            "its oauth is switched off (oauth.enabled = false)"
        err.write(f"tui-agent: {name} does not log in: {why}\n")
        return None
    return config


def _no_servers(config: Path | None, out: IO[str]) -> int:
    """Nothing to start; ``config``: the ``--config`` file, if one was named."""
    out.write("no MCP servers are configured (add [servers.NAME] to "
              f"{config or 'the config file'}, or pass --mcp-config FILE.json)\n")
    return 0


def stats(ref: str, out: IO[str], err: IO[str]) -> int:
    """``servers --stats``: the metrics kept beside a conversation's session file."""
    from tui_agent.tools.metrics import metrics_path, summary

    try:
        session = build.sessions().find(None if ref == LATEST else ref)
    except SessionError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    path = metrics_path(session)
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        out.write(f"no metrics for {session.stem}: no MCP server ran in it\n")
        return 0
    except (OSError, ValueError) as exc:
        err.write(f"tui-agent: cannot read {path}: {exc}\n")
        return 1
    out.write(f"metrics of {session.stem} ({path})\n")
    for name, server_stats in report.get("servers", {}).items():
        out.write(f"{name}  {summary(server_stats)}\n")
        tools = server_stats.get("tools", {})
        width = max((len(t) for t in tools), default=0)
        for tool, tool_stats in tools.items():
            out.write(f"  {tool:<{width}}  {summary(tool_stats)}\n")
    return 0


MODEL_COLUMN = 25
"""The widest a model name is shown in ``sessions``; a longer one ends in an ellipsis."""


def sessions(limit: int, out: IO[str], secrets: frozenset[str] = frozenset()) -> int:
    """``sessions``: the saved conversations, newest first (``secrets`` masked in the
    titles), one a line in columns: the id, the messages, the model, the cost (``cost ?``
    where it is unknown, as for a local model), the share of the input read from the
    prompt cache, the title."""
    store = build.sessions()
    found = store.paths()[-limit:] if limit > 0 else store.paths()
    if not found:
        out.write(f"no conversations yet (they are kept in {store.directory})\n")
        return 0
    rows = [_session_row(load(path, secrets)) for path in reversed(found)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:  # a column no row fills (the cache, when none was read) is left out
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)
                 if width]
        out.write("  ".join([*cells, row[-1]]) + "\n")
    return 0


def _session_row(conv: Conversation) -> tuple[str, str, str, str, str, str]:
    """One conversation's cells: id, messages (the number right-aligned to 3 places),
    model, cost, cached share ("" if none was read), title."""
    count = len(conv.entries)
    messages = " " * max(3 - len(str(count)), 0) + counted(count, "msg")
    model = " ".join(clean(str(conv.meta.get("model") or "?")).split())
    if len(model) > MODEL_COLUMN:
        model = model[:MODEL_COLUMN - 1] + "…"
    cost = "cost ?" if conv.usage.cost is None else f"${conv.usage.cost:.4f}"
    return conv.id, messages, model, cost, conv.usage.cache_text(), conv.title()


def export(ref: str, target: Path | None, out: IO[str], err: IO[str],
           secrets: frozenset[str] = frozenset()) -> int:
    """``export``: a conversation as Markdown, to ``target`` or ``out``, masked again with
    ``secrets`` (the configuration's: a file written before a key was configured may
    hold it)."""
    from tui_agent.core.export import save, to_markdown

    try:
        conv = load(build.sessions().find(ref), secrets)
    except SessionError as exc:
        err.write(f"tui-agent: {exc}\n")
        return 2
    text = to_markdown(conv, secrets)
    if target is None:
        out.write(text)
    else:
        save(target, text)
        err.write(f"wrote {target}\n")
    return 0
