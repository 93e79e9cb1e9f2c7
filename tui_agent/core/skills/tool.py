"""The built-in ``skill`` tool: ``{"name": ...}`` loads a skill (the body of its
``SKILL.md`` and the list of its other files), ``{"name": ..., "file": ...}`` reads one of
those files. It is offered beside the servers' tools (see :mod:`tui_agent.core.builtins`)
and passes the same gate, judged here: a skill of the user's or a trusted project's loads
without asking (it only reads files the user installed); one whose ``allowed-tools`` the
user has not approved asks, showing them, and once approved they run without asking for
the rest of the session; a server's skill always asks. "Always allow" in the modal
remembers the skill as it is now (in the approvals file, bound to its ``SKILL.md``'s
digest or its server's digests): it loads without asking in later sessions until it
changes, then asks again. Every outcome carries a
:class:`~tui_agent.core.events.SkillUsed` (its ``id`` still empty: the loop gives it the
call's and emits it)."""

from __future__ import annotations

import hashlib
from typing import Any

from tui_agent.core.events import SkillUsed
from tui_agent.core.permissions import ApprovalStore, Judgement
from tui_agent.core.skills.catalog import Catalog, SkillEntry, SkillRefused, tokens_of
from tui_agent.tools.spec import ToolOutcome, ToolSpec
from tui_agent.tools.text import clean

BUILTIN_SERVER = "tui-agent"
"""The pseudo-server of the tools tui-agent itself answers (never an MCP server's name
the model sees: their tools are ``<server>__<tool>``)."""
SKILL_TOOL = "skill"
SKILL_SPEC = ToolSpec(
    name=SKILL_TOOL, server=BUILTIN_SERVER, tool=SKILL_TOOL,
    description=("Load a skill from the system prompt's list: with `name` alone, its "
                 "instructions and the list of its files; with `file` too, one of those "
                 "files (a path relative to the skill)."),
    parameters={"type": "object", "properties": {
        "name": {"type": "string", "description": "the skill's name, as listed"},
        "file": {"type": "string", "description": "a file of the skill, e.g. "
                                                  "references/forms.md"}},
        "required": ["name"], "additionalProperties": False},
    hints=("read-only",))


def trust_of(entry: SkillEntry) -> tuple[str, str] | None:
    """What an "always allow" of this skill trusts: ``(key, digest)``, a server's skill as
    its server lists it (``digest_key``: any change to it asks again), a local one as its
    ``SKILL.md`` reads now. None where the file cannot be read."""
    if entry.origin == "server":
        server, uri, digest_key = entry.handle
        return f"skill {server} {uri}", str(digest_key)
    from tui_agent.custom import skill_files
    from tui_agent.custom.skills import SKILL_FILE

    try:
        text = skill_files.read(entry.handle, SKILL_FILE)
    except skill_files.SkillFileError:
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"skill {entry.where}", f"sha256:{digest}"


def trusted(store: ApprovalStore, trust: tuple[str, str]) -> bool:
    found = store.entry(BUILTIN_SERVER, trust[0])
    return bool(found.get("always")) and found.get("fingerprint") == trust[1]


def allowed_tools_line(entry: SkillEntry) -> str:
    tools = ", ".join(clean(t) for t in entry.allowed_tools)
    return (f"the skill '{clean(entry.name)}' asks that these tools run without asking "
            f"for the rest of the session: {tools} (approving loads it and allows them; "
            "entries with arguments, like Bash(git:*), are never honoured)")


class SkillTool:
    """Answers calls of ``skill`` from a :class:`Catalog`."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def judge(self, arguments: dict[str, Any], store: ApprovalStore | None = None
              ) -> Judgement:
        """Whether this call may run without asking (see the module's docstring). A skill
        the user always allowed as it is now (its digest, in ``store``) does not ask; one
        that asks carries what an "always allow" answer would trust."""
        found = self.catalog.find(str(arguments.get("name", "")))
        if isinstance(found, str):
            return Judgement("auto")  # the call answers with why; nothing is read
        name, _, entry = found
        state = self.catalog.state(name)
        if state.state == "refused" and entry.asks and state.approved == entry.handle:
            return Judgement("auto")  # the call answers with why; nothing is read
        loads = entry.asks and (state.state != "loaded" or state.approved != entry.handle)
        grants = bool(entry.allowed_tools) and name not in self.catalog.granted
        if not loads and not grants:
            return Judgement("auto")
        trust = trust_of(entry)
        if trust is not None and store is not None and trusted(store, trust):
            return Judgement("auto", f"you always allowed the skill '{clean(entry.name)}' "
                                     "as it is now")
        if loads:
            return Judgement("ask", f"loads the skill '{clean(entry.name)}' from "
                                    f"{clean(entry.where)}", trust)
        return Judgement("ask", allowed_tools_line(entry), trust)

    def always(self, trust: tuple[str, str], store: ApprovalStore) -> str | None:
        """The user's "always allow" for a skill as it is now (``trust``, from the
        judgement): kept in ``store``. Returns a problem to show, or None."""
        try:
            store.set(BUILTIN_SERVER, trust[0], trust[1], always=True)
        except OSError as exc:
            return f"applied for this session only: {exc}"
        return None

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        name, file = arguments.get("name"), arguments.get("file")
        if not isinstance(name, str) or (file is not None and not isinstance(file, str)):
            return ToolOutcome('error: skill takes {"name": "<skill>"} and optionally '
                               '"file": "<path in the skill>"', is_error=True)
        found = self.catalog.find(name)
        if isinstance(found, str):
            return ToolOutcome(f"error: {found}", is_error=True)
        offered, origin, entry = found
        state = self.catalog.state(offered)
        try:
            if file:
                text = await origin.read(entry, file)
                use = SkillUsed("", offered, entry.origin, entry.where, "read", file,
                                tokens=tokens_of(text))
                return ToolOutcome(text, value=use)
            loaded = await origin.load(entry)
        except SkillRefused as exc:
            reason = clean(exc.reason)
            if not file or exc.whole:
                state.state, state.reason, state.approved = "refused", reason, entry.handle
            use = SkillUsed("", offered, entry.origin, entry.where, "refused", file, reason)
            return ToolOutcome(f"error: skill '{offered}' not read: {reason}",
                               is_error=True, value=use)
        if entry.allowed_tools:  # this call ran: the user approved them (or nothing asks)
            self.catalog.granted[offered] = entry.allowed_tools
        text = answer(offered, loaded.body, loaded.files, loaded.more)
        state.state, state.reason, state.tokens = "loaded", "", tokens_of(text)
        state.approved = entry.handle
        return ToolOutcome(text, value=SkillUsed("", offered, entry.origin, entry.where,
                                                 "loaded", tokens=state.tokens))


def answer(name: str, body: str, files: tuple[str, ...], more: int) -> str:
    """What the model reads on loading a skill: its instructions, then its files."""
    if not files:
        return f"{body}\n\n(The skill '{name}' has no other files.)"
    listed = "\n".join(f"- {f}" for f in files)
    extra = f"\n(and {more} more)" if more else ""
    return (f"{body}\n\nFiles of the skill '{name}' (read one with "
            f'{{"name": "{name}", "file": "<path>"}}):\n{listed}{extra}')
