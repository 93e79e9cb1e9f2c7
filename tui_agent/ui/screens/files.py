"""The ``@`` file picker: the project's files (what git keeps, or what ``.gitignore``
leaves), matched fuzzily as you type, the matched letters marked. Enter puts the path
after the ``@`` in the prompt; the file itself is read when the message is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from tui_agent.core.project_files import list_files, rank
from tui_agent.tools.text import clean
from tui_agent.ui.screens.picker import Picker

SHOWN = 50
"""Matches listed at most (the best ones)."""


class FilePicker(Picker):
    def __init__(self, root: Path, files: list[str] | None = None) -> None:
        super().__init__("Attach a file to the message", [],
                         placeholder="type part of a path (letters in order: 'apy' finds "
                                     "app.py)",
                         hint="enter puts @path in the prompt · esc keeps the @ as typed · "
                              "files git ignores are not listed")
        self.root = root
        self.files = files
        """The project's files; None while they are listed."""

    async def on_mount(self) -> None:
        if self.files is None:
            self.files = await asyncio.to_thread(list_files, self.root)
            self.on_input_changed(Input.Changed(self.query_one(Input),
                                                self.query_one(Input).value))

    def _options(self, query: str) -> list[Option]:
        if self.files is None:
            return [Option(Content("listing the project's files…"), disabled=True)]
        found = rank(query.strip(), self.files, SHOWN)
        if not found:
            said = "no file matches" if self.files else f"no files in {self.root}"
            return [Option(Content(said), disabled=True)]
        return [Option(marked(path, spots), id=path) for path, spots in found]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter takes the highlighted file (never the typed text)."""
        event.stop()
        event.prevent_default()  # not the picker's own handler too
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
