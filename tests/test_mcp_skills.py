"""Skills over MCP (SEP-2640) through the real hub, against a real server that serves them
(tests/fakes/skill_server.py) over stdio and streamable HTTP: the listing at connect reads
no file; a load reads ``SKILL.md`` and then the files asked for, each verified against
the skill's entry; a server that lies about a digest, a size or the frontmatter has its
skill refused, and no file of it is read after; paths that leave the skill, unlisted
files, broken entries and listings that never end are bounded and told, naming the
server and the skill."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT, TAG_VAR, fake_server, tagged_env
from tests.reference import free_port, http_server
from tests.zygote import module
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import NOTHING, client_over
from tui_agent.tools.hub import Hub
from tui_agent.tools.skills import SKILLS_EXTENSION, ServerSkill, SkillError, SkillRefused, listing

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PDF = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"
DAILY = "skill://daily-report/SKILL.md"


def skill_server(marks: Path, *args: str) -> ServerConfig:
    """tests/fakes/skill_server.py over stdio, noting each file read in ``marks``."""
    command, *argv = module("tests.fakes.skill_server", "--marks", str(marks), *args)
    return ServerConfig(command=command, args=argv, cwd=str(ROOT), env=tagged_env(),
                        startup_timeout=60)


@contextmanager
def served(transport: str, marks: Path, *args: str) -> Iterator[ServerConfig]:
    """The skill server over ``transport`` (stdio or streamable HTTP)."""
    marks.mkdir(exist_ok=True)
    if transport == "stdio":
        yield skill_server(marks, *args)
        return
    port = free_port()
    command = module("tests.fakes.skill_server", "--transport", "http", "--port", str(port),
                     "--marks", str(marks), *args)
    with http_server(command, port, {"PYTHONPATH": str(ROOT)}, "/mcp") as url:
        yield ServerConfig(url=url, transport="http", startup_timeout=60)


@asynccontextmanager
async def hub_of(servers: dict[str, ServerConfig], tmp_path: Path) -> AsyncIterator[Hub]:
    async with Hub(servers, log_dir=tmp_path / "logs", default_timeout=30) as hub:
        await hub.wait_all()
        for status in hub.statuses():
            assert status.state == "connected", status.last_error
        yield hub


def reads(marks: Path) -> list[str]:
    """The files the server was asked for, in order."""
    file = marks / "reads"
    return file.read_text().split() if file.exists() else []


def skill(hub: Hub, uri: str, server: str = "docs") -> ServerSkill:
    return next(s for s in hub.server_skills() if (s.server, s.uri) == (server, uri))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_listed_at_connect_and_read_only_when_loaded(transport: str,
                                                           tmp_path: Path) -> None:
    """The skills are known from the listing alone (name, description, frontmatter,
    manifest); nothing is read until the load, which reads SKILL.md, verified, and then
    the file asked for."""
    marks = tmp_path / "marks"
    with served(transport, marks) as config:
        async with hub_of({"docs": config}, tmp_path) as hub:
            pdf = skill(hub, PDF)
            assert (pdf.name, pdf.description) == \
                ("pdf-processing", "Extract, fill, and assemble PDF documents")
            assert pdf.frontmatter["metadata"] == {"version": "2.1.0", "released": "2024-05-01"}
            assert pdf.files is not None and [uri for uri, _, _ in pdf.files] == [PDF, FORMS]
            assert pdf.paths == ("SKILL.md", "references/FORMS.md")
            assert skill(hub, DAILY).files is None  # "dynamic"
            assert reads(marks) == []
            body = await hub.read_skill_file("docs", PDF, None)
            assert body.startswith("---\nname: pdf-processing") and "Skill body." in body
            assert await hub.read_skill_file("docs", PDF, "references/FORMS.md") == \
                "# Forms\n\nSupporting content.\n"
            assert await hub.skill_files("docs", PDF) == ("references/FORMS.md",)
            assert reads(marks) == [PDF, FORMS]
            assert hub.skill_refusal("docs", PDF) is None


@pytest.mark.parametrize(("lie", "said"), [
    ("digest", "its digest is sha256:f0621e550d5a…, the skill's manifest says "
               "sha256:7542965dc8bd…"),
    ("size", "it is 271 bytes, the skill's manifest says 229"),
    ("frontmatter", "description: the file says \"Exfiltrate credentials\", the listing "
                    "says \"Extract, fill, and assemble PDF documents\""),
])
async def test_a_lying_server_has_its_skill_refused(lie: str, said: str,
                                                   tmp_path: Path) -> None:
    """A SKILL.md that is not what the listing says refuses the skill, naming the server,
    the skill, the file and what differed; its other files are then refused without
    asking the server."""
    marks = tmp_path / "marks"
    with served("stdio", marks, "--lie", lie) as config:
        async with hub_of({"docs": config}, tmp_path) as hub:
            with pytest.raises(SkillRefused) as refused:
                await hub.read_skill_file("docs", PDF, None)
            reason = refused.value.reason
            assert reason.startswith("skill pdf-processing of server 'docs' is refused: "
                                     "SKILL.md is not what the server listed: ")
            assert said in reason
            with pytest.raises(SkillRefused) as again:
                await hub.read_skill_file("docs", PDF, "references/FORMS.md")
            assert again.value.reason == reason == hub.skill_refusal("docs", PDF)
            assert reads(marks) == [PDF]  # FORMS.md was never fetched


async def test_reads_go_to_the_skills_own_server(tmp_path: Path) -> None:
    """Two servers serve the same skill URI: two skills, each read from its own server
    only; one server's lie refuses its skill alone."""
    honest, liar = tmp_path / "honest", tmp_path / "liar"
    with served("stdio", honest) as one, served("stdio", liar, "--lie", "digest") as two:
        async with hub_of({"docs": one, "other": two}, tmp_path) as hub:
            assert {(s.server, s.uri) for s in hub.server_skills() if s.uri == PDF} == \
                {("docs", PDF), ("other", PDF)}
            with pytest.raises(SkillRefused, match="of server 'other' is refused"):
                await hub.read_skill_file("other", PDF, None)
            assert "Skill body." in await hub.read_skill_file("docs", PDF, None)
            assert (reads(honest), reads(liar)) == ([PDF], [PDF])


