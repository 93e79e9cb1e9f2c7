"""Permission rules (``[permissions] allow/ask/deny``): the grammar, how a rule matches a
call (paths, ``~``, ``**``, quoting, numbers), the order the policy checks them in, how
the layers merge (each rule keeps its file and line; a bad rule refuses the config), and
that a project's rules wait for trust and can never loosen a user's deny."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from tests.e2e_kit import entry_point, run, write_config
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tui_agent.config import ConfigError, load
from tui_agent.config.rule_text import RuleEntry, RuleSyntaxError, parse_rule
from tui_agent.config.show import held_lines
from tui_agent.core.permissions import Policy, ServerRules
from tui_agent.core.permissions.rules import RuleSet, rule_for

_ = entry_point


def policy(*rules: tuple[str, str], **kw: object) -> Policy:
    return Policy(permission=RuleSet(RuleEntry(k, t) for k, t in rules), **kw)  # type: ignore[arg-type]


def matches(rule: str, arguments: dict[str, object] | None, server: str = "fs",
            tool: str = "write_file") -> bool:
    return RuleSet([RuleEntry("deny", rule)]).first("deny", server, tool,
                                                     arguments) is not None


def test_the_grammar_reads_names_conditions_and_quoted_values() -> None:
    assert parse_rule("mcp__fs__*").name == "mcp__fs__*"
    assert parse_rule("fs__write_file").name == "mcp__fs__write_file"  # as the model sees it
    read = parse_rule(r'mcp__x__t( a = "1, 2)", b=/etc/**, c="say \"hi\" \\o/" )')
    assert read.conditions == (("a", "1, 2)"), ("b", "/etc/**"), ("c", 'say "hi" \\o/'))


@pytest.mark.parametrize(("text", "said"), [
    ("", "empty"), ("mcp__a(", "no '='"), ("mcp__a(x=1", "no ')'"),
    ('mcp__a(x="1)', "no closing"), ("mcp__a()", "holds no condition"),
    ("mcp__a(x=1) y", "text after ')'"), ("mcp__a(x=1, x=2)", "two conditions"),
    ("mcp__a(=1)", "not an argument name"), ("mcp__a(x=)", "has no value"),
    ("mcp a", "blank"),
])
def test_a_bad_rule_says_what_is_wrong(text: str, said: str) -> None:
    with pytest.raises(RuleSyntaxError, match=re.escape(said)):
        parse_rule(text)


def test_names_are_globs_on_mcp_server_tool_case_sensitive() -> None:
    assert matches("mcp__fs__*", None) and matches("mcp__*__write_?ile", None)
    assert matches("fs__write_file", None)
    assert not matches("mcp__FS__*", None) and not matches("mcp__fs__read*", None)


def test_paths_are_normalised_with_home_and_double_star() -> None:
    rule = "mcp__fs__write_file(path=/etc/**)"
    assert matches(rule, {"path": "/etc/passwd"})
    assert matches(rule, {"path": "/etc/ssh/sshd_config"})
    assert matches(rule, {"path": "/tmp/../etc/x"})  # '..' resolved on the text
    assert matches(rule, {"path": "/etc"})
    assert not matches(rule, {"path": "/etcetera"}) and not matches(rule, {"path": "/tmp/x"})
    one = "mcp__fs__write_file(path=/etc/*)"
    assert matches(one, {"path": "/etc/passwd"})
    assert not matches(one, {"path": "/etc/ssh/sshd_config"})  # '*' stays in a folder
    home = os.path.expanduser("~")
    assert matches("mcp__fs__*(path=~/work/**)", {"path": f"{home}/work/a/b.py"})
    assert matches(f"mcp__fs__*(path={home}/work/**)", {"path": "~/work/a"})
    assert not matches("mcp__fs__*(path=~/work/**)", {"path": f"{home}/play/a"})


def test_values_missing_arguments_numbers_and_all_conditions() -> None:
    rule = 'mcp__fs__write_file(mode=w*, count=3, force=true)'
    assert matches(rule, {"mode": "wb", "count": 3, "force": True})
    assert not matches(rule, {"mode": "wb", "count": 3})  # a missing argument never matches
    assert not matches(rule, {"mode": "wb", "count": 3.5, "force": True})
    assert not matches(rule, {"mode": "a", "count": 3, "force": True})
    assert not matches(rule, None)
    assert matches('mcp__fs__write_file(q="a,b=c")', {"q": "a,b=c"})


def test_the_order_deny_then_ask_then_allow_then_lists_then_mode() -> None:
    rules = (("allow", "mcp__fs__*"), ("ask", "mcp__fs__write_file"),
             ("deny", "mcp__fs__write_file(path=/etc/**)"))
    judged = policy(*rules).judge("fs", "write_file", arguments={"path": "/etc/x"})
    assert (judged.verdict, judged.by) == ("deny",
                                           'deny rule "mcp__fs__write_file(path=/etc/**)"')
    asked = policy(*rules).judge("fs", "write_file", arguments={"path": "/tmp/x"})
    assert (asked.verdict, asked.by) == ("ask", 'ask rule "mcp__fs__write_file"')
    ran = policy(*rules).judge("fs", "read_file", arguments={"path": "/etc/x"})
    assert (ran.verdict, ran.by) == ("auto", 'allow rule "mcp__fs__*"')
    # The server's ask list is an ask, before any allow rule; the auto list beats the
    # mode's ask.
    listed = policy(("allow", "mcp__fs__read*"),
                    rules={"fs": ServerRules(ask=("read_file", "stat"), auto=("list",))})
    assert listed.judge("fs", "read_file").by == "the ask list of fs"
    assert listed.judge("fs", "read_dir").by == 'allow rule "mcp__fs__read*"'
    assert listed.judge("fs", "stat").by == "the ask list of fs"
    assert listed.judge("fs", "list").by == "the auto list of fs"
    # Auto mode runs what no rule asks about; an ask rule still asks, a deny still denies.
    auto = policy(("ask", "mcp__fs__stat"), ("deny", "mcp__fs__rm"), mode="auto")
    assert auto.judge("fs", "anything").by == "auto mode"
    assert auto.judge("fs", "stat").verdict == "ask"
    assert auto.judge("fs", "rm").verdict == "deny"
    # A deny rule comes before plan mode and the server's own "always ask".
    assert policy(("deny", "mcp__local__shell"), mode="plan").judge(
        "local", "shell", asks="unsandboxed").by == 'deny rule "mcp__local__shell"'
    # The servers' own allow/deny lists stay first.
    assert policy(("allow", "*"), rules={"fs": ServerRules(deny=("rm",))}).judge(
        "fs", "rm").by == "the deny list of fs"


def test_read_only_globs_accept_both_ways_of_naming_a_tool() -> None:
    plan = Policy(mode="plan", read_only=("fs__read*", "mcp__git__status"))
    assert plan.judge("fs", "read_file").verdict == "ask"
    assert plan.judge("git", "status").verdict == "ask"
    assert plan.judge("git", "commit").verdict == "deny"


def user_config(isolated_env: Path, text: str) -> Path:
    path = isolated_env / "config" / "tui-agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project(root: Path, text: str) -> Path:
    (root / ".tui-agent").mkdir(parents=True, exist_ok=True)
    (root / ".tui-agent" / "config.toml").write_text(text)
    return root


def test_rules_add_up_across_layers_each_with_its_file_and_line(
        isolated_env: Path, tmp_path: Path) -> None:
    user = user_config(isolated_env, '# mine\n[permissions]\nallow = [\n  "mcp__git__*",\n'
                                     '  "mcp__fs__read_file",\n]\n')
    given = tmp_path / "extra.toml"
    given.write_text('[permissions]\ndeny = ["mcp__fs__*(path=/etc/**)"]\n'
                     'allow = ["mcp__time__*"]\n')
    settings = load(given, cwd=tmp_path)
    assert [(r.kind, r.text, r.file, r.line) for r in settings.rules] == [
        ("allow", "mcp__git__*", user, 4), ("allow", "mcp__fs__read_file", user, 5),
        ("deny", "mcp__fs__*(path=/etc/**)", given, 2), ("allow", "mcp__time__*", given, 3)]
    assert settings.config.permissions.allow == ["mcp__git__*", "mcp__fs__read_file",
                                                 "mcp__time__*"]


def test_a_rule_that_does_not_parse_refuses_the_config_naming_file_and_line(
        isolated_env: Path, tmp_path: Path) -> None:
    user = user_config(isolated_env, '[permissions]\nallow = ["mcp__git__*"]\n'
                                     'deny = [\n  "mcp__fs__*",\n  "mcp__fs__w(path=/etc",\n]\n'
                                     'read_only = ["mcp__x__y(a=1)"]\n')
    with pytest.raises(ConfigError) as caught:
        load(cwd=tmp_path)
    said = str(caught.value)
    assert str(user) in said
    assert "line 5: permissions.deny: rule 'mcp__fs__w(path=/etc': no ')'" in said
    assert "line 7: permissions.read_only" in said and "without (ARG=...)" in said


def test_project_rules_wait_for_trust_and_never_loosen_a_user_deny(
        isolated_env: Path, tmp_path: Path) -> None:
    user_config(isolated_env, '[permissions]\ndeny = ["mcp__fs__write_file(path=/etc/**)"]\n')
    proj = project(tmp_path / "clone", '[permissions]\nallow = ["mcp__fs__*"]\n'
                                       'deny = ["mcp__git__push"]\n')
    untrusted = load(cwd=proj)
    assert untrusted.held is not None and "permissions.allow" in untrusted.held.keys
    assert any(line.startswith("permissions.allow") for line in held_lines(untrusted.held))
    assert [r.text for r in untrusted.rules] == ["mcp__fs__write_file(path=/etc/**)"]
    trusted = load(cwd=proj, trust=True)
    assert [r.kind for r in trusted.rules] == ["deny", "deny", "allow"]
    judge = Policy(permission=RuleSet(trusted.rules)).judge
    denied = judge("fs", "write_file", arguments={"path": "/etc/hosts"})
    assert denied.verdict == "deny" and "config/tui-agent/config.toml:2)" in denied.by
    allowed = judge("fs", "write_file", arguments={"path": str(proj / "a")})
    assert allowed.verdict == "auto" and ".tui-agent/config.toml:2)" in allowed.by
    assert judge("git", "push").verdict == "deny"


def test_rule_for_a_call_quotes_escapes_and_skips_what_it_cannot_hold() -> None:
    assert rule_for("fs", "write_file", None) == ("mcp__fs__write_file", [])
    text, skipped = rule_for("fs", "write_file", {
        "path": "/tmp/a, b*.txt", "n": 2, "ok": False, "lines": [1], "body": "x" * 201})
    assert text == 'mcp__fs__write_file(path="/tmp/a, b[*].txt", n=2, ok=false)'
    assert skipped == ["lines (not a plain value)", "body (longer than 200 characters)"]
    # It matches the call it was made from, and not another value.
    assert matches(text, {"path": "/tmp/a, b*.txt", "n": 2, "ok": False})
    assert not matches(text, {"path": "/tmp/a, bX.txt", "n": 2, "ok": False})


def test_run_refuses_one_call_by_a_deny_rule_and_runs_another_by_an_allow_rule(
        fake_llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        entry_point: None) -> None:
    """``tui-agent run`` with the scripted LLM and a real MCP server: a deny rule with an
    argument condition refuses one call of ``echo`` and not another; an allow rule with a
    condition runs ``add`` under ``--approve deny``, which refuses the other ``add``.
    Each JSONL ``approval`` event's ``by`` names the rule and its file and line."""
    config = write_config(tmp_path / "c.toml", "openai/fake-model", fake_llm.base_url)
    with config.open("a") as out:
        out.write('\n[permissions]\ndeny = ["mcp__t__echo(text=secret*)"]\n'
                  'allow = ["t__add(a=2)"]\n')
    fake_llm.push(Reply(tool_calls=[
        FakeToolCall("t__echo", {"text": "secret plan"}, id="e1"),
        FakeToolCall("t__echo", {"text": "hello"}, id="e2"),
        FakeToolCall("t__add", {"a": 2, "b": 3}, id="a1"),
        FakeToolCall("t__add", {"a": 4, "b": 1}, id="a2")]), Reply(text="done"))
    lines = config.read_text().splitlines()
    deny, allow = (lines.index(f"{k} = [{r}]") + 1 for k, r in (
        ("deny", '"mcp__t__echo(text=secret*)"'), ("allow", '"t__add(a=2)"')))
    result = run(capsys, config, "go", "--approve", "deny")
    assert result.code == 0, (result.events, result.err)
    approvals = {e["id"]: (e["decision"], e["by"]) for e in result.of("approval")}
    assert approvals["e1"] == ("denied",
                               f'deny rule "mcp__t__echo(text=secret*)" ({config}:{deny})')
    assert approvals["e2"] == ("denied", "--approve deny")
    assert approvals["a1"] == ("auto", f'allow rule "t__add(a=2)" ({config}:{allow})')
    assert approvals["a2"] == ("denied", "--approve deny")
    results = {e["id"]: e for e in result.of("tool_result")}
    assert results["a1"]["text"] == "5" and not results["a1"]["is_error"]
    assert results["e1"]["is_error"] and "deny rule" in results["e1"]["text"]
    told = json.dumps(fake_llm.requests[1]["messages"])
    assert 'refused by deny rule \\"mcp__t__echo(text=secret*)\\"' in told


