"""The Textual app's figures (issue 4), each against a baseline measured in the same run.

1. Start to first frame with the prompt focused: ``tui-agent``'s app, started the way
   the command starts it, against a bare Textual app with one Input, as fresh
   processes, interleaved (target: within 1.5x; litellm and mcp must not be loaded by
   then, and the config is validated after it: the modules loaded are printed too).
   Headless, in the app's own ``on_ready``; the figure a user sees, on a terminal, is
   ``tests.bench.bench_frame``'s.
2. Streaming list- and code-heavy Markdown at 200 tokens/s: how long after the last
   token the whole text is on screen, and how long a key pressed mid-stream takes to
   show in the prompt (targets: 2 frames and 1 frame, a frame being 1/60 s).
3. Opening a resumed 2,000-message session against an empty one (target: within 2x).

    python -m tests.bench.bench_tui [--rounds 5] [--tokens 2000] [--messages 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.bench._common import env, median, spread

FRAME = 1 / 60
CHILD = """
import os, sys, time
t0 = float(os.environ["BENCH_T0"])
kind = sys.argv[1]
if kind == "bare":
    from textual.app import App
    from textual.widgets import Input
    class Bare(App):
        def compose(self):
            yield Input()
        def on_ready(self):
            assert self.focused is not None
            print(f"{time.time() - t0:.4f} -")
            self.exit()
    Bare().run(headless=True, size=(100, 30))
else:  # what `tui-agent` does, but for the terminal check and run_app
    from tui_agent.cli import build_parser, startup
    from tui_agent.ui.app import AgentApp
    from tui_agent.ui.widgets.prompt import PromptInput
    class Timed(AgentApp):
        def on_ready(self):
            assert isinstance(self.focused, PromptInput)
            heavy = ",".join(m for m in ("litellm", "mcp", "pydantic") if m in sys.modules)
            print(f"{time.time() - t0:.4f} {heavy or 'none'}")
            self.exit()
    Timed(startup(build_parser().parse_args([]))).run(headless=True, size=(100, 30))
"""

MARKDOWN = """\
## Step {i}

- read `src/module_{i}.py` and list its **public** functions
- run the tests, then compare the numbers with the baseline

```python
def step_{i}(values: list[int]) -> int:
    total = 0
    for v in values:
        total += v * {i}
    return total
```