async def test_paths_outside_the_skill_and_unlisted_files_are_not_read(tmp_path: Path) -> None:
    """A path with ``..`` (also percent-encoded) or a file the manifest does not list (the
    server serves one) is answered without asking the server; the skill stays usable."""
    marks = tmp_path / "marks"
    with served("stdio", marks, "--extra-file") as config:
        async with hub_of({"docs": config}, tmp_path) as hub:
            for path in ("../other/SKILL.md", "references/%2e%2e/x", "/etc/passwd"):
                with pytest.raises(SkillError, match="is not a path inside skill "
                                                     "pdf-processing of server 'docs'"):
                    await hub.read_skill_file("docs", PDF, path)
            with pytest.raises(SkillError) as unlisted:
                await hub.read_skill_file("docs", PDF, "references/SECRET.md")
            assert not isinstance(unlisted.value, SkillRefused)
            assert unlisted.value.reason == (
                "references/SECRET.md is not a file of skill pdf-processing of server 'docs' "
                "(its manifest lists: SKILL.md, references/FORMS.md); nothing was read")
            assert await hub.skill_files("docs", PDF) == ("references/FORMS.md",)
            assert reads(marks) == []
            assert "Skill body." in await hub.read_skill_file("docs", PDF, None)


async def test_a_dynamic_skill_is_walked_with_directory_read(tmp_path: Path) -> None:
    """A skill listed as ``dynamic`` has no digests: its files are found with
    ``resources/directory/read`` (the server declares ``directoryRead``), its SKILL.md's
    frontmatter is still compared with the listing's."""
    marks = tmp_path / "marks"
    with served("http", marks) as config:
        async with hub_of({"docs": config}, tmp_path) as hub:
            assert await hub.skill_files("docs", DAILY) == ("data/today.md",)
            assert reads(marks) == []
            assert "Read `data/today.md`." in await hub.read_skill_file("docs", DAILY, None)
            assert (await hub.read_skill_file("docs", DAILY, "data/today.md")).startswith(
                "# Today")
    with served("stdio", tmp_path / "plain", "--no-directory-read") as config:
        async with hub_of({"docs": config}, tmp_path / "plain") as hub:
            assert await hub.skill_files("docs", DAILY) == ()


async def test_broken_entries_are_skipped_and_named(tmp_path: Path) -> None:
    """Entries that break the extension's rules are not offered; each is told, naming the
    server, the skill and what is wrong; the good ones are offered."""
    with served("stdio", tmp_path / "marks", "--bad-entries") as config:
        async with hub_of({"docs": config}, tmp_path) as hub:
            assert {s.name for s in hub.server_skills()} == {"pdf-processing", "daily-report"}
            notes = hub.skill_notes()
            assert notes == (
                "server 'docs': skill skill://../etc/SKILL.md: the uri's path has a segment "
                "'..'; it is not offered",
                "server 'docs': skill skill://outside/SKILL.md: file skill://elsewhere/x.md "
                "is not inside the skill's directory skill://outside; it is not offered",
                "server 'docs': skill skill://bad-digest/SKILL.md: file "
                "skill://bad-digest/SKILL.md: the digest is not sha256: and 64 lowercase hex "
                "digits; it is not offered",
                "server 'docs': skill skill://misnamed/SKILL.md: its name 'other' is not the "
                "last segment of its uri ('misnamed'); it is not offered")


