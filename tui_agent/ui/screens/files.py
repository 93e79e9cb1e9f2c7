"""The ``@`` file picker: the project's files (what git keeps, or what ``.gitignore``
leaves), matched fuzzily as you type, the matched letters marked. Enter puts the path
after the ``@`` in the prompt; the file itself is read when the message is sent.

Typing never waits for the ranking. The files are listed, and then indexed, in a thread;
each keystroke starts a ranking in a worker thread, a block of paths at a time, and a newer
keystroke makes it stale: it stops at its next block and its result is never shown. Until
the ranking of what is typed ends, the list shows the previous query's matches (as fzf and
VS Code's quick open do), with a quiet "ranking…" after the title when that takes longer
than :data:`HINT_AFTER`. Enter pressed meanwhile takes the best match of what was typed as
soon as it is ranked (or nothing, when nothing matches or another key comes first).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from textual import work
from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.core.project_files import FileIndex, list_files
from tui_agent.tools.text import clean
from tui_agent.ui.screens.picker import Picker

SHOWN = 50
"""Matches listed at most (the best ones)."""
HINT_AFTER = 0.15
"""Seconds a ranking runs before the title says so (a quicker one would only flicker)."""
WORK_SLICE = 0.001
"""Seconds a ranking thread works before it pauses for :data:`PAUSE`."""
PAUSE = 0.0005
TITLE = "Attach a file to the message"


class FilePicker(Picker):
    def __init__(self, root: Path, files: list[str] | None = None,
                 lister: Callable[[Path], list[str]] = list_files,
                 typed: Callable[[], str] | None = None) -> None:
        super().__init__(TITLE, [],
                         placeholder="type part of a path (letters in order: 'apy' finds "
                                     "app.py)",
                         hint="enter puts @path in the prompt · esc keeps the @ as typed · "
                              "files git ignores are not listed")
        self.root = root
        self.files = files
        """The project's files; None while they are listed."""
        self.lister = lister
        """What lists them (in a thread) when they were not given."""
        self.typed = typed
        """What was typed after the ``@`` before the picker took the keys (taken out of
        the prompt when the picker opens): the start of its query."""
        self.index: FileIndex | None = None
        """The files ready for ranking; None until they are listed and indexed."""
        self.generation = 0
        """Counts the queries typed (and the closing): a ranking started for an older one
        is stale."""
        self.shown: str | None = None
        """The query whose matches the list shows; None before the first ranking."""
        self.taking = False
        """Enter was pressed while what was typed was still being ranked."""
        self._hint_timer: Timer | None = None
        self.hinting = False
        """The title says "ranking…"."""

    async def on_mount(self) -> None:
        carried = self.typed() if self.typed is not None else ""
        if carried:
            field = self.query_one(Input)
            field.value = carried
            field.cursor_position = len(carried)
        self._prepare()

    def on_unmount(self) -> None:
        self.generation += 1  # a ranking under way stops at its next block

    def dismiss(self, result: str | None = None) -> AwaitComplete:
        """Closing (a file taken, or esc) makes a ranking under way stale at once and
        forgets an enter waiting for it: the screen leaves the stack over a few turns of
        the event loop, and a ranking ending meanwhile must not take a file (a second
        dismiss would pop the chat screen)."""
        self.generation += 1
        self.taking = False
        return super().dismiss(result)

    @work(group="files")
    async def _prepare(self) -> None:
        """List the files (unless given) and index them, both off the UI thread, then rank
        what has been typed meanwhile."""
        if self.files is None:
            self.files = await asyncio.to_thread(self.lister, self.root)
        self.index = await asyncio.to_thread(FileIndex, self.files)
        self._rank(self.query_one(Input).value)

    def _options(self, query: str) -> list[Option]:
        """What the list shows before anything is ranked."""
        if self.files is None:
            return [Option(Content("listing the project's files…"), disabled=True)]
        return self._present([(path, []) for path in self.files[:SHOWN]])

    def _present(self, found: list[tuple[str, list[int]]]) -> list[Option]:
        if not found:
            said = "no file matches" if self.files else f"no files in {self.root}"
            return [Option(Content(said), disabled=True)]
        return [Option(marked(path, spots), id=path) for path, spots in found]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        event.prevent_default()  # not the picker's own filtering
        self.taking = False  # typing on after enter: the enter was not meant for this
        self._rank(event.value)

    def _rank(self, query: str) -> None:
        self.generation += 1
        if self.index is None:
            return  # ranked once the files are listed
        if self._hint_timer is None:
            self._hint_timer = self.set_timer(HINT_AFTER, self._say_ranking)
        # Started once the key's echo is drawn: until then the UI thread has the
        # interpreter to itself.
        self.call_after_refresh(self._start_ranking, self.index, query.strip(),
                                self.generation)

    def _start_ranking(self, index: FileIndex, query: str, generation: int) -> None:
        if generation == self.generation:  # else a newer key has its own on the way
            self._ranking(index, query, generation)

    @work(exclusive=True, group="rank")
    async def _ranking(self, index: FileIndex, query: str, generation: int) -> None:
        found = await asyncio.to_thread(self._rank_off_thread, index, query, generation)
        if found is not None and generation == self.generation:
            self._show(query, found)

    def _rank_off_thread(self, index: FileIndex, query: str,
                         generation: int) -> list[tuple[str, list[int]]] | None:
        """The matches of ``query``, or None once a newer query (or the closing) made
        them stale. Runs in a worker thread, pausing every :data:`WORK_SLICE`: the UI
        thread, if it waits for the interpreter meanwhile, gets it then (``sleep(0)`` is
        not enough: this thread often takes it straight back before the other wakes)."""
        worked = time.perf_counter()
        for found in index.ranking(query, SHOWN):
            if generation != self.generation:
                return None
            if found is not None:
                return found
            if time.perf_counter() - worked > WORK_SLICE:
                time.sleep(PAUSE)
                worked = time.perf_counter()
        return None  # never reached: ranking() ends with the result

    def _show(self, query: str, found: list[tuple[str, list[int]]]) -> None:
        options = self.query_one(OptionList)
        kept = self._highlighted_id(options) if query == (self.shown or "") else None
        options.clear_options()
        options.add_options(self._present(found))
        if options.option_count:  # the same query ranked again keeps the row the arrows chose
            ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
            options.highlighted = ids.index(kept) if kept in ids else 0
        self.shown = query
        if self._hint_timer is not None:
            self._hint_timer.stop()
            self._hint_timer = None
        if self.hinting:
            self.hinting = False
            self.query_one(".title", Static).update(Content(TITLE))
        if self.taking:
            self.taking = False
            self._take_highlighted()

    @staticmethod
    def _highlighted_id(options: OptionList) -> str | None:
        if options.highlighted is None or options.highlighted >= options.option_count:
            return None
        return options.get_option_at_index(options.highlighted).id

    def _say_ranking(self) -> None:
        self._hint_timer = None
        if self.shown != self.query_one(Input).value.strip():
            self.hinting = True
            self.query_one(".title", Static).update(
                Content.assemble(TITLE, ("  ranking…", "dim")))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter takes the highlighted file (never the typed text), once the list shows
        the matches of what is typed."""
        event.stop()
        event.prevent_default()  # not the picker's own handler too
        if self.shown is None or self.shown != event.value.strip():
            self.taking = True
            return
        self._take_highlighted()

    def _take_highlighted(self) -> None:
        options = self.query_one(OptionList)
        index = options.highlighted or 0
        if options.option_count and not options.get_option_at_index(index).disabled:
            self.dismiss(options.get_option_at_index(index).id)


def marked(path: str, spots: list[int]) -> Content:
    """The path with the letters the query matched in bold accent."""
    content = Content(clean(path))
    for spot in spots:
        content = content.stylize("bold $text-accent", spot, spot + 1)
    return content