def test_add_and_remove_rules_in_files_or_say_why_not(isolated_env: Path,
                                                      tmp_path: Path) -> None:
    """``add_rule`` writes to the user's config (created when missing) and applies at
    once; a bad rule is refused and nothing applied; ``remove_rule`` takes a rule out of
    its file, or says why not (the file was edited meanwhile, a JSON file) and keeps it."""
    from tui_agent.config import paths
    from tui_agent.config.rule_edit import TomlRuleFiles

    user = paths.default_config_file()
    files = TomlRuleFiles(user)
    judge = Policy(rule_files=files)
    assert judge.add_rule("allow", "mcp__fs__read(path=") is not None
    assert judge.add_rule("maybe", "mcp__fs__read") is not None
    assert judge.permission_rules() == []
    assert judge.add_rule("deny", "mcp__fs__rm") is None
    assert judge.judge("fs", "rm").by.startswith('deny rule "mcp__fs__rm" (')
    assert judge.judge("fs", "rm").by.endswith("/tui-agent/config.toml:2)")
    assert tomllib.loads(user.read_text())["permissions"]["deny"] == ["mcp__fs__rm"]
    [entry] = judge.permission_rules()
    user.write_text("# edited by hand\n")
    said = judge.remove_rule(entry)
    assert said is not None and "holds no rule 'mcp__fs__rm' any more" in said
    assert judge.judge("fs", "rm").verdict == "deny"  # it stays in force
    elsewhere = RuleEntry("deny", "mcp__fs__rm", tmp_path / "servers.json", 3)
    judge.permission = RuleSet([elsewhere])
    assert "only edited in TOML files" in (judge.remove_rule(elsewhere) or "")
    session = RuleEntry("ask", "mcp__x__y")
    judge.permission = RuleSet([session])
    assert judge.remove_rule(session) is None and judge.permission_rules() == []


