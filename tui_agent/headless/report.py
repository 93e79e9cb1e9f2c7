"""``tui-agent servers``: start every configured server, report, close them all.

For each server: its state, transport and tool count, each tool's approval
(auto / ask / deny, as the policy would judge a call now), and for one that
failed, the error, the last lines of its stderr and where its log is. With
``--resources``, its resources, resource templates and prompts too. Exit 1 if
any enabled server failed. The tables (tools, resources) keep to the terminal's width
(:mod:`tui_agent.headless.width`), each description cut with an ellipsis. Every line goes
through :func:`~tui_agent.config.printable.shown` (the configuration's secrets masked,
control characters removed; a server's stderr too; a table row before it is cut to the
width, so that the ellipsis never leaves a secret's start) and every server name through
:func:`~tui_agent.config.printable.safe_name`. Only a server that uses OAuth has a login
line (:func:`uses_oauth`).
"""

from __future__ import annotations

import asyncio
from typing import IO, TYPE_CHECKING

from tui_agent.config import Settings
from tui_agent.config.printable import safe_name, shown
from tui_agent.core.permissions import Policy
from tui_agent.core.scripts import CodeMode
from tui_agent.headless.login import describe_login
from tui_agent.headless.masked import masked
from tui_agent.headless.width import columns, fit
from tui_agent.tools.connection import ServerStatus
from tui_agent.tools.hub import Hub, Listing
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted

if TYPE_CHECKING:
    from tui_agent.tools.auth.logins import Logins


async def report(settings: Settings, policy: Policy, hub: Hub, out: IO[str], *,
                 resources: bool = False, logins: Logins | None = None,
                 width: int | None = None) -> int:
    """``width``: the columns a table row may take (default: ``out``'s own width)."""
    width = columns(out) if width is None else width
    out = masked(out, settings.secrets)
    hub.start()
    try:
        await hub.wait_all()
        failed = False
        for status in hub.statuses():
            # Masked here, not only by the stream: the error quotes a stderr line, and
            # both must read the same for that line to be printed once.
            status = status.masked(settings.secrets)
            failed |= status.state in ("failed", "connecting", "degraded")
            _server(status, hub, policy, out, width, settings.secrets)
            line = _login_line(status, hub, logins)
            if line:
                out.write(f"  login: {line}\n")
        for name, cfg in settings.config.servers.items():
            if cfg.disabled:
                out.write(f"{safe_name(name)}  disabled\n")
        if resources:
            await _resources(hub, out, width, settings.secrets)
        return 1 if failed else 0
    finally:
        await hub.close()


def _login_line(status: ServerStatus, hub: Hub, logins: Logins | None) -> str | None:
    """What the ``login:`` line says of a server, or None for one that does not use
    OAuth (local, its own Authorization header, or one that never asked for a login)."""
    config = hub.connections[status.name].config
    if logins is None or not logins.applies(config):
        return None
    login = logins.status(config)
    if login is not None:
        return describe_login(login)
    if status.state == "connected":  # it answered without asking anyone to log in
        return "none needed"
    return "not logged in" if logins.uses_oauth(status.name, config) else None


def _row(text: str, width: int, secrets: frozenset[str]) -> str:
    """A table row: masked before it is cut to ``width`` (a secret cut by the ellipsis
    would leave its start for the stream's masking to miss), then its line break."""
    return fit(shown(text, secrets), width) + "\n"


