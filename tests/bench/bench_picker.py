"""The ``@`` picker over 50,000 files (issue 33): does the prompt echo every key within
one frame while the picker ranks?

A directory of 50,000 files (in 5 levels of folders named like a big repository's) is
written once. Each round opens the real :class:`FilePicker` on it in a real Textual app
(``run_test``, headless) and types into it key by key, as a terminal would send them:

- at a human-fast pace (one key every ``--gap`` ms), then
- the same query again as a burst (every key at once, as a paste or a fast typist would);

and the same typing goes, in the same run, interleaved, into a bare Input with no picker:
the baseline. Key-to-screen is timed from the key handed to the app's driver to the end of
the first frame drawn (the screen's compositor refresh) with the Input showing it. Also
printed: the time from the last key to the list showing that query's best match, and
from opening the picker to its first list (listing 50,000 files included).

    python -m tests.bench.bench_picker [--files 50000] [--rounds 5] [--gap 40]
        [--query apppy] [--dir DIR] [--gitignore]

The directory is no git work tree, so the picker walks it. ``--gitignore`` writes a
``.gitignore`` of the usual patterns at its top and one in each top-level folder, so that
the walk's listing (in "opening to the first list") also matches every path against them.

Goal: every key echoed within one frame (1/60 s) beyond the baseline. Nothing is
asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.bench._common import median

FRAME = 1 / 60
WORDS = ["app", "core", "ui", "screen", "widget", "config", "test", "util", "server",
         "client", "model", "view", "agent", "tool", "file", "data", "cache", "stream",
         "session", "event", "render", "layout", "input", "picker", "rank", "list", "docs",
         "src", "lib", "build", "node", "pkg", "internal", "api", "http", "auth", "token",
         "parse", "index", "main"]
EXTENSIONS = (".py", ".ts", ".md", ".json", ".tcss", ".txt", ".go", ".rs", ".js")


def tree(count: int, seed: int = 7) -> list[str]:
    """``count`` distinct relative paths, 1 to 5 folders deep, from a fixed seed."""
    pick = random.Random(seed)
    paths: set[str] = set()
    while len(paths) < count:
        folders = [pick.choice(WORDS) + ("_" + pick.choice(WORDS) if pick.random() < 0.3
                                         else "") for _ in range(pick.randint(1, 5))]
        name = (pick.choice(WORDS) + ("_" + pick.choice(WORDS) if pick.random() < 0.5 else "")
                + (str(pick.randint(0, 99)) if pick.random() < 0.3 else "")
                + pick.choice(EXTENSIONS))
        paths.add("/".join([*folders, name]))
    return sorted(paths)


GITIGNORE = ["# the usual", "*.py[cod]", "__pycache__/", "*.egg-info/", "/dist/", ".env",
             "*.log", "!keep.log", "coverage/", "**/tmp/**", "*.tmp", "*~", "[Dd]ebug/",
             "docs/_build/", "node/**/cache_*", "*.sw[op]", ".DS_Store", "/api/http/*.rs"]
"""Patterns of the kind projects ignore (``--gitignore``); few of the tree's paths match."""
NESTED = ["*.bak", "!important.bak", "/local_*", "out/"]
"""The ``.gitignore`` of each top-level folder named by one word (40 of them)."""


def write_tree(root: Path, paths: list[str], gitignore: bool = False) -> None:
    for folder in sorted({path.rpartition("/")[0] for path in paths}):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for path in paths:
        os.close(os.open(root / path, os.O_CREAT | os.O_WRONLY, 0o644))
    if gitignore:
        (root / ".gitignore").write_text("\n".join(GITIGNORE) + "\n", encoding="utf-8")
        for top in {path.partition("/")[0] for path in paths} & set(WORDS):
            (root / top / ".gitignore").write_text("\n".join(NESTED) + "\n", encoding="utf-8")


@contextmanager
def frames() -> Iterator[list[tuple[float, str, str | None]]]:
    """Each frame drawn: when it ended, the focused Input's value on it, and the id of
    the first choice the picker's list showed (None without one)."""
    from textual.screen import Screen
    from textual.widgets import Input, OptionList

    drawn: list[tuple[float, str, str | None]] = []
    refresh = Screen._compositor_refresh

    def timed_refresh(screen: Screen[Any]) -> None:
        refresh(screen)
        typed = screen.focused.value if isinstance(screen.focused, Input) else ""
        first = None
        for options in screen.query(OptionList):
            if options.option_count:
                first = options.get_option_at_index(0).id
        drawn.append((time.perf_counter(), typed, first))

    Screen._compositor_refresh = timed_refresh  # type: ignore[method-assign,assignment]
    try:
        yield drawn
    finally:
        Screen._compositor_refresh = refresh  # type: ignore[method-assign]


