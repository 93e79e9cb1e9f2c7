"""Code mode in the chat loop: which tools are reached through scripts, the four
meta-tools the model gets instead, and the bridge that takes every call a script
makes through the same policy, gate and tool source as a direct call.

A server is in code mode when ``[code_mode] enabled`` (or ``--code-mode``) is on and
the server does not set ``code_mode = false``, or when the server sets
``code_mode = true`` itself. Its tools are then only reachable from scripts.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from tui_agent.codemode import spare
from tui_agent.codemode.meta import DOCS, EXECUTE, LIST, META_SERVER, READ
from tui_agent.codemode.sandbox import CallFailed
from tui_agent.codemode.stubs import BoundTool, StubTree, referenced
from tui_agent.config.models import CodeModeSettings, ServerConfig
from tui_agent.core.calls import news_to
from tui_agent.core.diffs import may_write_files, writes_file
from tui_agent.core.events import ApprovalDecided, Event, ToolCallStarted, ToolResult
from tui_agent.core.hooks.pre_tool import PreTool
from tui_agent.core.permissions import SCRIPT_REASON, Decision, Judgement, PendingCall, Policy
from tui_agent.tools.news import CALL_NEWS
from tui_agent.tools.spec import ToolOutcome, ToolSpec
from tui_agent.tools.text import clean

MAX_LISTED = 60

Emit = Callable[[Event], None]


class CallRunner(Protocol):
    """What a script's calls need of the chat loop (the :class:`~tui_agent.core.agent.Agent`
    is one): the policy, the gate, and the tool source, with the same checks as a direct
    call."""

    policy: Policy

    async def ask(self, spec: ToolSpec, pending: PendingCall, judged: Judgement,
                  emit: Emit) -> Decision: ...

    async def run_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> ToolOutcome: ...

    async def pre_tool(self, spec: ToolSpec, call_id: str, arguments: dict[str, Any],
                       emit: Emit) -> PreTool: ...

    async def post_tool(self, spec: ToolSpec, call_id: str, arguments: dict[str, Any],
                        outcome: ToolOutcome, emit: Emit) -> ToolOutcome: ...


class CodeMode:
    """Code-mode state of one agent: reads its settings live, so ``/code`` applies from
    the next request."""

    def __init__(self, settings: CodeModeSettings,
                 servers: Mapping[str, ServerConfig] | None = None, *,
                 warm: bool = False) -> None:
        self.settings = settings
        self.servers = servers or {}
        self.warm = warm
        """Keep a script child started ahead (the app does; whoever sets it closes
        :mod:`~tui_agent.codemode.spare` on the way out)."""
        self._key: tuple[Any, ...] | None = None
        self._tree = StubTree(settings.binding_level)

    def coded(self, server: str) -> bool:
        own = self.servers[server].code_mode if server in self.servers else None
        return self.settings.enabled if own is None else own

    def tree(self, specs: Sequence[ToolSpec]) -> StubTree:
        """The stub tree of ``specs``, rebuilt only when a tool list or definition changed."""
        key = (self.settings.binding_level,
               tuple(sorted((s.name, s.fingerprint, s.description) for s in specs)))
        if key != self._key:
            self._tree = StubTree.build(specs, self.settings.binding_level)
            self._key = key
        return self._tree

    @property
    def stubs(self) -> StubTree:
        """The tree of the last :meth:`offered`: what the model was shown this round."""
        return self._tree

    def bound_servers(self) -> list[str]:
        """The globals scripts reach servers by (for a preview of what a script uses)."""
        return sorted(self.stubs.bindings())

    def offered(self, allowed: Mapping[str, ToolSpec]) -> dict[str, ToolSpec]:
        """The direct tools of servers not in code mode, plus the meta-tools when any
        allowed tool is in code mode."""
        direct = {n: s for n, s in allowed.items() if not self.coded(s.server)}
        coded = [s for s in allowed.values() if self.coded(s.server)]
        if not coded:
            return direct
        self.tree(coded)  # the stubs the meta-tools serve
        if self.warm:
            spare.prepare(self.settings)
        return {**direct, **meta_specs(self.settings)}

    def answer(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """``listToolFiles``, ``readToolFile`` and ``getToolDocs``."""
        tree = self.stubs
        if tool == LIST:
            return ToolOutcome(f"{len(tree.files)} stub file(s); read one with "
                               f"readToolFile(fileName):\n{tree.listing()}")
        if tool == READ:
            name = arguments.get("fileName")
            if not isinstance(name, str):
                return ToolOutcome("error: readToolFile needs fileName, a path from "
                                   "listToolFiles()", is_error=True)
            text = tree.read(name)
            if text is None:
                return ToolOutcome(f"error: no stub file '{clean(name)[:200]}'. The files are:\n"
                                   f"{_some(sorted(tree.files))}", is_error=True)
            return ToolOutcome(text)
        server, name = arguments.get("server"), arguments.get("tool")
        if not isinstance(server, str) or not isinstance(name, str):
            return ToolOutcome("error: getToolDocs needs server and tool, both strings",
                               is_error=True)
        docs = tree.docs(server, name)
        if docs is None:
            known = sorted(b.call_name for b in tree.tools.values())
            return ToolOutcome(f"error: no tool '{clean(name)[:100]}' on server "
                               f"'{clean(server)[:100]}'. The tools are:\n{_some(known)}",
                               is_error=True)
        return ToolOutcome(docs)


def _some(names: list[str]) -> str:
    more = f"\n... and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return "\n".join(names[:MAX_LISTED]) + more


def meta_specs(limits: CodeModeSettings) -> dict[str, ToolSpec]:
    """The four meta-tools. Their text is kept short: it is sent with every request,
    and the stubs carry the detail."""
    script = ("Run a Starlark script (Python subset: no while, try, class, import). Servers "
              "are globals: server.tool(name=value). Set `result` to return a value; print() "
              "goes to logs. A denied or failed call stops the script. Limits: "
              f"{limits.timeout:g} s, {limits.max_calls} calls.")
    specs = [
        (LIST, "List the .pyi stubs of the tools executeToolCode can call.", {}, []),
        (READ, "Read a stub: its tools' signatures and docs.",
         {"fileName": {"type": "string"}}, ["fileName"]),
        (DOCS, "Full description and JSON Schema of one tool.",
         {"server": {"type": "string"}, "tool": {"type": "string"}}, ["server", "tool"]),
        (EXECUTE, script, {"code": {"type": "string"}}, ["code"]),
    ]
    out = {}
    for name, description, props, required in specs:
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        out[name] = ToolSpec(name, META_SERVER, name, description, schema)
    return out


class ScriptBridge:
    """The calls of one script run: each one passes the policy and the gate at the moment
    it is made, with its exact arguments, then runs on the agent's tool source. Events
    carry ``parent`` = the script's call id."""

    def __init__(self, agent: CallRunner, parent: str, code: str, tree: StubTree,
                 emit: Emit) -> None:
        self.agent, self.parent, self.code, self.emit = agent, parent, code, emit
        self.tools = tree.by_key()
        self.count = 0
        self._paused = 0.0
        self._asking_since: float | None = None
        names = {b.call_name: k for k, b in self.tools.items()}
        self.listed = {n: names[n] for n in referenced(code, tree.bindings()) if n in names}
        """The tools the script names in its text: what ``s`` (approve the script) may
        approve, shown beside the question."""
        self.approved: set[str] = set()
        """Keys of the tools approved for the rest of this run with ``s``."""

    @property
    def paused(self) -> float:
        """Seconds spent waiting on a person so far, a wait still going on included."""
        since = self._asking_since
        return self._paused + (time.monotonic() - since if since is not None else 0.0)

    async def call(self, key: str, name: str, arguments: dict[str, Any]) -> Any:
        """Run one call of the script (through the policy and the gate) and give back its
        value; :class:`CallFailed` when it is not run or fails."""
        bound = self.tools.get(key)
        if bound is None:  # only a tampered child could send this
            raise CallFailed("runtime", f"{name} is not a tool of this script")
        spec = bound.spec
        assert isinstance(spec, ToolSpec)
        args = _arguments(bound, name, arguments)
        self.count += 1
        call_id = f"{self.parent}.{self.count}"
        self.emit(ToolCallStarted(call_id, spec.name, spec.server, spec.tool, args,
                                  parent=self.parent))
        pre = await self.agent.pre_tool(spec, call_id, args, self.emit)  # PreToolUse hooks
        args = pre.arguments
        decision = await self._decide(key, spec, call_id, args, pre)
        if not decision.approved:
            why = f" ({decision.reason})" if decision.reason else ""
            text = f"denied: {name}({_brief(args)}) was not run{why}"
            self.emit(ToolResult(call_id, True, text))
            raise CallFailed("denied", text)
        started = time.monotonic()
        told = CALL_NEWS.set(news_to(call_id, self.emit))  # progress and task status
        try:
            outcome = await self.agent.run_tool(spec, args)
        except asyncio.CancelledError:  # the script's deadline, or the turn stopped
            self.emit(ToolResult(call_id, True, "cancelled before it finished",
                                 round(time.monotonic() - started, 3)))
            raise
        finally:
            CALL_NEWS.reset(told)
        outcome = await self.agent.post_tool(spec, call_id, args, outcome, self.emit)
        self.emit(ToolResult(call_id, outcome.is_error, outcome.text,
                             round(time.monotonic() - started, 3)))
        if outcome.is_error:
            raise CallFailed("tool", f"{name}({_brief(args)}) failed: {outcome.text[:4000]}")
        return outcome.value if outcome.value is not None else outcome.text

    async def _decide(self, key: str, spec: ToolSpec, call_id: str,
                      args: dict[str, Any], pre: PreTool) -> Decision:
        judged = pre.judged(self.agent.policy.judge(
            spec.server, spec.tool, spec.fingerprint, asks=spec.asks, hints=spec.hints,
            arguments=args))
        if judged.verdict == "auto":
            self.emit(ApprovalDecided(call_id, "auto", by=judged.by or None))
            return Decision.approve()
        # Approving the script covers what only lacked an allowance: never what asks
        # outright (an ask rule or list, a hook's ask, a changed definition: ``by``).
        if judged.verdict == "ask" and not judged.firm and not judged.by and \
                key in self.approved and not writes_file(spec.tool, args):
            decision = Decision.approve(SCRIPT_REASON)
            self.emit(ApprovalDecided(call_id, "approved", decision.reason,
                                      "you (approving the script)"))
            return decision
        named = self._weighed(key, judged)
        held = {n: why for n, (k, weighed) in named.items()
                if (why := held_back(self._spec(k), args if k == key else None)
                    or asks_outright(weighed))}
        covered = {n: k for n, (k, _) in named.items() if n not in held}
        self._asking_since = time.monotonic()
        try:
            decision = await self.agent.ask(spec, PendingCall(
                call_id, spec.name, spec.server, spec.tool, args, spec.description,
                why=judged.why, parent=self.parent,
                fingerprint="" if judged.firm else spec.fingerprint,
                script=self.code, hints=spec.hints, script_tools=tuple(covered),
                script_held=tuple(held.items()), rule_helps=judged.lacks_allowance),
                judged, self.emit)
        finally:
            self._paused += time.monotonic() - self._asking_since
            self._asking_since = None
        if decision.approved and decision.script:
            self.approved |= set(covered.values())
        return decision

    def _spec(self, key: str) -> ToolSpec:
        spec = self.tools[key].spec
        assert isinstance(spec, ToolSpec)
        return spec

    def _weighed(self, key: str, judged: Judgement) -> dict[str, tuple[str, Judgement]]:
        """The tools a question about a call of ``key`` names, by their names in the
        script, each with its key and judgement: that tool, with this call's ``judged``,
        first; then each other tool the script names that is not approved yet and whose
        calls stop at the gate now (judged once, without arguments: for whether it asks
        and, in :func:`asks_outright`, why)."""
        named = {self.tools[key].call_name: (key, judged)}
        for name, other in self.listed.items():
            if other == key or other in self.approved:
                continue
            spec = self._spec(other)
            weighed = self.agent.policy.judge(spec.server, spec.tool, spec.fingerprint,
                                              asks=spec.asks, hints=spec.hints)
            if weighed.verdict == "ask":
                named[name] = (other, weighed)
        return named