def _server(status: ServerStatus, hub: Hub, policy: Policy, out: IO[str],
            width: int, secrets: frozenset[str]) -> None:
    about = " · ".join(x for x in (status.server_info, status.protocol and
                                   f"protocol {status.protocol}") if x)
    specs = hub.tools_of(status.name)
    # tui-agent's own tools for the server's resources are listed (the model gets them),
    # and counted apart from the server's.
    extra = hub.resource_tools_of(status.name)
    own = f" + {extra} to read its resources" if extra else ""
    out.write(_row(f"{safe_name(status.name)}  {status.state}  {status.transport}  "
                   f"{counted(status.tools, 'tool')}{own}{f'  ({about})' if about else ''}",
                   width, secrets))
    names = max((len(s.name) for s in specs), default=0)
    for spec in specs:
        verdict = policy.judge(spec.server, spec.tool, spec.fingerprint,
                               asks=spec.asks).verdict
        first = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
        out.write(_row(f"  {spec.name:<{names}}  {verdict:<4}  {clean(first)}".rstrip(),
                       width, secrets))
    for why in status.held_back:
        out.write(f"  not offered: {why}\n")
    if status.state not in ("connected", "idle"):
        tail = status.stderr[-5:]
        out.write(f"  error: {clean(_unquoted(status.last_error or 'unknown', tail))}\n")
        for line in tail:
            out.write(f"  stderr: {line}\n")
        if status.log_file is not None:
            out.write(f"  log: {status.log_file}\n")


def _unquoted(error: str, tail: tuple[str, ...]) -> str:
    """``error`` without the stderr line it quotes when that line is printed below it
    anyway (the server's words once, not twice): at its end, or before the "; next try
    in N s" a server whose retries are paused gets."""
    for line in tail:
        quoted = f" (stderr: {line[:200]})"
        if quoted in error:
            return error.replace(quoted, "", 1)
    return error


async def _resources(hub: Hub, out: IO[str], width: int, secrets: frozenset[str]) -> None:
    listings = await asyncio.gather(hub.resources(), hub.resource_templates(), hub.prompts())
    titles = ("resources", "resource templates", "prompts")
    for title, found in zip(titles, listings, strict=True):
        out.write(f"\n{title}:\n")
        _listing(found, out, width, secrets)


def _listing(found: list[Listing], out: IO[str], width: int,
             secrets: frozenset[str]) -> None:
    any_item = False
    for listing in found:
        if listing.error:
            out.write(f"  {safe_name(listing.server)}: error: {clean(listing.error)}\n")
        for item in listing.items:
            any_item = True
            ref = getattr(item, "uri", None) or getattr(item, "uri_template", None) or item.name
            args = getattr(item, "arguments", None) or []
            sig = f"({', '.join(a.name for a in args)})" if args else ""
            text = clean(getattr(item, "description", None) or getattr(item, "name", "") or "")
            text = text.strip().splitlines()[0] if text.strip() else ""
            out.write(_row(f"  {safe_name(listing.server)}  {clean(str(ref))}{sig}  "
                           f"{text}".rstrip(), width, secrets))
    if not any_item:
        out.write("  (none)\n")


async def stubs(code: CodeMode, policy: Policy, hub: Hub, out: IO[str], err: IO[str], *,
                only: list[str], names_only: bool = False) -> int:
    """``tui-agent stubs``: the stub tree of every server ``code`` (switched on) binds."""
    hub.start()
    try:
        await hub.wait_all()
        failed = [s for s in hub.statuses() if s.state != "connected"]
        for status in failed:
            err.write(f"tui-agent: server '{safe_name(status.name)}' is {status.state}: "
                      f"{clean(status.last_error or 'no tools')}\n")
        specs = [s for s in hub.specs() if policy.offered(s.server, s.tool)
                 and code.coded(s.server)]
        tree = code.tree(specs)
        if names_only:
            out.write(tree.listing() + "\n" if tree.files else "")
            return 1 if failed else 0
        missing = [name for name in only if tree.read(name) is None]
        for name in missing:
            err.write(f"tui-agent: no stub file '{clean(name)}' (tui-agent stubs --list)\n")
        names = [name for name in only if tree.read(name) is not None] or sorted(tree.files)
        for n, name in enumerate(names):
            if len(names) > 1:
                out.write(f"{chr(10) if n else ''}# ==> {name} <==\n")
            out.write(tree.read(name) or "")
        return 1 if failed or missing else 0
    finally:
        await hub.close()
