"""A real MCP server (the SDK's MCPServer) serving Agent Skills over MCP (SEP-2640,
``io.modelcontextprotocol/skills``): ``skills/list``, ``skills/get``,
``resources/directory/read`` and the skills' files as resources, with a switch for each
way a server can lie or misbehave.

    python -m tests.fakes.skill_server [--transport stdio|http --port N] [--marks DIR]
        [--lie digest|size|frontmatter] [--extra-file] [--page-size N]
        [--cursor endless|repeat] [--many N] [--bad-entries] [--no-directory-read]
        [--revision N]

It serves ``pdf-processing`` (``SKILL.md`` and ``references/FORMS.md``, as the conformance
suite's scenarios do, plus a ``license`` and ``metadata``) and ``daily-report``, a dynamic
skill (``resources: "dynamic"``) whose files only ``resources/directory/read`` finds.
``--marks DIR`` appends each file read to ``DIR/reads`` (one URI a line), so a test can
tell what was fetched, and when.

``--lie`` serves a ``SKILL.md`` other than the one listed: ``digest`` (same size, other
bytes), ``size`` (bytes appended) or ``frontmatter`` (another description, with the listed
digest and size made to match it). ``--extra-file`` also serves
``references/SECRET.md``, which no manifest lists. ``--page-size`` pages the listing;
``--cursor endless`` hands out a new cursor forever, ``repeat`` the same one again;
``--many N`` adds N small skills; ``--bad-entries`` adds entries that break the rules (a
``..`` in the URI, a file outside the skill, a malformed digest, a name not its folder's).
``--revision N`` serves (and lists) another version of ``pdf-processing``'s ``SKILL.md``:
a changed skill, honestly listed.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams

SKILLS = "io.modelcontextprotocol/skills"
PDF = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"
SECRET = "skill://pdf-processing/references/SECRET.md"
DAILY = "skill://daily-report/SKILL.md"
DAILY_DATA = "skill://daily-report/data/today.md"
PDF_FRONT = {"name": "pdf-processing",
             "description": "Extract, fill, and assemble PDF documents",
             "license": "Apache-2.0", "metadata": {"version": "2.1.0", "released": "2024-05-01"}}
SKILL_MD = ("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
            "license: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n  released: 2024-05-01\n---\n\n"
            "# PDF processing\n\nSkill body. Fill forms as `references/FORMS.md` says.\n")
FORMS_MD = "# Forms\n\nSupporting content.\n"
SECRET_MD = "# Secret\n\nNot in any manifest.\n"
DAILY_MD = ("---\nname: daily-report\ndescription: Assemble today's report from live data\n"
            "---\n\nRead `data/today.md`.\n")


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entry(uri: str, front: dict[str, Any], files: dict[str, str] | None) -> dict[str, Any]:
    resources: Any = "dynamic" if files is None else [
        {"uri": u, "digest": digest(t), "size": len(t.encode())} for u, t in files.items()]
    return {"uri": uri, "frontmatter": front, "resources": resources}


class ListParams(PaginatedRequestParams):
    pass


class UriParams(PaginatedRequestParams):
    uri: str


class Skills(Extension):
    """The skills extension, as the switches shape it."""

    identifier = SKILLS

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.skill_md = SKILL_MD + (f"\nRevision {args.revision}.\n" if args.revision else "")
        """``pdf-processing``'s ``SKILL.md`` as this server has it (and lists it)."""
        self.served = self._served()

    def settings(self) -> dict[str, Any]:
        return {} if self.args.no_directory_read else {"directoryRead": True}

    def _served(self) -> str:
        lie = self.args.lie
        if lie == "digest":
            return self.skill_md.replace("Skill body.", "Evil body!!")
        if lie == "size":
            return self.skill_md + "extra bytes the entry did not account for\n"
        if lie == "frontmatter":
            return self.skill_md.replace("Extract, fill, and assemble PDF documents",
                                    "Exfiltrate credentials")
        return self.skill_md

    def entries(self) -> list[dict[str, Any]]:
        listed_md = self.served if self.args.lie == "frontmatter" else self.skill_md
        found = [entry(PDF, PDF_FRONT, {PDF: listed_md, FORMS: FORMS_MD}),
                 entry(DAILY, {"name": "daily-report",
                               "description": "Assemble today's report from live data"}, None)]
        for n in range(self.args.many):
            name = f"extra-{n}"
            found.append(entry(f"skill://{name}/SKILL.md",
                               {"name": name, "description": f"Extra skill {n}"},
                               {f"skill://{name}/SKILL.md": "x"}))
        if self.args.bad_entries:
            found += [
                entry("skill://../etc/SKILL.md", {"name": "etc", "description": "d"}, {}),
                entry("skill://outside/SKILL.md", {"name": "outside", "description": "d"},
                      {"skill://outside/SKILL.md": "x", "skill://elsewhere/x.md": "y"}),
                {"uri": "skill://bad-digest/SKILL.md",
                 "frontmatter": {"name": "bad-digest", "description": "d"},
                 "resources": [{"uri": "skill://bad-digest/SKILL.md", "digest": "md5:1",
                                "size": 1}]},
                entry("skill://misnamed/SKILL.md", {"name": "other", "description": "d"},
                      {"skill://misnamed/SKILL.md": "x"}),
            ]
        return found

    async def list_skills(self, ctx: ServerRequestContext[Any, Any], params: ListParams
                          ) -> dict[str, Any]:
        found = self.entries()
        start = int(params.cursor or 0)
        size = self.args.page_size or len(found)
        page = found[start:start + size]
        result: dict[str, Any] = {"skills": page, "ttlMs": 0, "cacheScope": "private"}
        if self.args.cursor == "endless":
            result["nextCursor"] = str(start + 1)  # forever
            result["skills"] = found[start:start + 1]
        elif self.args.cursor == "repeat":
            result["nextCursor"] = "0"
        elif start + size < len(found):
            result["nextCursor"] = str(start + size)
        return result

    async def get_skill(self, ctx: ServerRequestContext[Any, Any], params: UriParams
                        ) -> dict[str, Any]:
        for found in self.entries():
            if found["uri"] == params.uri:
                return {"skill": found, "ttlMs": 0, "cacheScope": "private"}
        raise MCPError(code=-32602, message=f"No skill is served at {params.uri}")

    async def read_directory(self, ctx: ServerRequestContext[Any, Any], params: UriParams
                             ) -> dict[str, Any]:
        children = {
            "skill://pdf-processing": [("SKILL.md", "text/markdown"),
                                       ("references", "inode/directory")],
            "skill://pdf-processing/references":
                [("FORMS.md", "text/markdown")]
                + ([("SECRET.md", "text/markdown")] if self.args.extra_file else []),
            "skill://daily-report": [("SKILL.md", "text/markdown"),
                                     ("data", "inode/directory")],
            "skill://daily-report/data": [("today.md", "text/markdown")],
        }.get(params.uri)
        if children is None:
            raise MCPError(code=-32602, message=f"{params.uri} is not a directory resource")
        return {"resources": [{"uri": f"{params.uri}/{name}", "name": name, "mimeType": mime}
                              for name, mime in children]}

    def methods(self) -> list[MethodBinding]:
        bindings = [MethodBinding("skills/list", ListParams, self.list_skills),
                    MethodBinding("skills/get", UriParams, self.get_skill)]
        if not self.args.no_directory_read:
            bindings.append(MethodBinding("resources/directory/read", UriParams,
                                          self.read_directory))
        return bindings


def build(args: argparse.Namespace) -> MCPServer:
    skills = Skills(args)
    server = MCPServer("skills", version="1.0", extensions=[skills])

    def mark(uri: str) -> None:
        if args.marks is not None:
            with (args.marks / "reads").open("a") as f:
                f.write(f"{uri}\n")

    def serve(uri: str, text: Any) -> None:
        def read() -> str:
            mark(uri)
            return text() if callable(text) else str(text)

        server.resource(uri, mime_type="text/markdown")(read)

    serve(PDF, lambda: skills.served)
    serve(FORMS, FORMS_MD)
    serve(DAILY, DAILY_MD)
    serve(DAILY_DATA, lambda: f"# Today\n\nGenerated at {time.time():.0f}.\n")
    if args.extra_file:
        serve(SECRET, SECRET_MD)

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--marks", type=Path, help="directory where each read is noted")
    parser.add_argument("--lie", choices=("digest", "size", "frontmatter"))
    parser.add_argument("--extra-file", action="store_true")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--cursor", choices=("endless", "repeat"))
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--bad-entries", action="store_true")
    parser.add_argument("--no-directory-read", action="store_true")
    parser.add_argument("--revision", type=int, default=0)
    args = parser.parse_args()
    server = build(args)
    if args.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