def asks_outright(judged: Judgement) -> str | None:
    """What makes every call ``judged`` covers ask whatever approving the script says (an
    ask rule or list, a hook's ask: its ``by``), or None."""
    return judged.by if judged.verdict == "ask" and judged.by else None


WRITES_FILES = "writes files: each write shows its diff"
DESTRUCTIVE = "marked destructive by the server"
UNMARKED = "not marked read-only or non-destructive by the server"


def held_back(spec: ToolSpec, arguments: dict[str, Any] | None = None) -> str | None:
    """Why approving a script (``s``) cannot approve calls of ``spec`` ahead, or None
    when it can: a tool that writes files (``arguments``: this call's, if it is the one
    asked about) asks at each write, with its diff; a tool that may be destructive asks
    at each call. MCP's ``destructiveHint`` defaults to true for a tool that is not
    read-only, so only a tool its server marks read-only or non-destructive may be
    approved ahead; the hint is the server's word, which the person reads in the
    question before answering. A tool its server asks for at every call (``spec.asks``)
    is held back with the server's reason."""
    if spec.asks:
        return spec.asks
    if may_write_files(spec.tool, spec.parameters) or \
            (arguments is not None and writes_file(spec.tool, arguments)):
        return WRITES_FILES
    if "destructive" in spec.hints:
        return DESTRUCTIVE
    if "read-only" not in spec.hints and "non-destructive" not in spec.hints:
        return UNMARKED
    return None


