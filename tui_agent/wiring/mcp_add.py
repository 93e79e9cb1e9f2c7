"""``mcp add``'s words, for every front end: ``tui-agent mcp add``, ``/mcp add`` and
the servers screen's ``a`` take the same flags from this one parser, make the same
checks, and write the same table.

What is wrong with the words (an unknown flag, a bad name, a command not on ``PATH`` or a
path to no file (:mod:`tui_agent.wiring.program`), a URL where nothing listens, a name
already taken) is found before anything is written:
:class:`AddError`, and the config file stays byte for byte as it was. Whether the
server then starts is the front end's to tell (the command prints the ``servers``
report; the app shows it on the servers screen): a server that fails there stays added,
as ``claude mcp add`` keeps one, with the way to fix or remove it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from tui_agent.config.errors import ConfigError
from tui_agent.config.interpolate import mask
from tui_agent.config.scopes import Target, keep_trusted, target, trusted
from tui_agent.config.server_edit import Place, add_server, check_name, places
from tui_agent.config.urls import HIDDEN, is_http_url, mask_url, url_secrets
from tui_agent.wiring.mcp_words import USAGE, add_arguments, one_word, with_dashes
from tui_agent.wiring.program import missing, pinned

CONNECT_TIMEOUT = 3.0
"""Seconds a URL's host may take to accept a connection before ``mcp add`` says nothing
answers there."""


class AddError(Exception):
    """Words ``mcp add`` refuses; nothing was written. ``code``: the exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting: the app has no stderr."""

    def error(self, message: str) -> NoReturn:
        raise AddError(f"mcp add: {message} (mcp add {USAGE})")


@dataclass
class AddRequest:
    """``mcp add``'s words, parsed."""

    name: str
    command: list[str] = field(default_factory=list)
    url: str | None = None
    transport: str | None = None
    docker: str | None = None
    volumes: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    auto: list[str] = field(default_factory=list)
    scope: str | None = None
    force: bool = False
    start: bool = True
    startup_timeout: float | None = None

    def table(self) -> dict[str, Any]:
        """The ``[servers.NAME]`` keys, in the order a person would write them."""
        out: dict[str, Any] = {}
        if self.docker:
            out["image"] = self.docker
            if self.command:
                out["command"] = self.command
            if self.volumes:
                out["volumes"] = self.volumes
        elif self.url:
            out["url"] = self.url
            if self.transport:
                out["transport"] = self.transport
        else:
            out["command"], out["args"] = self.command[0], self.command[1:]
        if self.env:
            out["env"] = self.env
        if self.headers:
            out["headers"] = self.headers
        if self.auto:
            out["auto"] = self.auto
        if self.startup_timeout is not None:
            out["startup_timeout"] = self.startup_timeout
        return out

    def shown(self) -> str:
        """What is added, in one line, with env and header values hidden, and the URL's
        password and query values (where tokens ride) as ``mcp get`` hides them."""
        what = (f"{self.docker} (docker)" if self.docker else mask_url(self.url)
                if self.url else " ".join(self.command))
        extra = [f"env {k}={_hide(v)}" for k, v in self.env.items()]
        extra += [f"header {k}: {_hide(v)}" for k, v in self.headers.items()]
        extra += [f"auto {t}" for t in self.auto]
        return what + (f" ({', '.join(extra)})" if extra else "")


def _hide(value: str) -> str:
    """A value as it may be shown: a ``${VAR}`` reference is; anything else is hidden."""
    return value if "${" in value else HIDDEN


def parse_add(words: Sequence[str]) -> AddRequest:
    """``NAME [flags] [-- COMMAND ARGS...]`` as the app's ``/mcp add`` takes them."""
    words = list(words)
    command: list[str] = []
    dashes = "--" in words
    if dashes:
        cut = words.index("--")
        words, command = words[:cut], words[cut + 1:]
    parser = _Parser(prog="mcp add", add_help=False)
    add_arguments(parser)
    args, rest = parser.parse_known_args(words)
    unknown = [w for w in rest if w.startswith("-")]
    if unknown and not dashes:  # most likely the server's own flag (python3 -m ...)
        given = rest if not rest[0].startswith("-") else []
        raise AddError(f"mcp add: unknown option {unknown[0]}; "
                       + with_dashes("mcp add", words, args.name, given))
    if unknown:
        raise AddError(f"mcp add: unknown option {unknown[0]} (mcp add {USAGE})")
    problem = one_word(args.name, rest) if dashes else None
    if problem:
        raise AddError(f"mcp add: {problem}")
    return request(args, [*rest, *command])