def test_what_a_crafted_argument_cannot_slip_past() -> None:
    """A leading ``//`` is ``/``; whether a value is a path is the rule's to say (a slash in
    a command is no escape from ``rm *``); a relative path, which the server resolves
    from a folder of its own, meets a deny and never an allow; a list is denied by any of
    its items and allowed only by all."""
    assert matches("mcp__fs__write_file(path=/etc/**)", {"path": "//etc/passwd"})
    assert matches("mcp__sh__run(command=rm *)", {"command": "rm -rf /tmp/x"}, "sh", "run")
    assert matches("mcp__fs__read(path=*.env)", {"path": "/x/.env"}, tool="read")
    for relative in ("etc/passwd", "../../../../etc/passwd"):
        assert matches("mcp__fs__write_file(path=/etc/**)", {"path": relative})
    assert matches("mcp__fs__read_many(paths=/etc/**)", {"paths": ["/tmp/a", "/etc/x"]},
                   tool="read_many")
    allow = RuleSet([RuleEntry("allow", "mcp__fs__read_many(paths=/work/**)")])
    assert allow.first("allow", "fs", "read_many", {"paths": ["/work/a", "/work/b"]})
    assert allow.first("allow", "fs", "read_many", {"paths": ["/work/a", "/etc/x"]}) is None
    assert allow.first("allow", "fs", "read_many", {"paths": ["work/a"]}) is None


def test_a_bad_character_class_is_a_syntax_error_at_load() -> None:
    with pytest.raises(RuleSyntaxError, match=r"the class \[z-a\]"):
        parse_rule("mcp__fs__write_file(path=/etc/[z-a]*)")


def test_a_project_allow_never_beats_a_servers_ask_list() -> None:
    judged = policy(("allow", "mcp__fs__*"), rules={"fs": ServerRules(ask=("write_file",))}
                    ).judge("fs", "write_file", arguments={"path": "/x"})
    assert (judged.verdict, judged.by) == ("ask", "the ask list of fs")
