"""What ``tui-agent`` has imported when its first frame reaches the terminal, and the
garbage collector held until then (issue 33).

The command runs as a user starts it (a fresh process on a pseudo-terminal, an empty
HOME, no key): at the first frame written to the terminal, ``sys.modules`` is listed
(``tests.bench.bench_frame`` does the same for its figures). None of the modules below
draws anything in that frame; each costs start-up time, so each is imported after it,
where it is first needed."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tests.bench.bench_frame import clean_env, modules_at_first_paint
from tests.ui.kit import SIZE, until, write_config
from tui_agent.ui.app import AgentApp
from tui_agent.ui.gcpause import hold_until_first_frame
from tui_agent.ui.startup import Startup

pytestmark = pytest.mark.slow

NOT_BEFORE_THE_FIRST_FRAME = {
    "pydantic": "the config's models: the config is validated just after the first frame",
    "litellm": "the model client (3.5-8 s): imported when a turn needs the model",
    "openai": "litellm's client, with litellm",
    "tiktoken": "token counting, for a turn",
    "httpx": "the HTTP client of litellm and the MCP SDK",
    "anyio": "the MCP SDK's async layer, with the servers",
    "mcp": "the MCP SDK (1-1.7 s): the servers start after the config is loaded",
    "mcp_types": "the MCP SDK's types, with the SDK",
    "jsonschema": "tool arguments' schemas, with the servers",
    "docker": "the Docker transport, with a server that runs in a container",
    "starlark": "code mode's sandbox, with the first script",
    "tomlkit": "writing the config back, on 'always allow'",
    "markdown_it": "Markdown parsing, with the first reply or welcome text",
    "pygments": "code highlighting, with the first code block",
    "textual.widgets._markdown": "the Markdown widget, with the first reply or welcome text",
    "tui_agent.core.llm": "our model layer (litellm's only importer), for a turn",
    "tui_agent.core.agent": "the chat loop, built once the config is loaded",
    "tui_agent.core.events": "a turn's events (16 frozen dataclasses), with the first turn",
    "tui_agent.core.session": "the session files, with the first message or a resume",
    "tui_agent.core.attachments": "attachments (files, images), with the first message",
    "tui_agent.tools.hub": "the MCP client, started after the config is loaded",
    "tui_agent.tools.auth": "the OAuth code, with a server that asks to log in",
    "tui_agent.codemode": "code mode, built with the backend",
    "tui_agent.config.models": "the config's pydantic models, loaded after the first frame",
    "tui_agent.wiring.runtime": "the backend, built once the config is loaded",
    "tui_agent.cli.mcp_parser": "`tui-agent mcp`'s flags, built only for that command",
    "tui_agent.wiring.build": "the composition root, with the backend",
    "textual.widgets._footer": "the key bar: it draws its keys after the first frame anyway",
    "tui_agent.ui.composer": "sending, attaching and editing, with the first message",
    "tui_agent.ui.screens": "every other screen, opened later",
    "tui_agent.ui.widgets.messages": "the messages (Markdown), with the first one",
    "tui_agent.ui.widgets.tool_card": "tool cards, with the first tool call",
}
"""Each module (or package) the first frame must not wait for, and why it can wait."""


def loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_the_first_frame_imports_nothing_it_does_not_draw(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    modules = modules_at_first_paint(clean_env(str(tmp_path)), str(work))
    # The listing is the app's own at its first frame (not an empty or early one).
    assert {"textual.app", "tui_agent.ui.app", "tui_agent.ui.widgets.prompt"} <= set(modules)
    early = {name: why for name, why in NOT_BEFORE_THE_FIRST_FRAME.items()
             if loaded(modules, name)}
    assert not early, "imported before the first frame: " + "; ".join(
        f"{name} ({why})" for name, why in early.items())


@pytest.mark.anyio
async def test_the_collector_runs_again_once_the_first_frame_is_drawn(tmp_path: Path) -> None:
    """The command holds every collection on the way to the first frame (what start-up
    allocates lives as long as the app); the app lets the collector run again then, with
    what start-up made frozen (no collection walks it again)."""
    app = AgentApp(Startup(config=write_config(tmp_path / "c.toml")))
    gc.unfreeze()
    hold_until_first_frame()
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, gc.isenabled, what="the collector to run again")
            assert gc.get_freeze_count() > 0
            await pilot.press("ctrl+q")
    finally:
        gc.enable()
        gc.unfreeze()  # this test's process goes on with other tests