def request(args: argparse.Namespace, command: Sequence[str]) -> AddRequest:
    """The request the parsed flags and the command words make; raises :class:`AddError`
    for words that do not fit together."""
    problem = check_name(args.name)
    if problem:
        raise AddError(problem)
    req = AddRequest(args.name, list(command), args.url, args.transport, args.docker,
                     list(args.volume),
                     _pairs([_passed(e) for e in args.env], "=", "--env",
                            "KEY=VALUE (or the NAME of a variable set in your environment)"),
                     _pairs(args.header, ":", "--header", "'Name: value'"), list(args.auto),
                     args.scope, args.force, not args.no_start, args.startup_timeout)
    if req.startup_timeout is not None and not 0 < req.startup_timeout < float("inf"):
        raise AddError(f"--startup-timeout {req.startup_timeout:g}: give the seconds, "
                       "more than 0")
    kinds = [k for k, on in (("a command", bool(command) and not req.docker),
                             ("--url", bool(req.url)), ("--docker", bool(req.docker))) if on]
    if not kinds:
        raise AddError(f"mcp add {req.name}: say what to run: {USAGE}")
    if len(kinds) > 1:
        raise AddError(f"mcp add {req.name}: give {' or '.join(kinds)}, not both")
    if req.transport and not req.url:
        raise AddError("--transport goes with --url")
    if req.headers and not req.url:
        raise AddError("--header goes with --url (a remote server)")
    if req.volumes and not req.docker:
        raise AddError("--volume goes with --docker")
    return req


def _passed(item: str) -> str:
    """``--env NAME`` alone, as ``docker run -e NAME`` takes it: a variable set in the
    environment, passed on, written as the reference ``NAME=${NAME}`` (its value never
    lands in the file). Only a name that is set: a word that is not (a token pasted
    without its name, ``ghp_...``) stays a bad word, and is never repeated in the error."""
    return f"{item}=${{{item}}}" if item in os.environ and "=" not in item else item