"""


def first_frame(rounds: int) -> None:
    times: dict[str, list[float]] = {"bare": [], "ours": []}
    heavy = set()
    with tempfile.TemporaryDirectory() as home:
        environ = {**env(), "XDG_CONFIG_HOME": home, "XDG_STATE_HOME": home,
                   "XDG_DATA_HOME": home, "TUI_AGENT_CONFIG": ""}
        for i in range(rounds + 1):
            for kind in (("bare", "ours") if i % 2 else ("ours", "bare")):
                environ["BENCH_T0"] = repr(time.time())
                out = subprocess.run([sys.executable, "-c", CHILD, kind], env=environ,
                                     capture_output=True, text=True, check=True).stdout
                took, loaded = out.split()[-2:]
                if i:  # the first round warms the page cache
                    times[kind].append(float(took))
                if kind == "ours":
                    heavy.add(loaded)
    print(f"first frame with the prompt focused, {rounds} fresh processes each")
    for kind, values in times.items():
        print(f"  {kind:<5} {spread(values)} s")
    print(f"  ratio ours/bare (median): {median(times['ours']) / median(times['bare']):.2f}x"
          f"   (target: within 1.5x); heavy modules loaded by then: {', '.join(heavy)}")


@contextmanager
def frames_after(chars: int) -> Iterator[list[float]]:
    """When each frame was drawn (the screen's compositor refresh returned) with no layout
    pending, once Markdown widgets have finished appending ``chars`` characters. Timed at
    the frame itself: the pilot's own wait for idle sleeps at least 20 ms, more than a
    frame."""
    from textual.await_complete import AwaitComplete
    from textual.screen import Screen
    from textual.widgets import Markdown

    drawn: list[float] = []
    appended = [0]
    refresh, append = Screen._compositor_refresh, Markdown.append

    def timed_refresh(screen: Screen[Any]) -> None:
        refresh(screen)
        if appended[0] >= chars and not screen._layout_widgets:
            drawn.append(time.perf_counter())

    def counted_append(markdown: Markdown, text: str) -> AwaitComplete:
        done = append(markdown, text)

        async def count() -> None:
            await done
            appended[0] += len(text)

        return AwaitComplete(count())

    Screen._compositor_refresh = timed_refresh  # type: ignore[method-assign,assignment]
    Markdown.append = counted_append  # type: ignore[method-assign,assignment]
    try:
        yield drawn
    finally:
        Screen._compositor_refresh = refresh  # type: ignore[method-assign]
        Markdown.append = append  # type: ignore[method-assign]


async def stream_once(tokens: int, rate: float) -> tuple[float, list[float], str]:
    """One reply streamed: how long after the last token it was all on screen, the key
    echoes during it, and how much of the transcript was laid out at the end."""
    from tests.ui.kit import laid_out, make_app
    from tui_agent.core.events import TextDelta, TurnDone, Usage
    from tui_agent.ui.widgets.messages import AssistantMessage
    from tui_agent.ui.widgets.prompt import PromptInput

    text = "".join(MARKDOWN.format(i=i) for i in range(tokens // 60 + 1))
    pieces = [text[i:i + 4] for i in range(0, len(text), 4)][:tokens]
    whole = "".join(pieces)
    app = make_app()
    echo: list[float] = []
    async with app.run_test(size=(100, 40)) as pilot:
        await app.transcript.user("go")
        prompt = app.chat.query_one(PromptInput)
        with frames_after(len(whole)) as drawn:
            start = time.perf_counter()
            for n, piece in enumerate(pieces):
                await app.transcript.show(TextDelta(piece))
                if n % 100 == 50:
                    # The pilot sends the key; the echo is timed by watching the prompt, not
                    # by the pilot's own wait for the app to go idle.
                    before = len(prompt.text)
                    pressed = time.perf_counter()
                    press = asyncio.create_task(pilot.press("x"))
                    while len(prompt.text) == before and time.perf_counter() - pressed < 2:
                        await asyncio.sleep(0.0005)
                    echo.append(time.perf_counter() - pressed)
                    await press
                if n == len(pieces) - 1:
                    break
                delay = start + (n + 1) / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            ended = time.perf_counter()  # the last token has just been handed over
            while not drawn and time.perf_counter() - ended < 30:
                await asyncio.sleep(0.001)
        layout = (f"{len(laid_out(app.transcript))} of the transcript's "
                  f"{len(list(app.transcript.walk_children()))} widgets laid out")
        await app.transcript.show(TurnDone(Usage()))
        assert app.transcript.query_one(AssistantMessage).source == whole
    return drawn[0] - ended, echo, layout


async def streaming(tokens: int, rate: float, rounds: int) -> None:
    shown: list[float] = []
    echo: list[float] = []
    layouts = set()
    for _ in range(rounds):
        took, echoes, layout = await stream_once(tokens, rate)
        shown.append(took)
        echo += echoes
        layouts.add(layout)
    print(f"streaming {tokens} tokens of list/code Markdown at {rate:.0f} tok/s, {rounds} "
          f"rounds (at the end: {'; '.join(sorted(layouts))}, the rest folded)")
    print(f"  last token on screen after the stream ended: {spread(shown, 1000)} ms; median "
          f"{median(shown) / FRAME:.2f} frames   (target: within 2 frames)")
    if echo:
        echo.sort()
        late = sum(1 for took in echo if took > FRAME)
        print(f"  key echo during the stream, {len(echo)} keys: median "
              f"{median(echo) * 1000:.1f} ms = {median(echo) / FRAME:.2f} frames, 90th "
              f"percentile {echo[int(len(echo) * 0.9)] * 1000:.1f} ms, max {echo[-1] * 1000:.1f}"
              f" ms; {late} over a frame   (target: within 1 frame)")


def write_session(path: Path, messages: int) -> str:
    from tui_agent.core.session import SessionWriter

    writer = SessionWriter.create(path, {"model": "bench"})
    for i in range(messages):
        if i % 2 == 0:
            writer.message({"role": "user", "content": f"question {i}: what about step {i}?"},
                           sync=False)
        else:
            writer.message({"role": "assistant", "content": MARKDOWN.format(i=i)}, sync=False)
    writer.keep()  # an empty one too: it is the baseline
    writer.close()
    return writer.id


async def open_resumed(session: str) -> float:
    from tests.ui.kit import make_app

    started = time.perf_counter()
    app = make_app(resume=session)
    async with app.run_test(size=(100, 40)) as pilot:
        while "resumed" not in " ".join(str(n.render()) for n in app.transcript.query("Note")):
            if time.perf_counter() - started > 60:
                raise TimeoutError("the resumed session did not open within 60 s")
            await asyncio.sleep(0.002)
        await pilot.pause()
        took = time.perf_counter() - started
        await app.action_quit()  # closes the session file, so the next round can open it
    return took


async def resuming(messages: int, rounds: int) -> None:
    from tui_agent.config import paths

    store = paths.sessions_dir()
    store.mkdir(parents=True, exist_ok=True)
    empty = write_session(store / "empty.jsonl", 0)
    full = write_session(store / "full.jsonl", messages)
    times: dict[str, list[float]] = {"empty": [], "full": []}
    await open_resumed(empty)  # warm imports
    for i in range(rounds):
        for kind in (("empty", "full") if i % 2 else ("full", "empty")):
            times[kind].append(await open_resumed(empty if kind == "empty" else full))
    print(f"opening a resumed session, {rounds} rounds each")
    print(f"  empty          {spread(times['empty'])} s")
    print(f"  {messages:,} messages {spread(times['full'])} s")
    print(f"  ratio full/empty (median): {median(times['full']) / median(times['empty']):.2f}x"
          "   (target: within 2x)")


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            os.environ[var] = home
        os.environ.pop("TUI_AGENT_CONFIG", None)
        first_frame(args.rounds)
        asyncio.run(streaming(args.tokens, args.rate, args.rounds))
        asyncio.run(resuming(args.messages, args.rounds))


if __name__ == "__main__":
    main()