def test_the_skills_command_lists_the_servers_skills_reading_none(
        tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``tui-agent skills --mcp`` starts the configured servers and lists their skills
    X ``server``, where ``server docs``), and their broken
    entries under "not offered" (exit 1), reading no skill file; without ``--mcp`` no
    server starts."""
    from tui_agent.cli import main

    monkeypatch.chdir(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    server = skill_server(marks, "--bad-entries")
    config = tmp_path / "c.toml"
    config.write_text(f"[servers.docs]\ncommand = {json.dumps(server.command)}\n"
                      f"args = {json.dumps(server.args)}\ncwd = {json.dumps(server.cwd)}\n"
                      f"env = {{ {TAG_VAR} = {json.dumps(os.environ[TAG_VAR])} }}\n"
                      "startup_timeout = 60\n", encoding="utf-8")
    assert main(["skills", "--config", str(config)]) == 0
    assert capsys.readouterr().out.startswith("no skills: ")
    assert main(["skills", "--mcp", "--config", str(config)]) == 1
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert rows[0][:4] == ["2", "skills,", "0", "loaded:"]
    assert rows[1][:3] == ["pdf-processing", "server", "listed"]
    assert rows[2] == ["server", "docs"]
    assert rows[3][:3] == ["daily-report", "server", "listed"]
    assert "not offered (4):" in out
    assert "  server 'docs': skill skill://../etc/SKILL.md: the uri's path has a segment " \
           "'..'; it is not offered\n" in out
    assert reads(marks) == [], "listing reads no skill file"


async def test_paged_listings_are_read_whole_and_bounded(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page of a paged listing is read; a cursor given twice, a listing that never
    ends and one longer than the hub keeps stop, each with a note."""
    monkeypatch.setattr(listing, "MAX_PAGES", 6)
    monkeypatch.setattr(listing, "MAX_SKILLS", 8)
    with served("stdio", tmp_path / "a", "--page-size", "2", "--many", "4") as paged, \
            served("stdio", tmp_path / "b", "--cursor", "repeat") as repeat, \
            served("stdio", tmp_path / "c", "--cursor", "endless", "--many", "3") as endless, \
            served("stdio", tmp_path / "d", "--many", "20") as huge:
        async with hub_of({"paged": paged, "repeat": repeat, "endless": endless,
                           "huge": huge}, tmp_path) as hub:
            by_server = {name: [s.name for s in hub.server_skills() if s.server == name]
                         for name in hub.connections}
            assert by_server["paged"] == ["pdf-processing", "daily-report",
                                          *(f"extra-{n}" for n in range(4))]
            assert len(by_server["repeat"]) == 2
            assert len(by_server["endless"]) == 5  # one a page, five entries
            assert len(by_server["huge"]) == 8
            assert hub.skill_notes() == (
                "server 'repeat': skill skill://pdf-processing/SKILL.md is listed twice; the "
                "first entry is kept",
                "server 'repeat': skill skill://daily-report/SKILL.md is listed twice; the "
                "first entry is kept",
                "server 'repeat': skills/list gave a cursor it gave before; its listing "
                "stops there",
                "server 'endless': skills/list goes on past 6 pages; the rest is not read",
                "server 'huge' lists 9 skills; the first 8 are offered")


async def test_a_server_without_the_extension_is_not_asked(tmp_path: Path) -> None:
    """No ``skills/list`` to a server that does not declare skills: nothing listed, no
    note (its tools are offered as ever)."""
    async with hub_of({"plain": fake_server(startup_timeout=60)}, tmp_path) as hub:
        assert hub.server_skills() == () and hub.skill_notes() == ()
        assert hub.specs()
        with pytest.raises(SkillError, match="server 'plain' lists no skill"):
            await hub.read_skill_file("plain", PDF, None)


async def test_the_digest_key_follows_the_listing(tmp_path: Path) -> None:
    """``digest_key`` (what the gate binds an approval to) is the same for the same
    listing, and changes when the server lists the skill differently."""
    keys = []
    for n, args in enumerate([(), (), ("--lie", "frontmatter")]):
        with served("stdio", tmp_path / f"m{n}", *args) as config:
            async with hub_of({"docs": config}, tmp_path / f"h{n}") as hub:
                keys.append(skill(hub, PDF).digest_key)
    assert keys[0] == keys[1] != keys[2]
    assert keys[0].startswith("sha256:") and len(keys[0]) == 71


def test_the_client_declares_the_extension() -> None:
    """Every server is told the client takes skills (``capabilities.extensions``)."""
    client = client_over(object(), ServerConfig(command="x"), NOTHING, on_message=_ignore)
    # (beside the tasks extension: tests/test_tasks_extension.py)
    assert [e.identifier for e in client.extensions or ()] == \
        [SKILLS_EXTENSION, "io.modelcontextprotocol/tasks"]


async def _ignore(message: object) -> None:
    return None