def _pairs(items: Sequence[str], sep: str, flag: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise AddError(f"{flag} {_hide(item)}: expected {form}")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def unset_variables(value: Any, env: Mapping[str, str]) -> list[str]:
    """The ``${VAR}`` references (without a default) in ``value``, a server's table, that
    ``env`` does not set, each once, in order."""
    from tui_agent.config.interpolate import Expander, UnsetVariable

    found: list[str] = []
    if isinstance(value, str):
        rest = value
        while "${" in rest:
            try:
                Expander(env).expand(rest)
                break
            except UnsetVariable as unset:
                if unset.name not in found:
                    found.append(unset.name)
                rest = rest.replace("${" + unset.name + "}", "")
    elif isinstance(value, dict):
        for item in value.values():
            found += [n for n in unset_variables(item, env) if n not in found]
    elif isinstance(value, list):
        for item in value:
            found += [n for n in unset_variables(item, env) if n not in found]
    return found


def preflight(req: AddRequest, env: Mapping[str, str] = os.environ) -> None:
    """The checks that need the machine: every ``${VAR}`` the server names is set (a
    config naming an unset one does not load at all, so the server would stop every
    command), the command is on ``PATH`` (or a file that exists and runs), the URL is
    well formed and something listens there. Raises :class:`AddError`."""
    unset = unset_variables(req.table(), env)
    if unset:
        names = ", ".join("${" + name + "}" for name in unset)
        raise AddError(f"mcp add {req.name}: {names} {'is' if len(unset) == 1 else 'are'} "
                       "not set in the environment, and a config that names an unset "
                       f"variable does not load: set it first (export {unset[0]}=...), or "
                       f"write ${{{unset[0]}:-}} for an empty default")
    if req.command and not req.docker:
        problem = missing(req.command[0], env)
        if problem:
            raise AddError(f"mcp add {req.name}: {problem}")
    if req.url:
        if not is_http_url(req.url):
            raise AddError(f"mcp add {req.name}: '{mask_url(req.url)}' is not an http(s) "
                           "URL")
        parts = urlsplit(req.url)
        assert parts.hostname is not None  # is_http_url says so
        if req.start and "${" not in req.url:
            _listening(req.name, req.url, parts.hostname,
                       parts.port or (443 if parts.scheme == "https" else 80))


def _listening(name: str, url: str, host: str, port: int) -> None:
    import socket

    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            return
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
    raise AddError(f"mcp add {name}: nothing answers at {mask_url(url)} ({why}); check "
                   "the address, or add it anyway with --no-start", 2)


@dataclass(frozen=True)
class Added:
    """What ``mcp add`` wrote: where, and what the person should hear about it."""

    name: str
    target: Target
    line: int
    replaced: Place | None
    notes: tuple[str, ...] = ()

    def place(self) -> str:
        return f"{self.target.file}:{self.line}"


def add(req: AddRequest, *, config_file: Path | None, layers: Sequence[tuple[str, Path]],
        env: Mapping[str, str] = os.environ, cwd: Path | None = None,
        trust: bool = False) -> Added:
    """Check and write the server ``req`` describes (:func:`preflight` after the name);
    ``layers``: the config files read now (kind, path), to refuse a name one of them
    defines. Raises :class:`AddError`; nothing is written then. (Blocking: the URL check
    waits up to :data:`CONNECT_TIMEOUT`.)"""
    from pydantic import ValidationError

    from tui_agent.config.models import ServerConfig

    where = target(req.scope, config_file, env, cwd)
    try:
        ServerConfig.model_validate(req.table())
    except ValidationError as exc:
        raise AddError(f"mcp add {req.name}: " + "; ".join(
            e["msg"].removeprefix("Value error, ") for e in exc.errors())) from None
    files = list(layers) + ([(where.kind, where.file)] if where.file.exists() else [])
    try:
        taken = places(_unique(files), req.name)
    except ConfigError as exc:  # a file that cannot be parsed is never written over
        raise AddError(str(exc)) from None
    elsewhere = [p for p in taken if p.file.resolve() != where.file.resolve()]
    if taken and not req.force:
        raise AddError(f"a server named '{req.name}' is already configured at {taken[-1]} "
                       "(--force replaces it, or choose another name)")
    preflight(req, env)
    notes = []
    if req.command and not req.docker:
        full = pinned(req.command[0], env)
        if full is not None:
            req.command[0], why = full
            notes.append(why)
    was_trusted = where.project_root is None or trusted(where.project_root, env)
    try:
        line = add_server(where.file, req.name, req.table(), replace=req.force)
    except ConfigError as exc:
        raise AddError(str(exc)) from None
    if where.project_root is not None:
        if was_trusted or trust:
            keep_trusted(where.project_root, env)
        else:
            notes.append(f"the project in {where.project_root} is not trusted yet: its "
                         "servers start once you agree (tui-agent asks there; headless: "
                         "--trust-project)")
    if elsewhere and where.kind != "--config":
        notes.append(f"'{req.name}' is also defined at {elsewhere[-1]}; the later of the "
                     "two in precedence (user < project < --config) is the one used")
    return Added(req.name, where, line, taken[-1] if taken else None, tuple(notes))


def _unique(files: Sequence[tuple[str, Path]]) -> list[tuple[str, Path]]:
    seen: set[Path] = set()
    out = []
    for kind, file in files:
        key = file.resolve()
        if key not in seen:
            seen.add(key)
            out.append((kind, file))
    return out


def secret_tips(req: AddRequest) -> list[str]:
    """For each secret-looking value given as it is: how to keep it out of the file."""
    from tui_agent.config.server_keys import secret_name

    tips = []
    for part, values in (("env", req.env), ("headers", req.headers)):
        for key, value in values.items():
            if "${" not in value and secret_name(part, key):
                var = re.sub(r"[^A-Z0-9_]", "_", f"{req.name}_{key}".upper())
                tips.append(f"{key} is written into the file as given; to keep it out, "
                            f"write ${{{var}}} instead and set {var} in your environment")
    return tips


def masked(text: str, req: AddRequest) -> str:
    """``text`` with the literal env and header values of ``req`` masked, and its URL's
    password and query values: a server's report may echo the URL as given."""
    secrets = {v for v in [*req.env.values(), *req.headers.values(), *url_secrets(req.url)]
               if "${" not in v and len(v) >= 4}
    return mask(text, secrets)
