"""``tui-agent mcp import``: every client's own file format, written by the test where
that client keeps it (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, in a
home of the test's), listed with where each server comes from and imported into the
user's config with its comments kept."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.mcp_kit import COMMENTED, Machine, machine
from tests.zygote import command
from tui_agent.config.clients import sources

pytestmark = pytest.mark.slow


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def every_client(box: Machine) -> dict[str, Path]:
    """One server in each client's file, in that client's own shape."""
    config = box.home / "config"
    return {
        "desktop": write(config / "Claude" / "claude_desktop_config.json", json.dumps(
            {"mcpServers": {"desk": {"command": "npx", "args": ["-y", "desk-server"],
                                     "env": {"DESK_KEY": "k"}}}}, indent=2)),
        "code": write(box.home / ".claude.json", json.dumps({
            "numStartups": 3,
            "mcpServers": {"everywhere": {"type": "stdio", "command": "uvx",
                                          "args": ["mcp-server-time"]}},
            "projects": {str(box.project): {"mcpServers": {
                "here-only": {"type": "http", "url": "https://here.test/mcp"}}},
                "/elsewhere": {"mcpServers": {"not-this": {"command": "x"}}}}}, indent=2)),
        "cursor": write(box.home / ".cursor" / "mcp.json", json.dumps(
            {"mcpServers": {"cur": {"url": "https://cursor.test/sse",
                                    "headers": {"X-Key": "cursor-secret-1"}}}})),
        "vscode": write(config / "Code" / "User" / "mcp.json", """{
  // VS Code's user mcp.json: comments and trailing commas are allowed
  "inputs": [{"type": "promptString", "id": "tok", "password": true}],
  "servers": {
    "vs": {"type": "stdio", "command": "node", "args": ["vs.js"],},
    "asks": {"type": "http", "url": "https://asks.test/mcp",
             "headers": {"Authorization": "Bearer ${input:tok}"}},
  },
}
"""),
        "windsurf": write(box.home / ".codeium" / "windsurf" / "mcp_config.json",
                          json.dumps({"mcpServers": {"surf": {
                              "serverUrl": "https://surf.test/mcp"}}})),
        "zed": write(config / "zed" / "settings.json", """// Zed settings
{
  "theme": "One Dark", /* a block comment */
  "context_servers": {
    "zedded": {"source": "custom", "command": "zed-mcp", "args": ["--stdio"], "env": {}},
    "old-style": {"command": {"path": "old-mcp", "args": ["a"], "env": {"K": "v"}}},
  },
}
"""),
        "project": write(box.project / ".cursor" / "mcp.json", json.dumps(
            {"mcpServers": {"team": {"command": "team-mcp"}}})),
    }


def test_the_list_says_where_each_server_comes_from(tmp_path: Path) -> None:
    box = machine(tmp_path)
    files = every_client(box)
    done = box.mcp("import")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    expected = {"desk": ("Claude Desktop", files["desktop"], 3),
                "everywhere": ("Claude Code", files["code"], 4),
                "here-only": ("Claude Code", files["code"], 15),
                "cur": ("Cursor", files["cursor"], 1),
                "vs": ("VS Code", files["vscode"], 5),
                "surf": ("Windsurf", files["windsurf"], 1),
                "zedded": ("Zed", files["zed"], 5), "old-style": ("Zed", files["zed"], 6),
                "team": ("Cursor (project)", files["project"], 1)}
    for name, (client, file, line) in expected.items():
        assert f"{client} ({file}:{line})" in lines[name], lines[name]
    assert "not-this" not in lines, "another project's servers are not this one's"
    assert "cannot import: headers.Authorization uses ${input:tok}" in lines["asks"]
    assert "a value VS Code asks for when the server starts" in lines["asks"]
    assert "transport sse" in lines["cur"] and "transport http" in lines["surf"]
    assert box.user_config.read_text() == COMMENTED, "listing writes nothing"
    assert "import them with 'tui-agent mcp import --all'" in done.stdout


def test_all_imports_what_can_be_and_keeps_the_comments(tmp_path: Path) -> None:
    box = machine(tmp_path)
    every_client(box)
    done = box.mcp("import", "--all")
    assert done.returncode == 0, done.stderr
    text = box.user_config.read_text()
    assert text.startswith(COMMENTED)
    servers = tomllib.loads(text)["servers"]
    assert set(servers) == {"mine", "desk", "everywhere", "here-only", "cur", "vs", "surf",
                            "zedded", "old-style"}
    assert servers["desk"] == {"command": "npx", "args": ["-y", "desk-server"],
                               "env": {"DESK_KEY": "k"}}
    assert servers["surf"] == {"url": "https://surf.test/mcp"}
    assert servers["cur"]["headers"] == {"X-Key": "cursor-secret-1"}
    assert servers["old-style"] == {"command": "old-mcp", "args": ["a"], "env": {"K": "v"}}
    assert servers["vs"]["transport"] == "stdio" and servers["vs"]["args"] == ["vs.js"]
    assert "left out asks: cannot import" in done.stdout
    assert "cursor-secret-1" not in done.stdout
    again = box.mcp("import", "--all")
    assert again.returncode == 0
    assert "left out desk: already configured at" in again.stdout
    assert box.user_config.read_text() == text


def test_a_named_import_that_clashes_imports_nothing_unless_forced(tmp_path: Path) -> None:
    box = machine(tmp_path)
    write(box.home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "mine": {"command": "from-cursor"}, "fresh": {"command": "fresh-mcp"}}}))
    before = box.user_config.read_bytes()
    done = box.mcp("import", "fresh", "mine")
    assert done.returncode == 2
    assert f"a server named 'mine' is already configured at {box.user_config}:6" \
        in done.stderr and "nothing was imported" in done.stderr
    assert box.user_config.read_bytes() == before
    unknown = box.mcp("import", "nope")
    assert unknown.returncode == 2 and "no server named 'nope' was found" in unknown.stderr
    forced = box.mcp("import", "mine", "--force")
    assert forced.returncode == 0, forced.stderr
    servers = tomllib.loads(box.user_config.read_text())["servers"]
    assert servers["mine"] == {"command": "from-cursor"} and "fresh" not in servers


def test_from_reads_any_mcp_servers_file(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    file = write(tmp_path / "shared.json", json.dumps({"mcpServers": {
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git"],
                "alwaysAllow": ["git_status"]}}}))
    done = box.mcp("import", "--from", str(file), "git")
    assert done.returncode == 0, done.stderr
    assert f"imported git from {file}:1 into {box.user_config}:1" in done.stdout
    assert tomllib.loads(box.user_config.read_text())["servers"]["git"]["auto"] == \
        ["git_status"]
    broken = write(tmp_path / "broken.json", '{"mcpServers": {')
    bad = box.mcp("import", "--from", str(broken))
    assert bad.returncode == 2 and f"invalid configuration in {broken}: line 1" in bad.stderr


def test_an_unreadable_client_file_is_named_and_the_rest_still_listed(
        tmp_path: Path) -> None:
    box = machine(tmp_path)
    cursor = write(box.home / ".cursor" / "mcp.json", '{"mcpServers": {"x": }')
    write(box.home / ".codeium" / "windsurf" / "mcp_config.json",
          '{"mcpServers": {"surf": {"serverUrl": "https://surf.test/mcp"}}}')
    done = box.mcp("import")
    assert done.returncode == 0
    assert f"warning: Cursor: invalid configuration in {cursor}: line 1" in done.stderr
    assert done.stdout.startswith("surf")


@pytest.mark.parametrize("platform,expected", [
    ("darwin", "Library/Application Support/Claude/claude_desktop_config.json"),
    ("win32", "Roaming/Claude/claude_desktop_config.json"),
    ("linux", "xdg/Claude/claude_desktop_config.json"),
])
def test_each_os_has_its_own_places(platform: str, expected: str, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "APPDATA": str(tmp_path / "Roaming"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    found: dict[str, Path] = {}
    for source in sources(env, tmp_path, platform):
        found.setdefault(source.client, source.file)
    assert str(found["Claude Desktop"]).endswith(expected)
    zed = {"darwin": ".config/zed", "win32": "Roaming/Zed", "linux": "xdg/zed"}[platform]
    assert str(found["Zed"]).endswith(f"{zed}/settings.json")
    code = {"darwin": "Library/Application Support/Code/User", "win32": "Roaming/Code/User",
            "linux": "xdg/Code/User"}[platform]
    assert str(found["VS Code"]).endswith(f"{code}/mcp.json")


@pytest.mark.parametrize("flags", [[], ["--no-project"]])
def test_a_clash_in_the_project_file_imports_nothing_and_keeps_its_trust(
        tmp_path: Path, flags: list[str]) -> None:
    """All or nothing: ``y`` already in the project's file refuses the import before
    ``a`` is written (also with ``--no-project``, where the layers read leave that file
    out), so the file is byte for byte as it was and the project stays trusted."""
    box = machine(tmp_path, config=None)
    added = box.mcp("add", "y", "--scope", "project", "--no-start", "--", sys.executable,
                    "-V")
    assert added.returncode == 0, added.stderr
    project = box.project / ".tui-agent" / "config.toml"
    before = project.read_bytes()
    write(box.home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "a": {"command": "a-mcp"}, "y": {"command": "y-mcp"}}}))
    done = box.mcp("import", "a", "y", "--scope", "project", *flags)
    assert done.returncode == 2
    assert "a server named 'y' is already" in done.stderr
    assert "nothing was imported" in done.stderr
    assert project.read_bytes() == before
    listed = box.mcp("list")
    assert listed.stdout.split()[:3] == ["y", "stdio", "project"]
    assert "the project is not trusted yet" not in listed.stdout


def test_all_leaves_the_projects_servers_out_until_named(tmp_path: Path) -> None:
    """A project's ``.mcp.json`` (and Cursor's, VS Code's) are the project's words:
    ``--all`` does not copy them into the user's file, where they would run in every
    directory without the person agreeing to the project; named, one is imported."""
    box = machine(tmp_path, config=None)
    write(box.home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "mine": {"command": "mine-mcp"}}}))
    for file, key in ((".mcp.json", "mcpServers"), (".cursor/mcp.json", "mcpServers"),
                      (".vscode/mcp.json", "servers")):
        name = file.split("/")[0].strip(".").replace(".json", "")
        write(box.project / file, json.dumps({key: {f"p-{name}": {"command": "evil"}}}))
    listed = box.mcp("import")
    # .mcp.json's server is tui-agent's already (it reads that file): no offer to import it
    assert listed.stdout.count("this project's server: --all leaves it out") == 2
    done = box.mcp("import", "--all")
    assert done.returncode == 0, done.stderr
    assert set(tomllib.loads(box.user_config.read_text())["servers"]) == {"mine"}
    # tui-agent reads .mcp.json as the project's own file: its servers are already there
    assert f"left out p-mcp: already configured at {box.project / '.mcp.json'}" \
        in done.stdout
    for name in ("p-cursor", "p-vscode"):
        assert (f"left out {name}: this project's server: --all leaves it out; if you "
                f"trust the project, 'tui-agent mcp import {name}' imports it") in done.stdout
    named = box.mcp("import", "p-cursor")
    assert named.returncode == 0, named.stderr
    assert set(tomllib.loads(box.user_config.read_text())["servers"]) == {"mine", "p-cursor"}


def test_a_server_naming_an_unset_variable_waits_for_it(tmp_path: Path) -> None:
    """A config naming an unset ``${VAR}`` does not load at all: such a server is listed
    as not importable yet (named with the variable), a named import of it writes nothing,
    and ``--all`` takes the others."""
    box = machine(tmp_path, config=None)
    file = write(tmp_path / "team.json", json.dumps({"mcpServers": {
        "docs": {"url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${UNSET_TEAM_TOKEN_Z}"}},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}}}))
    listed = box.mcp("import", "--from", str(file))
    assert "${UNSET_TEAM_TOKEN_Z}, not set in the environment" in listed.stdout
    named = box.mcp("import", "--from", str(file), "docs")
    assert named.returncode == 2 and "${UNSET_TEAM_TOKEN_Z}" in named.stderr
    assert not box.user_config.exists() or "docs" not in box.user_config.read_text()
    every = box.mcp("import", "--from", str(file), "--all")
    assert every.returncode == 0, every.stderr
    assert set(tomllib.loads(box.user_config.read_text())["servers"]) == {"time"}
    box.env["UNSET_TEAM_TOKEN_Z"] = "now-it-is-set-123"
    assert box.mcp("import", "--from", str(file), "docs").returncode == 0


def test_vs_code_variables_are_translated_and_inputs_named(tmp_path: Path) -> None:
    """VS Code's ``${env:NAME}`` becomes ``${NAME}`` and ``${workspaceFolder}`` the
    project's folder (VS Code's MCP configuration reference); ``${input:ID}``, which VS
    Code asks for, cannot be: the server and key are named, and the "if you trust the
    project" note is given only where importing can work."""
    box = machine(tmp_path, config=None)
    box.env["VS_TEAM_TOKEN_Q"] = "set"
    write(box.project / ".vscode" / "mcp.json", """{
  "inputs": [{"type": "promptString", "id": "tok", "password": true}],
  "servers": {
    "files": {"type": "stdio", "command": "npx",
              "args": ["-y", "server-fs", "${workspaceFolder}/docs", "${userHome}${/}notes"],
              "env": {"TEAM_TOKEN": "${env:VS_TEAM_TOKEN_Q}"}},
    "asks": {"type": "http", "url": "https://asks.test/mcp",
             "headers": {"Authorization": "Bearer ${input:tok}"}},
  },
}
""")
    listed = box.mcp("import")
    assert listed.returncode == 0, listed.stderr
    assert ("cannot import: headers.Authorization uses ${input:tok}, a value VS Code asks "
            "for when the server starts, which tui-agent cannot translate") in listed.stdout
    assert listed.stdout.count("if you trust the project") == 1  # files's, not asks's
    named = box.mcp("import", "asks")
    assert named.returncode == 2
    assert "asks from VS Code (project)" in named.stderr
    assert "headers.Authorization uses ${input:tok}" in named.stderr
    done = box.mcp("import", "files")
    assert done.returncode == 0, done.stderr
    server = tomllib.loads(box.user_config.read_text())["servers"]["files"]
    assert server["args"] == ["-y", "server-fs", f"{box.project}/docs",
                              f"{box.home}/notes"]
    assert server["env"] == {"TEAM_TOKEN": "${VS_TEAM_TOKEN_Q}"}


