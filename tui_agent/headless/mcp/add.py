"""``tui-agent mcp add``: check the words, write the server, start it once and report
on it as ``tui-agent servers`` does (secrets given on the command line masked)."""

from __future__ import annotations

import argparse
import io
import os
from typing import IO

from tui_agent.config.errors import ConfigError
from tui_agent.headless.mcp import layers
from tui_agent.wiring.mcp_add import (
    Added,
    AddError,
    AddRequest,
    masked,
    request,
    secret_tips,
)
from tui_agent.wiring.mcp_add import add as write


def add(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    try:
        req = request(args, args.words)
        added = write(req, config_file=args.config, layers=layers(args),
                      trust=args.trust_project)
    except AddError as exc:
        err.write(f"tui-agent: {exc}\n")
        return exc.code
    verb = "replaced" if added.replaced is not None else "added"
    out.write(masked(f"{verb} {req.name} in {added.place()} ({added.target.kind}): "
                     f"{req.shown()}\n", req))
    for note in added.notes:
        out.write(f"note: {note}\n")
    for tip in secret_tips(req):
        out.write(f"tip: {tip}\n")
    if not req.start:
        out.write("not started (--no-start); 'tui-agent servers' starts it\n")
        return 0
    code = start_once(req, added, out, err)
    if code:
        out.write(f"{req.name} is kept in {added.place()}: fix it there, or remove it with "
                  f"'tui-agent mcp remove {req.name}'\n")
    return code


def start_once(req: AddRequest, added: Added, out: IO[str], err: IO[str]) -> int:
    """The server as the file now holds it (``${VAR}`` expanded), started alone and
    reported on as ``tui-agent servers`` reports; 1 if it failed."""
    from tui_agent.config import Settings
    from tui_agent.config.interpolate import Expander, mask
    from tui_agent.config.locate import toml_line
    from tui_agent.config.models import Config, ServerConfig
    from tui_agent.config.reading import Origin
    from tui_agent.config.server_keys import expand_server
    from tui_agent.core.filters import ToolFilter
    from tui_agent.headless import commands

    text = added.target.file.read_text(encoding="utf-8")
    origin = Origin(added.target.file, ("servers", req.name),
                    lambda loc: toml_line(text, loc))
    expander = Expander(os.environ)
    try:
        server = expand_server(req.name, ServerConfig.model_validate(req.table()), origin,
                               expander)
    except ConfigError as exc:
        out.write(f"{req.name}  failed\n  error: {exc}\n")
        return 1
    settings = Settings(config=Config(servers={req.name: server}),
                        secrets=frozenset(expander.secrets))
    from tui_agent.headless.width import columns

    report = io.StringIO()  # masked before it is shown: sized for where it goes
    code = commands.servers(settings, ToolFilter(), report, err, width=columns(out))
    out.write(mask(masked(report.getvalue(), req), settings.secrets))
    return code
