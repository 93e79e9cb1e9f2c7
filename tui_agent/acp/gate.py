"""The gate through the editor: a call the policy does not settle becomes a
``session/request_permission`` with allow once, allow always (when the tool's definition
can be trusted from now on; the core persists it as the app's ``a`` does), allow the
script's listed tools (for a call from a code-mode script) and reject.

Stable ACP carries no typed reason with a rejection, so a rejection says only that the
person rejected it. A client that cannot answer (it went away, or sent an error) denies
the call: a tool never runs without a yes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
)

from tui_agent.acp.agent_calls import nested_id
from tui_agent.acp.kinds import kind_of, paths_of, title_of
from tui_agent.acp.shown import shown_change, shown_input
from tui_agent.config.interpolate import mask
from tui_agent.core.permissions import Decision, PendingCall
from tui_agent.tools.text import clean

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger(__name__)

ALLOW_ONCE, ALLOW_ALWAYS, ALLOW_SCRIPT, REJECT = "allow_once", "allow_always", "allow_script", \
    "reject_once"


class EditorGate:
    """Asks the editor about each call of one ACP session."""

    asks_person = False
    """The editor asks its person, and tells them so its own way: no ``Notification``
    hook fires for it here."""

    def __init__(self, client: Client, session_id: str, cwd: Path,
                 secrets: frozenset[str] = frozenset()) -> None:
        self.client, self.session_id, self.cwd = client, session_id, cwd
        self.secrets = secrets
        """Masked in what the question shows, as in the session's updates."""

    async def decide(self, call: PendingCall) -> Decision:
        try:
            answer = await self.client.request_permission(
                session_id=self.session_id, tool_call=self.question(call),
                options=options_for(call))
        except Exception as exc:  # the client is gone or refused: nothing runs unasked
            log.warning("session/request_permission failed: %s", exc)
            return Decision.deny(f"the editor did not answer the permission request ({exc})")
        outcome = answer.outcome
        if not isinstance(outcome, AllowedOutcome):
            return Decision.deny("the permission request was cancelled")
        return decision_for(call, outcome.option_id)

    def question(self, call: PendingCall) -> ToolCallUpdate:
        """The call as the editor shows it beside the options: the diff of a write, else
        the tool's description and (for a script's call) the script's scope."""
        lines = [clean(call.why)]
        if call.description:
            lines.append(clean(call.description).splitlines()[0][:300])
        if call.hints:
            lines.append(f"the server says it is: {', '.join(map(clean, call.hints))}")
        if call.parent:
            lines.append(f"called by the script {clean(call.parent)}")
            lines.extend(call.script_scope("'Allow the script'"))
        if call.agent:
            lines.append(f"asked by the sub-agent {clean(call.agent)}")
        content: list[ContentToolCallContent | FileEditToolCallContent
                      | TerminalToolCallContent] = [
            ContentToolCallContent(type="content", content=TextContentBlock(
                type="text", text=mask("\n".join(lines), self.secrets)))]
        change = call.change
        if change is not None:
            where, new, old = shown_change(change, self.secrets)
            content.append(FileEditToolCallContent(type="diff", path=where, new_text=new,
                                                   old_text=old))
        whose = f" (for the agent {clean(call.agent)})" if call.agent else ""
        return ToolCallUpdate(
            tool_call_id=nested_id(call.agent_id, call.id),
            title=title_of(call.name, call.server, call.tool, call.parent) + whose,
            kind="edit" if change is not None else kind_of(call.tool, call.arguments, call.hints),
            status="pending",
            raw_input=shown_input(call.arguments, self.secrets), content=content,
            locations=[ToolCallLocation(path=p) for p in paths_of(call.arguments, self.cwd)])


def options_for(call: PendingCall) -> list[PermissionOption]:
    """Allow once; allow always (a tool whose definition can be pinned); allow the
    script's listed tools (a script's call); reject."""
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if call.fingerprint:
        options.append(PermissionOption(option_id=ALLOW_ALWAYS,
                                        name=f"Always allow {clean(call.tool)}",
                                        kind="allow_always"))
    if call.script_approvable:
        options.append(PermissionOption(option_id=ALLOW_SCRIPT,
                                        name="Allow the script (its listed tools)",
                                        kind="allow_once"))
    options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    return options


def decision_for(call: PendingCall, option_id: str) -> Decision:
    """What the editor's answer means for ``call``; an option not offered for this call
    (allow always for a tool that cannot be pinned, the script's for a plain call)
    rejects it."""
    if option_id not in {o.option_id for o in options_for(call)}:
        return Decision.deny(f"the editor answered with an option never offered "
                             f"({clean(option_id)!r})")
    if option_id == ALLOW_ONCE:
        return Decision.approve("allowed in the editor")
    if option_id == ALLOW_ALWAYS:
        return Decision.approve("always allowed in the editor", always=True)
    if option_id == ALLOW_SCRIPT:
        return Decision.whole_script()
    return Decision.deny("rejected in the editor")


def may_read(client: Client, session_id: str) -> Callable[[Path], Awaitable[bool]]:
    """Asks the editor, as a tool call is asked, whether a file a prompt names outside the
    session's folders may be read; anything but "allow" (a rejection, a cancel, an
    editor that cannot answer) is no."""
    async def ask(path: Path) -> bool:
        question = ToolCallUpdate(
            tool_call_id=f"read-{path}", title=f"Read {clean(str(path))} (outside the "
            "session's folders)", kind="read", status="pending",
            locations=[ToolCallLocation(path=str(path))])
        options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
                   PermissionOption(option_id=REJECT, name="Reject", kind="reject_once")]
        try:
            answer = await client.request_permission(session_id=session_id,
                                                     tool_call=question, options=options)
        except Exception as exc:
            log.warning("session/request_permission failed: %s", exc)
            return False
        outcome = answer.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW_ONCE

    return ask
