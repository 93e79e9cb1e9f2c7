"""Agent Skills from folders: found where other agents put them, checked against the
spec's rules (a broken one is named with its file and line and skipped), offered by name
and description only, loaded through the built-in ``skill`` tool whose reads stay inside
the skill's folder."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.skill_kit import FORMS, PDF_BODY, pdf_skill, skill, user_skills
from tui_agent.core.events import SkillUsed
from tui_agent.core.permissions import ApprovalStore, Judgement
from tui_agent.core.skills.catalog import Catalog
from tui_agent.core.skills.index import skills_index
from tui_agent.core.skills.local import LocalSkills
from tui_agent.core.skills.tool import SkillTool
from tui_agent.custom import skill_files
from tui_agent.custom import skills as skills_module
from tui_agent.custom.skills import discover, skill_dirs


def catalog_of(*dirs: tuple[str, Path]) -> Catalog:
    found = discover(dirs)
    return Catalog([LocalSkills(found)], [str(p) for p in found.problems])


def test_skills_are_found_in_the_users_and_the_cross_tool_folders(
        isolated_env: Path, tmp_path: Path) -> None:
    pdf_skill(user_skills(isolated_env))
    skill(isolated_env / ".claude" / "skills", "commit-style", "How we write commits.")
    skill(isolated_env / ".agents" / "skills", "release-notes", "Draft release notes.")
    project = tmp_path / "repo"
    skill(project / ".claude" / "skills", "lint-rules", "The project's lint rules.")
    users = [s.name for s in discover(skill_dirs()).skills]
    assert users == ["pdf", "release-notes", "commit-style"]
    assert [(s.name, s.scope) for s in discover(skill_dirs(project=project)).skills][-1] \
        == ("lint-rules", "project")


def test_a_broken_skill_is_named_with_its_file_and_line_and_skipped(tmp_path: Path) -> None:
    base = tmp_path / "skills"
    pdf_skill(base)
    (base / "no-frontmatter").mkdir()
    (base / "no-frontmatter" / "SKILL.md").write_text("# Just text\n")
    skill(base, "Bad_Name", "Upper case and an underscore.")
    skill(base, "double--hyphen", "Two hyphens in a row.")
    skill(base, "elsewhere", "x").joinpath("SKILL.md").write_text(
        "---\nname: another-name\ndescription: x\n---\n")
    skill(base, "bad-yaml", "x").joinpath("SKILL.md").write_text(
        "---\nname: bad-yaml\ndescription: [unclosed\n---\n")
    skill(base, "no-description", "x").joinpath("SKILL.md").write_text(
        "---\nname: no-description\n---\nbody\n")
    skill(base, "too-long", "x" * 1025)
    skill(tmp_path / "more", "pdf", "The same name again, in the same scope.")
    found = discover([("user", base), ("user", tmp_path / "more")])
    assert [s.name for s in found.skills] == ["pdf"]
    said = sorted(str(p).replace(str(tmp_path), "") for p in found.problems)
    assert said == sorted([
        "/skills/Bad_Name/SKILL.md:2: name 'Bad_Name' breaks the naming rules: lowercase "
        "letters, digits and single hyphens, not at the start or end",
        "/skills/bad-yaml/SKILL.md:3: the frontmatter is not valid YAML (expected ',' or "
        "']', but got '<stream end>')",
        "/skills/double--hyphen/SKILL.md:2: name 'double--hyphen' breaks the naming rules: "
        "lowercase letters, digits and single hyphens, not at the start or end",
        "/skills/elsewhere/SKILL.md:2: name 'another-name' is not the folder's name "
        "'elsewhere' (the spec requires them equal)",
        "/skills/no-description/SKILL.md:1: no 'description' in the frontmatter (it is "
        "required, non-empty)",
        "/skills/no-frontmatter/SKILL.md:1: no YAML frontmatter: the file must begin with a "
        "line '---'",
        "/skills/too-long/SKILL.md:3: the description has 1025 characters (at most 1024)",
        "/more/pdf/SKILL.md:2: a second user skill named 'pdf' (the first is "
        "/skills/pdf/SKILL.md): skipped",
    ])


def test_a_project_skill_never_shadows_a_users_skill(tmp_path: Path) -> None:
    pdf_skill(tmp_path / "user")
    skill(tmp_path / "project", "pdf", "The project's own PDF rules.")
    skill(tmp_path / "project", "lint", "Lint rules.")
    catalog = catalog_of(("user", tmp_path / "user"), ("project", tmp_path / "project"))
    assert list(catalog.entries()) == ["user:pdf", "lint", "project:pdf"]
    assert catalog.find("pdf") == ("'pdf' is the name of several skills; use one of: "
                                   "user:pdf, project:pdf")


def test_the_index_shows_names_and_short_descriptions_only(tmp_path: Path) -> None:
    pdf_skill(tmp_path / "s")
    index = skills_index(catalog_of(("user", tmp_path / "s")).entries())
    assert index is not None
    line = index.splitlines()[-1]
    assert line.startswith("- pdf: Use this skill whenever the user wants to do anything")
    assert line.endswith("…") and len(line) <= 160
    assert "pypdf" not in index and "forms.md" not in index
    assert skills_index({}) is None


def load(catalog: Catalog, **arguments: str) -> tuple[bool, str, SkillUsed]:
    outcome = asyncio.run(SkillTool(catalog).call(dict(arguments)))
    assert isinstance(outcome.value, SkillUsed)
    return outcome.is_error, outcome.text, outcome.value


def test_loading_gives_the_body_and_the_files_then_a_file(tmp_path: Path) -> None:
    pdf_skill(tmp_path / "s")
    catalog = catalog_of(("user", tmp_path / "s"))
    failed, text, use = load(catalog, name="pdf")
    assert not failed and text.startswith(PDF_BODY.strip())
    assert "name: pdf" not in text
    assert text.endswith('Files of the skill \'pdf\' (read one with {"name": "pdf", "file": '
                         '"<path>"}):\n- LICENSE.txt\n- forms.md\n- reference.md\n'
                         "- scripts/fill_form.py")
    assert (use.state, use.origin) == ("loaded", "user")
    assert catalog.state("pdf").state == "loaded"
    assert load(catalog, name="pdf", file="forms.md")[:2] == (False, FORMS)


def test_always_allowing_a_skills_tools_lasts_until_its_file_changes(tmp_path: Path) -> None:
    """A skill with ``allowed-tools`` asks; "always allow" is kept in the approvals file
    bound to its ``SKILL.md`` as it is: a later session does not ask, an edit asks again."""
    folder = skill(tmp_path / "s", "git-helper", "Commits for you.",
                   extra="allowed-tools: git__git_status\n")
    store_file = tmp_path / "approvals.json"

    def judged() -> Judgement:
        return SkillTool(catalog_of(("user", tmp_path / "s"))).judge(
            {"name": "git-helper"}, ApprovalStore(store_file))

    first = judged()
    assert first.verdict == "ask" and "git__git_status" in first.why
    assert first.trust is not None and first.trust[1].startswith("sha256:")
    tool = SkillTool(catalog_of(("user", tmp_path / "s")))
    assert tool.always(first.trust, ApprovalStore(store_file)) is None
    assert judged() == Judgement("auto", "you always allowed the skill 'git-helper' as it "
                                         "is now")
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "Push too.\n")
    again = judged()
    assert again.verdict == "ask" and again.trust is not None
    assert again.trust[1] != first.trust[1]
    store_file.unlink()
    store_file.mkdir()  # an approvals file that cannot be written: said, not raised
    problem = tool.always(again.trust, ApprovalStore(store_file))
    assert problem is not None and problem.startswith("applied for this session only: ")


def test_skills_added_edited_or_broken_are_seen_at_the_next_look(tmp_path: Path) -> None:
    """The catalog looks at the folders again before each turn: a skill added is offered,
    an edited description is the new one, a broken one is told once; nothing changed,
    nothing is read (the frontmatter parser is not called)."""
    base = tmp_path / "s"
    pdf_skill(base)
    local = LocalSkills.found_in([("user", base)])
    catalog = Catalog([local], list(local.problems))
    assert list(catalog.entries()) == ["pdf"]
    assert asyncio.run(catalog.refresh()) == []
    folder = skill(base, "lint-rules", "How this team lints.")
    assert asyncio.run(catalog.refresh()) == []
    assert list(catalog.entries()) == ["lint-rules", "pdf"]
    (folder / "SKILL.md").write_text("---\nname: lint-rules\ndescription: Lint it all, "
                                     "strictly.\n---\n\nBody.\n")
    asyncio.run(catalog.refresh())
    assert catalog.entries()["lint-rules"].description == "Lint it all, strictly."
    skill(base, "Bad_Name", "x")
    told = asyncio.run(catalog.refresh())
    assert len(told) == 1 and "/Bad_Name/SKILL.md:2: name 'Bad_Name' breaks" in told[0]
    assert catalog.problems == told
    calls: list[Path] = []
    real_parse = skills_module.parse

    def parse(file: Path, scope: str) -> object:
        calls.append(file)
        return real_parse(file, scope)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skills_module, "parse", parse)
        assert asyncio.run(catalog.refresh()) == []
        assert calls == [], "nothing changed: no SKILL.md read"
        (folder / "SKILL.md").unlink()
        (folder / "SKILL.md").write_text("---\nname: lint-rules\ndescription: d\n---\n")
        assert asyncio.run(catalog.refresh()) == [], "the broken one was told already"
        assert calls, "a change: the folders read again"


def test_reads_stay_inside_the_skills_folder(tmp_path: Path) -> None:
    folder = pdf_skill(tmp_path / "s")
    (tmp_path / "secret.txt").write_text("the key")
    os.symlink(tmp_path / "secret.txt", folder / "out.md")
    os.symlink("/dev/zero", folder / "zero.md")
    (folder / "huge.md").write_text("x" * (skill_files.MAX_BYTES + 1))
    os.mkfifo(folder / "pipe.md")
    (folder / "inside.md").symlink_to(folder / "forms.md")
    catalog = catalog_of(("user", tmp_path / "s"))
    said = {file: load(catalog, name="pdf", file=file) for file in (
        "../secret.txt", "/etc/passwd", "out.md", "zero.md", "huge.md", "pipe.md",
        "missing.md")}
    assert all(failed and use.state == "refused" for failed, _, use in said.values())
    texts = {file: text.replace(str(folder), "F") for file, (_, text, _) in said.items()}
    assert texts == {
        "../secret.txt": "error: skill 'pdf' not read: '../secret.txt': not a path inside "
                         "the skill's folder (it must be relative, without '..')",
        "/etc/passwd": "error: skill 'pdf' not read: '/etc/passwd': not a path inside the "
                       "skill's folder (it must be relative, without '..')",
        "out.md": f"error: skill 'pdf' not read: F/out.md: links outside the skill's folder "
                  f"(to {tmp_path}/secret.txt); not read",
        "zero.md": "error: skill 'pdf' not read: F/zero.md: links outside the skill's "
                   "folder (to /dev/zero); not read",
        "huge.md": "error: skill 'pdf' not read: F/huge.md: 262,145 bytes, over the 256 KiB "
                   "a skill file may have; not read",
        "pipe.md": "error: skill 'pdf' not read: F/pipe.md: not a regular file; not read",
        "missing.md": "error: skill 'pdf' not read: F/missing.md: no such file in the skill",
    }
    assert load(catalog, name="pdf", file="inside.md")[:2] == (False, FORMS)
    # What links out is not listed either; the skill still loads.
    failed, text, _ = load(catalog, name="pdf")
    assert not failed and "out.md" not in text and "zero.md" not in text


def test_a_skill_md_linked_to_a_device_is_reported_not_read(tmp_path: Path) -> None:
    (tmp_path / "s" / "zero").mkdir(parents=True)
    os.symlink("/dev/zero", tmp_path / "s" / "zero" / "SKILL.md")
    found = discover([("user", tmp_path / "s")])
    assert found.skills == ()
    assert [str(p) for p in found.problems] == [
        f"{tmp_path}/s/zero/SKILL.md: not a regular file: not read"]


def test_a_projects_skills_wait_for_trust_and_the_question_lists_them(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.config import load
    from tui_agent.config.show import held_lines
    from tui_agent.wiring import build

    project = tmp_path / "repo"
    skill(project / ".claude" / "skills", "lint-rules", "How this project lints.")
    pdf_skill(user_skills(isolated_env))
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    settings = load(None, [], cwd=project / "src")
    assert settings.held is not None and settings.held.skills == (
        ".claude/skills/lint-rules/SKILL.md",)
    assert held_lines(settings.held) == [
        "skill 'lint-rules' (.claude/skills/lint-rules/SKILL.md): instructions the model may "
        "load, with the files beside it"]
    catalog = Catalog()
    build.local_skills(settings, catalog)
    assert list(catalog.entries()) == ["pdf"]
    trusted = load(None, [], cwd=project / "src", trust=True)
    assert trusted.held is None
    build.local_skills(trusted, catalog)
    assert [(n, e.origin) for n, e in catalog.entries().items()] == [
        ("pdf", "user"), ("lint-rules", "project")]
    # A new skill in the project asks again.
    skill(project / ".agents" / "skills", "deploy", "How to deploy.")
    again = load(None, [], cwd=project / "src")
    assert again.held is not None and again.held.skills == (
        ".agents/skills/deploy/SKILL.md", ".claude/skills/lint-rules/SKILL.md")


def test_the_skills_command_lists_them_and_fails_on_a_broken_one(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    monkeypatch.chdir(tmp_path)
    pdf_skill(user_skills(isolated_env))
    assert main(["skills"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("1 skill, 0 loaded: the model reads each one's name and description "
                      "until it loads it with the skill tool")
    assert out[1].split()[:3] == ["pdf", "user", "listed"]
    assert out[2].strip() == "~/config/tui-agent/skills/pdf/SKILL.md"
    skill(user_skills(isolated_env), "Nope", "x")
    assert main(["skills"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  ~/config/tui-agent/skills/Nope/SKILL.md:2: name 'Nope' breaks the naming rules: "
        "lowercase letters, digits and single hyphens, not at the start or end")
