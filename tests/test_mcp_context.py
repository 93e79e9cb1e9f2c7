"""What a person brings from servers into a conversation: a resource attached to the
message (``run --attach``, ``/attach``, a template filled in with the server's completion
suggestions) and a server's prompt (``run --mcp-prompt``, ``/SERVER:PROMPT``), whose
messages keep their roles. Against our asking server (the SDK's)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.asking_server import GOT_PROMPT, LISTED_PROMPTS
from tests.fakes.llm_server import FakeLLM, Reply
from tests.test_elicitation import asking_config, everything_config, run
from tui_agent.tools.resource_tools import fill_template, template_variables

pytestmark = pytest.mark.slow


def test_templates_are_read_and_filled() -> None:
    assert template_variables("menu://{course}/{dish}{?size,spice}") == \
        ["course", "dish", "size", "spice"]
    assert fill_template("menu://{course}/{dish}", {"course": "mains", "dish": "fish & chips"}) \
        == "menu://mains/fish%20%26%20chips"


def test_a_headless_run_starts_from_a_prompt_and_an_attachment(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="A risotto for four."))
    conf = asking_config(tmp_path, fake_llm)
    done = run(conf, "--attach", "asking:menu://today", "--mcp-prompt", "asking:plan_dinner",
               "guests=4")
    assert done.returncode == 0, done.stderr
    messages = fake_llm.requests[0]["messages"][1:]  # after the system prompt
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == "I am planning a dinner for 4."
    assert messages[1]["content"] == "What is on the menu today?"
    assert messages[2]["content"] == (
        '<resource server="asking" uri="menu://today">\nrisotto, sea bass, tiramisu\n'
        "</resource>\n\nSuggest a menu from it.")
    bad = run(conf, "--mcp-prompt", "asking", "guests=4")
    assert bad.returncode == 2 and "prompt 'asking' is not SERVER:PROMPT" in bad.stdout


@pytest.mark.anyio
async def test_attach_fills_a_template_with_the_servers_suggestions(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    from textual.widgets import Input

    from tests.ui.kit import SIZE, make_app, ready, shown, until, with_asking_server
    from tui_agent.ui.screens.picker import Picker
    from tui_agent.ui.screens.template import TemplateForm

    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url, auto=False)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*"/attach", "enter")
        await shown(pilot, app, Picker, "the picker")
        await pilot.press(*"template")
        await pilot.pause(0.2)
        await pilot.press("down", "enter")
        await shown(pilot, app, TemplateForm, "the form")
        form = app.screen
        await pilot.press("m", "a")
        course = form.query_one("#var-0", Input)
        await until(pilot, lambda: course._suggestion == "mains", what="the suggestion")
        await pilot.press("right", "enter", "r")
        dish = form.query_one("#var-1", Input)
        await until(pilot, lambda: dish._suggestion == "risotto", what="the second suggestion")
        await pilot.press("right", "enter")
        await until(pilot, lambda: app.attachments == ["asking:menu://mains/risotto"],
                    what="the attachment")
        await app.shut_down(0)


@pytest.mark.anyio
async def test_a_watched_resource_says_when_it_changed(tmp_path: Path) -> None:
    """On 2026-07-28 the listen stream is reopened with the resource, and its change is
    told; a 2025 session of a server that cannot subscribe says it cannot."""
    import asyncio

    from tests.test_client_side import asking_server, hub_of
    from tests.test_hub import call
    from tui_agent.tools.client import ClientSide

    servers = {"a": asking_server().model_copy(update={"protocol": "auto"}),
               "old": asking_server()}
    async with hub_of(servers, tmp_path, client_side=lambda n, c: ClientSide()) as hub:
        changed: list[tuple[str, str]] = []
        hub.resource_listeners.append(lambda server, uri: changed.append((server, uri)))
        assert not await hub.connections["old"].watch("menu://today")
        assert await hub.connections["a"].watch("menu://today")
        # The stream is reopened in the background: change until told, by the clock (a
        # call takes far longer on a busy machine than a count of them assumes).
        deadline = asyncio.get_running_loop().time() + 60
        while not changed:
            assert asyncio.get_running_loop().time() < deadline, "no change was told in 60 s"
            await call(hub, "a__change_menu", text="soup of the day")
            await asyncio.sleep(0.05)
        assert changed[0] == ("a", "menu://today")
        assert await hub.read_resource("a", "menu://today") == "soup of the day"


@pytest.mark.anyio
async def test_an_attached_resource_that_changes_goes_again(tmp_path: Path,
                                                            fake_llm: FakeLLM) -> None:
    import asyncio

    from tests.ui.kit import SIZE, make_app, ready, until, with_asking_server
    from tui_agent.ui.widgets.messages import Note

    fake_llm.push(Reply(text="noted"))
    conf = with_asking_server(tmp_path / "c.toml", fake_llm.base_url)
    app = make_app(conf)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        hub = app.backend.hub
        assert hub is not None
        await hub.wait_all()
        await pilot.press(*"/attach asking:menu://today", "enter")
        await until(pilot, lambda: app.attachments == ["asking:menu://today"])
        await pilot.press(*"what is on?", "enter")
        await until(pilot, lambda: len(fake_llm.requests) == 1 and not app.attachments,
                    what="the message with the resource")
        assert "risotto" in fake_llm.requests[0]["messages"][-1]["content"]
        spec = next(s for s in hub.specs() if s.tool == "change_menu")
        # Changed until the change is noticed: the subscription may not be in place yet.
        # By the clock, not by a count: a call takes far longer on a busy machine.
        loop = asyncio.get_running_loop()
        deadline, calls = loop.time() + 60, 0
        while not app.attachments:
            assert loop.time() < deadline, f"no change noticed after {calls} changes in 60 s"
            await hub.call(spec, {"text": "soup"})
            calls += 1
            await pilot.pause(0.05)
        await until(pilot, lambda: any("asking:menu://today changed" in str(n.render())
                                       for n in app.query(Note)), 30, "the note")
        assert app.attachments == ["asking:menu://today"]
        await app.shut_down(0)


def test_a_headless_prompt_without_its_required_argument_names_it(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """server-everything's ``args-prompt`` without ``city``: an error naming the prompt, its
    server and the argument with what it is for (not the server's raw -32602), exit 2,
    nothing sent to the model."""


    conf = everything_config(tmp_path, fake_llm)
    done = run(conf, "--mcp-prompt", "asking:args-prompt", "state=Ohio")
    assert done.returncode == 2, done.stderr
    assert "prompt 'args-prompt' of server 'asking' needs 1 argument not given: city (Name " \
        "of the city); add city=VALUE after asking:args-prompt" in done.stdout
    assert "-32602" not in done.stdout and not fake_llm.requests
    fake_llm.push(Reply(text="Sunny."))
    done = run(conf, "--mcp-prompt", "asking:args-prompt", "city=Columbus", "state=Ohio")
    assert done.returncode == 0, done.stdout + done.stderr
    assert fake_llm.requests[0]["messages"][-1]["content"] == \
        "What's weather in Columbus, Ohio?"


@contextlib.asynccontextmanager
async def prompt_form(tmp_path: Path, fake_llm: FakeLLM,
                      typed: str) -> AsyncIterator[tuple[Any, Any, Any]]:
    """The app with server-everything as ``asking``, ``typed`` (``/asking:PROMPT ...``)
    entered, and the prompt's arguments form once it is shown: (pilot, app, form)."""
    from tests.ui.kit import SIZE, make_app, ready, shown
    from tui_agent.ui.screens.prompt_args import PromptArguments

    app = make_app(everything_config(tmp_path, fake_llm))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await pilot.press(*typed, "enter")
        yield pilot, app, await shown(pilot, app, PromptArguments, "the form")


@pytest.mark.anyio
async def test_a_typed_prompt_lacking_an_argument_asks_for_it_in_a_form(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``/asking:args-prompt state=Ohio`` (server-everything): a form with the prompt's
    arguments and what each is for, the given one filled in, the missing one focused;
    what is typed there completes the prompt, which then goes to the model."""
    from textual.widgets import Input

    from tests.ui.kit import until
    from tui_agent.ui.widgets.messages import Note

    fake_llm.push(Reply(text="Sunny."))
    typed = "/asking:args-prompt state=Ohio"
    async with prompt_form(tmp_path, fake_llm, typed) as (pilot, app, form):
        said = " ".join(str(w.render()) for w in form.query("Static"))
        assert "city *" in said and "Name of the city" in said and "state" in said
        assert form.query_one("#field-1", Input).value == "Ohio"
        city = form.query_one("#field-0", Input)
        await until(pilot, lambda: app.focused is city, what="the missing one focused")
        await pilot.press("enter")  # city is still missing: nothing goes
        assert "required" in str(form.query_one("#problem-0").render())
        await pilot.press(*"Columbus", "enter")
        await until(pilot, lambda: len(fake_llm.requests) >= 1, what="the prompt's turn")
        assert fake_llm.requests[0]["messages"][-1]["content"] == \
            "What's weather in Columbus, Ohio?"
        assert not any("-32602" in str(n.render()) for n in app.query(Note))
        await app.shut_down(0)


def server_log(tmp_path: Path) -> str:
    """What the asking server wrote to stderr (its log file)."""
    log = tmp_path / "home" / "state" / "tui-agent" / "logs" / "asking.log"
    return log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.anyio
async def test_the_palette_offers_the_servers_prompts(tmp_path: Path,
                                                      fake_llm: FakeLLM) -> None:
    """ctrl+p lists ``/asking:plan_dinner`` with its description; choosing it asks for
    its argument (the palette has nowhere to type one), then uses the prompt, listing the
    server's prompts once for the form and the use both."""
    from textual.command import CommandList, CommandPalette
    from textual.widgets import Input

    from tests.ui.kit import SIZE, make_app, ready, shown, until, with_asking_server
    from tui_agent.ui.screens.prompt_args import PromptArguments

    fake_llm.push(Reply(text="A risotto."))
    app = make_app(with_asking_server(tmp_path / "c.toml", fake_llm.base_url))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot, app)
        await until(pilot, lambda: app.prompt_list, what="the prompts")
        await pilot.press("ctrl+p")
        await shown(pilot, app, CommandPalette, "the palette")
        await pilot.press(*"plan_dinner")
        hits = app.screen.query_one(CommandList)

        def offered() -> str:
            if hits.option_count == 0 or hits.highlighted is None:
                return ""
            return str(hits.get_option_at_index(hits.highlighted).prompt)

        await until(pilot, lambda: "/asking:plan_dinner" in offered(), what="the prompt")
        assert "MCP prompt of asking: Plan a dinner" in offered()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PromptArguments)
                    and app.focused is app.screen.query_one("#field-0", Input),
                    what="the form, its field focused")
        await pilot.press(*"4", "enter")
        await until(pilot, lambda: len(fake_llm.requests) >= 1, what="the prompt's turn")
        messages = fake_llm.requests[0]["messages"][1:]
        assert messages[0]["content"] == "I am planning a dinner for 4."
        await until(pilot, lambda: GOT_PROMPT in server_log(tmp_path),
                    what="the prompts/get in the server's log, its listings before it")
        assert server_log(tmp_path).count(LISTED_PROMPTS) == 2  # the palette's, the use's
        await app.shut_down(0)


