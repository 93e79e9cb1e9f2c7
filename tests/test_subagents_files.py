"""Agent files (tui_agent/custom/agents/): files written the way Claude Code's subagent
documentation shows them load unchanged, found where it finds them (a project's over the
user's); bad files are named with file and line and the others still load; a project's
agent folders wait for the person's trust and are listed in the question."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_agent.config import load
from tui_agent.config.models import AgentsSettings, Config
from tui_agent.config.show import held_lines
from tui_agent.custom.agents.reader import AgentFolder, agent_folders, discover
from tui_agent.custom.agents.reader import load as load_agents

# As Claude Code's docs write a subagent (tools as a comma-separated string).
CODE_REVIEWER = """---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, \
security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately
"""
DEBUGGER = """---
name: debugger
description: Debugging specialist for errors, test failures, and unexpected behavior.
tools: [Read, Edit, Bash, Grep, Glob, WebFetch]
model: sonnet
color: red
permissionMode: acceptEdits
maxTurns: 7
effort: high
disallowedTools: Write
---
You are an expert debugger specializing in root cause analysis.
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    return home


def test_claude_codes_documented_files_load_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / ".claude/agents"
    _write(folder / "code-reviewer.md", CODE_REVIEWER)
    _write(folder / "debugger.md", DEBUGGER)
    found = discover([AgentFolder("project", folder)])
    reviewer, debugger = sorted(found.found, key=lambda a: a.name)
    assert (reviewer.name, reviewer.origin, reviewer.model) == ("code-reviewer", "project", None)
    assert reviewer.description.startswith("Expert code review specialist.")
    assert reviewer.tools == ("mcp__local__read", "mcp__local__grep", "mcp__local__glob",
                              "mcp__local__shell")
    assert reviewer.prompt.startswith("You are a senior code reviewer")
    assert reviewer.file == folder / "code-reviewer.md"
    # A YAML list, an alias kept as written (wiring decides), Claude Code's spellings of
    # max_turns and reasoning_effort, unknown keys (color, permissionMode) ignored.
    assert (debugger.model, debugger.max_turns, debugger.reasoning_effort) == (
        "sonnet", 7, "high")
    assert debugger.tools == ("mcp__local__read", "mcp__local__edit", "mcp__local__shell",
                              "mcp__local__grep", "mcp__local__glob")
    assert debugger.disallowed == ("mcp__local__write",)
    # WebFetch has no equivalent: the agent loads, and the file says so.
    (note,) = found.problems
    assert note.file == folder / "debugger.md"
    assert "WebFetch (Claude Code's own) have no equivalent in tui-agent" in note.message