def test_a_literal_token_is_imported_with_the_way_to_keep_it_out(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    file = write(tmp_path / "team.json", json.dumps({"mcpServers": {"docs": {
        "url": "https://example.com/mcp",
        "headers": {"Authorization": "Bearer R4nd0mT0kenValue", "X-Trace": "on"},
        "env": {"DOCS_API_KEY": "R4nd0mKeyValue"}}}}))
    listed = box.mcp("import", "--from", str(file))
    done = box.mcp("import", "--from", str(file), "docs")
    assert done.returncode == 0, done.stderr
    server = tomllib.loads(box.user_config.read_text())["servers"]["docs"]
    assert server["headers"]["Authorization"] == "Bearer R4nd0mT0kenValue"
    warned = ('docs: headers.Authorization holds a literal secret, imported into your '
              'config file as it is; to keep it out, set DOCS_AUTHORIZATION in your '
              'environment and write headers.Authorization = "Bearer '
              '${DOCS_AUTHORIZATION}" instead')
    assert f"    warning: {warned}" in listed.stdout
    assert f"tui-agent: warning: {warned}" in done.stderr
    assert ("docs: env.DOCS_API_KEY holds a literal secret" in done.stderr
            and 'env.DOCS_API_KEY = "${DOCS_DOCS_API_KEY}"' in done.stderr)
    assert "X-Trace" not in done.stderr
    for said in (listed.stdout, listed.stderr, done.stdout, done.stderr):
        assert "R4nd0m" not in said


def printed(said: str, before: str) -> list[str]:
    """The command quoted after ``before`` in ``said``, as the shell would split it (its
    ``tui-agent``, the first word, dropped)."""
    found = re.search(r"'(tui-agent [^']*)'", said.split(before, 1)[1])
    assert found, said
    quoted = found[1]
    words = shlex.split(quoted)
    assert words[0] == "tui-agent", quoted
    return words[1:]


def run_printed(box: Machine, words: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command(), *words], cwd=box.project, env=box.env,
                          capture_output=True, text=True, timeout=120)