@pytest.mark.anyio
async def test_an_argument_cleared_in_the_prompt_form_is_not_sent(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``/asking:args-prompt state=Ohio``, then the form: the person types the city and
    clears the state that was filled in. What the form holds wins: the prompt goes without
    a state (it was sent all the same, the form's answer merged over the typed one)."""
    from textual.widgets import Input

    from tests.ui.kit import until

    fake_llm.push(Reply(text="Sunny."))
    typed = "/asking:args-prompt state=Ohio"
    async with prompt_form(tmp_path, fake_llm, typed) as (pilot, app, form):
        form.query_one("#field-1", Input).clear()
        await pilot.press(*"Columbus", "enter")  # the city has the focus
        await until(pilot, lambda: len(fake_llm.requests) >= 1, what="the prompt's turn")
        assert fake_llm.requests[0]["messages"][-1]["content"] == "What's weather in Columbus?"
        await app.shut_down(0)


@pytest.mark.anyio
async def test_the_prompt_form_completes_each_argument_with_the_servers_values(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """``/asking:completable-prompt`` (server-everything's, whose arguments complete): the
    department suggests ``Engineering`` once ``En`` is typed and ``→`` takes it; the name
    then suggests ``Alice``, which the server offers only given the department filled in
    the field before (the form's values go with each ``completion/complete``)."""
    from textual.widgets import Input

    from tests.ui.kit import until

    fake_llm.push(Reply(text="Done."))
    async with prompt_form(tmp_path, fake_llm, "/asking:completable-prompt") as (pilot, app, form):
        department, name = form.query_one("#field-0", Input), form.query_one("#field-1", Input)
        await until(pilot, lambda: app.focused is department, what="the first field focused")
        await pilot.press(*"En")
        await until(pilot, lambda: department._suggestion == "Engineering",
                    what="the department suggested")
        await pilot.press("right", "tab", "A")
        assert department.value == "Engineering"
        await until(pilot, lambda: name._suggestion == "Alice", what="the name suggested")
        await pilot.press("right", "ctrl+s")
        await until(pilot, lambda: len(fake_llm.requests) >= 1, what="the prompt's turn")
        assert fake_llm.requests[0]["messages"][-1]["content"] == \
            "Please promote Alice to the head of the Engineering team."
        await app.shut_down(0)