def _arguments(bound: BoundTool, name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The script's keywords as the tool's JSON keys; unknown or missing ones are an
    error the model can fix."""
    mapping = bound.kwarg_map()
    schema = bound.spec.parameters
    open_ended = schema.get("additionalProperties") not in (None, False) or not mapping
    out: dict[str, Any] = {}
    unknown = []
    for word, value in given.items():
        if word in mapping:
            out[mapping[word]] = value
        elif open_ended:
            out[word] = value
        else:
            unknown.append(word)
    names = ", ".join(p.ident for p in bound.params) or "none"
    if unknown:
        raise CallFailed("runtime", f"{name}() got unexpected keyword argument(s) "
                         f"{', '.join(map(repr, unknown))}; its parameters are: {names}")
    missing = [p.ident for p in bound.params if p.required and p.name not in out]
    if missing:
        raise CallFailed("runtime", f"{name}() is missing required argument(s): "
                         f"{', '.join(missing)}")
    return out


def _brief(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return clean(text if len(text) <= 200 else text[:199] + "…")


async def run_script(runner: CallRunner, code_mode: CodeMode, call_id: str,
                     arguments: dict[str, Any], emit: Emit) -> ToolOutcome:
    """``executeToolCode``: the script runs in the sandbox's child process; each of its
    tool calls comes back to ``runner`` through a :class:`ScriptBridge`."""
    from tui_agent.codemode import sandbox

    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip():
        return ToolOutcome("error: executeToolCode needs code: a Starlark script as a "
                           "string", is_error=True)
    tree = code_mode.stubs  # built with the tools offered in this round
    bridge = ScriptBridge(runner, call_id, code, tree, emit)
    try:
        outcome = await sandbox.run(code, tree.bindings(), bridge, code_mode.settings,
                                    warm=code_mode.warm)
    except OSError as exc:
        return ToolOutcome(f"error: could not start the script sandbox: {exc}", is_error=True)
    return ToolOutcome(clean(outcome.text()), is_error=not outcome.ok)