def test_each_hint_into_an_untrusted_project_works_as_printed(tmp_path: Path) -> None:
    """Imported into a cloned project's file (``--scope project``) that is not trusted
    yet, a server would not run: every command the import prints carries ``--scope
    project`` and ``--trust-project``, and run as printed each does what it says (the
    named server imported, the project's servers run)."""
    box = machine(tmp_path, config=None)
    project = write(box.project / ".tui-agent" / "config.toml",
                    f'[servers.cloned]\ncommand = "{sys.executable}"\nargs = ["-V"]\n')
    write(box.home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "mine": {"command": "mine-mcp"}}}))
    write(box.project / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "team": {"command": "team-mcp"}}}))
    listed = box.mcp("import", "--scope", "project")
    assert "the project is not trusted yet" in listed.stdout
    done = box.mcp("import", "--all", "--scope", "project")
    assert done.returncode == 0, done.stderr
    named = run_printed(box, printed(done.stdout, "left out team: "))
    assert named.returncode == 0, named.stderr
    assert set(tomllib.loads(project.read_text())["servers"]) == {"cloned", "mine", "team"}
    assert "not trusted" not in box.mcp("list").stdout
    assert "'tui-agent servers' starts them" in named.stdout
    project.write_text(project.read_text()  # a pull brings a server the person never saw
                       + f'\n[servers.pulled]\ncommand = "{sys.executable}"\nargs = ["-V"]\n')
    every = box.mcp("import", "mine", "--scope", "project", "--force")
    started = run_printed(box, printed(every.stdout, "its servers do not run: "))
    assert started.returncode in (0, 1), started.stderr
    assert "not trusted" not in box.mcp("list").stdout


def test_the_hints_after_from_read_that_file_again(tmp_path: Path) -> None:
    """``--from FILE`` lists a file no client keeps: the commands it prints read it
    again (without ``--from`` they would look in the clients' files instead)."""
    box = machine(tmp_path, config=None)
    file = write(tmp_path / "team servers.json", json.dumps({"mcpServers": {
        "t1": {"command": "t1-mcp"}, "t2": {"command": "t2-mcp"}}}))
    listed = box.mcp("import", "--from", str(file))
    assert listed.returncode == 0, listed.stderr
    done = run_printed(box, printed(listed.stdout, "import them with "))
    assert done.returncode == 0, done.stderr
    assert set(tomllib.loads(box.user_config.read_text())["servers"]) == {"t1", "t2"}