def test_our_own_names_globs_and_no_tools(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    _write(folder / "timer.md", "---\ndescription: Tells the time\ntools:\n"
           "  - time__get_current_time\n  - mcp__files__*\n---\nTell the time.\n")
    _write(folder / "thinker.md", "---\ndescription: Only thinks\ntools: []\n"
           "reasoning_effort: low\nmax_turns: 3\nmodel: openai/small\n---\nThink.\n")
    _write(folder / "all.md", "---\ndescription: Everything\n---\nDo it.\n")
    found = {a.name: a for a in discover([AgentFolder("user", folder)]).found}
    assert found["timer"].tools == ("time__get_current_time", "mcp__files__*")
    assert found["thinker"].tools == () and found["thinker"].model == "openai/small"
    assert (found["thinker"].reasoning_effort, found["thinker"].max_turns) == ("low", 3)
    assert found["all"].tools is None, "no tools key: every tool the parent has"


def test_bad_files_are_named_with_their_line_and_the_others_load(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    _write(folder / "good.md", "---\ndescription: Fine\n---\nBody.\n")
    _write(folder / "broken.md", "---\ndescription: x\ntools: [Read\n---\nBody.\n")
    _write(folder / "nodesc.md", "---\nname: nodesc\nmodel: openai/x\n---\nBody.\n")
    _write(folder / "plain.md", "Just a prompt, no frontmatter.\n")
    _write(folder / "turns.md", "---\ndescription: d\n\nmaxTurns: lots\n---\nBody.\n")
    _write(folder / "badname.md", "---\nname: bad name!\ndescription: d\n---\nBody.\n")
    _write(folder / "effort.md", "---\ndescription: d\neffort: extreme\n---\nBody.\n")
    found = discover([AgentFolder("user", folder)])
    assert [a.name for a in found.found] == ["good"]
    problems = {p.file.name: (p.line, p.message) for p in found.problems}
    assert problems["broken.md"][1].startswith("bad frontmatter:")
    assert problems["nodesc.md"] == (1, "bad frontmatter: no 'description': the model picks "
                                        "an agent by it, so every agent file needs one")
    assert problems["plain.md"][0] == 1 and "no frontmatter" in problems["plain.md"][1]
    assert problems["turns.md"] == (4, "bad frontmatter: 'maxTurns' must be a whole number "
                                       "from 1 to 1000, not 'lots'")
    assert problems["badname.md"][0] == 2 and "'bad name!' cannot be" in problems["badname.md"][1]
    assert problems["effort.md"][0] == 3 and "'effort' must be one of" in problems["effort.md"][1]
    assert str(found.problems[0]).startswith(str(folder))


def test_a_projects_agent_wins_over_the_users_and_the_loser_is_named(home: Path,
                                                                      tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    project = tmp_path / "proj"
    assert [f.path for f in agent_folders(config_dir, home, project)] == [
        project / ".tui-agent/agents", project / ".claude/agents", config_dir / "agents",
        home / ".claude/agents"]
    assert [f.scope for f in agent_folders(config_dir, home, None)] == ["user", "user"]
    _write(home / ".claude/agents/reviewer.md", "---\ndescription: mine\n---\nMine.\n")
    _write(project / ".claude/agents/reviewer.md", "---\ndescription: theirs\n---\nTheirs.\n")
    _write(home / ".claude/agents/solo.md", "---\ndescription: solo\n---\nSolo.\n")
    untrusted = load_agents(None, os.environ)
    assert {a.name: a.description for a in untrusted.found} == {"reviewer": "mine",
                                                               "solo": "solo"}
    trusted = load_agents(project, os.environ)
    assert {a.name: a.description for a in trusted.found} == {"reviewer": "theirs",
                                                             "solo": "solo"}
    (lost,) = trusted.problems
    assert lost.file == home / ".claude/agents/reviewer.md"
    assert f"{project / '.claude/agents/reviewer.md'} (project) has that name" in lost.message


def test_a_projects_agents_make_it_ask_for_trust_and_are_listed(home: Path,
                                                                tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _write(project / ".claude/agents/code-reviewer.md", CODE_REVIEWER)
    inside = project / "src"
    inside.mkdir()
    settings = load(cwd=inside)
    assert settings.project is not None and settings.project.root == project
    held = settings.held
    assert held is not None and held.folders == {".claude/agents": ("code-reviewer.md",)}
    assert any(line.startswith("agents in .claude/agents: code-reviewer.md: sub-agents the "
                               "model may start") for line in held_lines(held))
    assert load(cwd=inside, trust=True).held is None
    assert load(cwd=inside).held is None, "agreed once"
    # An edit can send its requests elsewhere (a provider prefix can carry a URL).
    _write(project / ".claude/agents/code-reviewer.md",
           CODE_REVIEWER.replace("model: inherit", "model: huggingface/https://else.example/"))
    again = load(cwd=inside).held
    assert again is not None and again.folders == {".claude/agents": ("code-reviewer.md",)}
    assert load(cwd=inside, trust=True).held is None
    _write(project / ".tui-agent/agents/deploy.md", "---\ndescription: d\n---\nDeploy.\n")
    assert load(cwd=inside).held is not None, "a new agent asks again"


def test_a_projects_agents_limits_wait_for_trust(home: Path, tmp_path: Path) -> None:
    """Deeper nesting and more sub-agents at once spend the user's model: a project's
    [agents] table is held like its other keys."""
    project = tmp_path / "proj"
    _write(project / ".tui-agent/config.toml", "[agents]\nmax_depth = 5\nmax_parallel = 64\n")
    held = load(cwd=project)
    assert held.held is not None and held.config.agents.max_depth == 1
    assert held.config.agents.max_parallel == 4
    trusted = load(cwd=project, trust=True).config.agents
    assert (trusted.max_depth, trusted.max_parallel) == (5, 64)


def test_an_agent_files_max_turns_is_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    _write(folder / "loop.md", "---\ndescription: d\nmax_turns: 1000000000\n---\nLoop.\n")
    found = discover([AgentFolder("user", folder)])
    assert not found.found
    (problem,) = found.problems
    assert "'max_turns' must be a whole number from 1 to 1000" in str(problem)


def test_the_home_folders_own_agents_are_not_a_project(home: Path) -> None:
    _write(home / ".claude/agents/mine.md", "---\ndescription: d\n---\nMine.\n")
    assert load(cwd=home).held is None


def test_the_agents_table_defaults_and_bounds() -> None:
    assert Config().agents == AgentsSettings(max_parallel=4, max_depth=1, max_turns=25)
    with pytest.raises(ValueError, match="max_parallel"):
        AgentsSettings(max_parallel=0)


def test_the_agents_table_reads_from_the_config(home: Path, tmp_path: Path) -> None:
    config = _write(tmp_path / "c.toml", "[agents]\nmax_parallel = 2\nmax_turns = 9\n")
    settings = load(config, cwd=tmp_path)
    assert (settings.config.agents.max_parallel, settings.config.agents.max_turns,
            settings.config.agents.max_depth) == (2, 9, 1)


@pytest.mark.parametrize(("rules", "mode", "verdict"), [
    ((), "default", "auto"), ((), "plan", "auto"),
    ((("ask", "mcp__tui-agent__agent"),), "auto", "ask"),
    ((("deny", "mcp__tui-agent__agent"),), "default", "deny"),
    ((("allow", "mcp__tui-agent__*"), ("deny", "mcp__tui-agent__agent")), "auto", "deny")])
def test_the_agent_call_is_judged_by_the_rules_and_else_runs(
        rules: tuple[tuple[str, str], ...], mode: str, verdict: str) -> None:
    """Starting a sub-agent runs without asking, plan mode included (each of its calls is
    judged on its own); a deny or ask rule naming ``mcp__tui-agent__agent`` applies."""
    from tui_agent.config.rule_text import RuleEntry
    from tui_agent.core.builtins import judge
    from tui_agent.core.permissions import Policy
    from tui_agent.core.permissions.rules import RuleSet
    from tui_agent.core.skills.catalog import Catalog
    from tui_agent.core.skills.tool import SkillTool
    from tui_agent.core.subagents import Subagents

    policy = Policy(permission=RuleSet(RuleEntry(k, t) for k, t in rules),
                    mode=mode)  # type: ignore[arg-type]
    spec = Subagents().spec()
    assert (spec.name, spec.server, spec.tool) == ("agent", "tui-agent", "agent")
    judged = judge(policy, SkillTool(Catalog()), spec, {"prompt": "x"})
    assert judged.verdict == verdict, judged
