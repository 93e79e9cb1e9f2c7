"""The demo's MCP server: a few note-taking tools over stdio, in a directory of its own.

Run as ``python -m tui_agent.demo.server DIRECTORY``. It is a real MCP server (the
SDK's MCPServer): the demo's tool calls go through the same hub, policy and
approval gate as any other server's.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)


def _file(directory: Path, title: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "note"
    return directory / f"{slug}.md"


def build(directory: Path) -> MCPServer:
    server = MCPServer("notes", version="1.0",
                       instructions="Notes kept as Markdown files in one directory.")

    @server.tool(description="List the titles of the saved notes.", annotations=READ_ONLY)
    def list_notes() -> str:
        return "\n".join(sorted(p.stem for p in directory.glob("*.md"))) or "(no notes yet)"

    @server.tool(description="Read one note by its title.", annotations=READ_ONLY)
    def read_note(title: str) -> str:
        path = _file(directory, title)
        if not path.exists():
            raise ValueError(f"no note called {title!r}")
        return path.read_text(encoding="utf-8")

    @server.tool(description="Save a note (creates or replaces a Markdown file).")
    def save_note(title: str, text: str) -> str:
        directory.mkdir(parents=True, exist_ok=True)
        path = _file(directory, title)
        path.write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        return f"saved {path.name} ({len(text)} characters)"

    @server.tool(description="Count the words of a text.", annotations=READ_ONLY)
    def word_count(text: str) -> int:
        return len(text.split())

    return server


def main() -> None:
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    build(directory).run()


if __name__ == "__main__":
    main()