async def shown(drawn: list[tuple[float, str, str | None]], since: float, typed: str,
                first: str | None = None, limit: float = 30) -> float:
    """When the first frame after ``since`` showed ``typed`` in the Input, or more typed
    after it when keys come faster than frames (and ``first`` atop the list, if given)."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        for at, value, top in drawn:
            if (at >= since and value.startswith(typed) and (typed or not value)
                    and (first is None or top == first)):
                return at
        await asyncio.sleep(0.0005)
    raise TimeoutError(f"{typed!r} (and {first!r}) never shown")


async def type_into(app: Any, drawn: list[tuple[float, str, str | None]], query: str,
                    gap: float | None) -> tuple[list[float], float]:
    """Type ``query`` (a key every ``gap`` s, or all at once): each key's time to screen,
    and when the last key was sent."""
    from textual import events

    gc.collect()  # the apps of the rounds before are garbage: not this round's to collect
    await asyncio.sleep(2 * FRAME)  # and the frame it delayed is drawn before the first key
    sent: list[float] = []
    start = time.perf_counter()
    for n, char in enumerate(query):
        if gap is not None:
            delay = start + n * gap - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        sent.append(time.perf_counter())
        key = events.Key(char, char)
        key.set_sender(app)
        app._driver.send_message(key)
    echoes = [await shown(drawn, at, query[:n + 1]) - at for n, at in enumerate(sent)]
    return echoes, sent[-1]


async def clear(pilot: Any, drawn: list[tuple[float, str, str | None]],
                top: str | None) -> None:
    """Empty the Input and wait for the list of no query (``top`` first) to be drawn."""
    from textual.widgets import Input

    pilot.app.screen.query_one(Input).value = ""
    await shown(drawn, time.perf_counter(), "", top)


async def round_picker(root: Path, paths: list[str], query: str,
                       gap: float) -> dict[str, Any]:
    from textual.app import App
    from textual.widgets import Input

    from tui_agent.core.project_files import rank
    from tui_agent.ui.screens.files import FilePicker

    best = rank(query, paths, 1)[0][0]
    app: App[None] = App()
    async with app.run_test(size=(100, 32)) as pilot:
        with frames() as drawn:
            opened = time.perf_counter()
            picker = FilePicker(root)
            await app.push_screen(picker)
            listed = await shown(drawn, opened, "", paths[0]) - opened
            picker.query_one(Input).focus()
            await pilot.pause()  # as the bare round does: the focus drawn before typing
            paced, last = await type_into(app, drawn, query, gap)
            paced_results = await shown(drawn, last, query, best) - last
            await clear(pilot, drawn, paths[0])
            burst, last = await type_into(app, drawn, query, None)
            burst_results = await shown(drawn, last, query, best) - last
    return {"listed": listed, "paced": paced, "burst": burst,
            "paced_results": paced_results, "burst_results": burst_results}


async def round_bare(query: str, gap: float) -> dict[str, Any]:
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Input()

    app = Bare()
    async with app.run_test(size=(100, 32)) as pilot:
        with frames() as drawn:
            app.query_one(Input).focus()
            await pilot.pause()
            paced, _ = await type_into(app, drawn, query, gap)
            await clear(pilot, drawn, None)
            burst, _ = await type_into(app, drawn, query, None)
    return {"paced": paced, "burst": burst}


def ms(values: list[float]) -> str:
    return (f"median {median(values) * 1000:6.1f} ms, worst {max(values) * 1000:6.1f} ms"
            f" ({max(values) / FRAME:.2f} frames)")


async def main(count: int, rounds: int, gap: float, query: str, keep: Path | None,
               gitignore: bool) -> None:
    paths = tree(count)
    with tempfile.TemporaryDirectory() as folder:
        root = keep or Path(folder)
        if not (keep and keep.is_dir() and any(keep.iterdir())):
            began = time.perf_counter()
            write_tree(root, paths, gitignore)
            print(f"{count} files written in {time.perf_counter() - began:.1f} s")
        from tui_agent.core.project_files import list_files

        began = time.perf_counter()
        paths = list_files(root)  # what the picker will show (the .gitignore files too)
        print(f"{len(paths)} files listed in {time.perf_counter() - began:.2f} s")
        await round_bare(query, gap)  # warm the imports
        bare: dict[str, list[float]] = {"paced": [], "burst": []}
        ours: dict[str, list[float]] = {k: [] for k in ("paced", "burst", "listed",
                                                        "paced_results", "burst_results")}
        for i in range(rounds):
            for kind in (("bare", "picker") if i % 2 else ("picker", "bare")):
                if kind == "bare":
                    for key, values in (await round_bare(query, gap)).items():
                        bare[key] += values
                    continue
                for key, value in (await round_picker(root, paths, query, gap)).items():
                    ours[key] += value if isinstance(value, list) else [value]
    print(f"typing {query!r} into the @ picker over {count} files, {rounds} rounds, "
          f"against a bare Input in the same run")
    for way, said in (("paced", f"one key every {gap * 1000:.0f} ms"),
                      ("burst", "all keys at once")):
        print(f"  key to screen, {said}:")
        print(f"    bare Input  {ms(bare[way])}")
        print(f"    picker      {ms(ours[way])}")
        beyond = max(ours[way]) - max(bare[way])
        print(f"    worst beyond the bare worst: {beyond * 1000:.1f} ms = "
              f"{beyond / FRAME:.2f} frames   (goal: within 1 frame)")
        print(f"  last key to the best match on screen, {said}: "
              f"{ms(ours[way + '_results'])}")
    print(f"  opening to the first list (listing {count} files): {ms(ours['listed'])}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gap", type=float, default=40, help="ms between keys when paced")
    parser.add_argument("--query", default="apppy")
    parser.add_argument("--dir", type=Path, help="keep the files there (written if it is "
                        "empty, reused as it is otherwise) rather than in a temporary one")
    parser.add_argument("--gitignore", action="store_true", help="with .gitignore files "
                        "for the walk to match every path against")
    args = parser.parse_args()
    asyncio.run(main(args.files, args.rounds, args.gap / 1000, args.query, args.dir,
                     args.gitignore))
