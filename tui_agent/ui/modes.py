"""The permission mode in the app: shift+tab cycles default → plan → auto, ``/mode`` sets
one (``/mode`` alone: a picker), the status bar shows it, and leaving plan mode shows the
plan.

The mode lives on the session's :class:`~tui_agent.core.permissions.Policy` (every later
call is judged by it; a new conversation keeps it). The model's side of plan mode (the
note with each message, the refusals) is the core's; what this module adds is the
person's side: after a turn taken in plan mode, leaving plan mode puts that turn's last
reply in the transcript as "the plan", and "Carry out the plan." in an empty prompt, so
that enter goes ahead (or the words are changed first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.permissions.modes import MODE_WORDS, MODES, Mode, next_mode, parse_mode

if TYPE_CHECKING:
    from tui_agent.ui.chat import ChatApp

GO_AHEAD = "Carry out the plan."
"""What leaving plan mode puts in an empty prompt."""


async def cycle(app: ChatApp) -> None:
    """Shift+tab: the next mode."""
    await app.loaded.wait()
    await switch(app, next_mode(app.backend.policy.mode))


async def command(app: ChatApp, arg: str) -> None:
    """``/mode [default|plan|auto]``; alone, a picker of the three with what each does."""
    if not arg:
        from tui_agent.ui.screens.picker import Picker

        async def chosen(mode: str | None) -> None:
            picked = parse_mode(mode or "")
            if picked is not None:
                await switch(app, picked, said=True)

        await app.push_screen(Picker("Permission mode", [
            (m, f"{m}: {MODE_WORDS[m]}") for m in MODES], current=app.backend.policy.mode),
            chosen)
        return
    mode = parse_mode(arg)
    if mode is None:
        await app.transcript.note(f"/mode {arg}: not a mode (default, plan or auto)", "error")
        return
    await switch(app, mode, said=True)


async def switch(app: ChatApp, mode: Mode, *, said: bool = False) -> None:
    """Judge every later call in ``mode``; the status bar shows it. ``said``: a line in
    the transcript says so (``/mode``; shift+tab only changes the bar, as it is pressed
    to look at each mode in turn). Leaving plan mode shows the plan."""
    policy = app.backend.policy
    before, policy.mode = policy.mode, mode
    app.status.mode = mode
    if said:
        await app.transcript.note(f"{mode} mode: {MODE_WORDS[mode]}")
    if before == "plan" and mode != "plan":
        await show_plan(app)


async def show_plan(app: ChatApp) -> None:
    """The last reply of the latest turn taken in plan mode in this conversation, as the
    plan; the prompt, when empty, offers to carry it out."""
    from tui_agent.ui.widgets.messages import PlanMessage
    from tui_agent.ui.widgets.prompt import PromptInput

    kept = app.turns.plan
    app.turns.plan = None
    if kept is None or kept[0] is not app.backend.agent:
        return
    await app.transcript.end_reply()
    await app.transcript.mount(PlanMessage(kept[1]))
    prompt = app.chat.query_one(PromptInput)
    if not prompt.text.strip():
        prompt.load_text(GO_AHEAD)
        prompt.move_cursor(prompt.document.end)
        await app.transcript.note(f"plan mode is off: enter sends \"{GO_AHEAD}\" (in the "
                                  "prompt: change it or clear it first if you like)")
    app.transcript.scroll_end(animate=False)
