"""Writing approval choices back to the file a server came from (TOML with its comments,
JSON with its client's key), and the policy changes that drive it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tui_agent.config import ConfigError, load
from tui_agent.config.writeback import edit_list
from tui_agent.core.permissions import ApprovalStore, Policy, ServerRules
from tui_agent.wiring.build import policy_from

TOML = """\
# my tools
[servers.fs]  # files
command = "fs-server"
auto = [
  "read",  # safe
]

[servers.git]
command = "git-server"
deny = ["push*"]
"""


def test_toml_add_and_remove_keep_comments(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(TOML)
    settings = load(path)
    edit_list(settings.origins["fs"], "auto", "write", add=True)
    edit_list(settings.origins["git"], "auto", "log", add=True)
    text = path.read_text()
    assert "# my tools" in text and "[servers.fs]  # files" in text and '"read",  # safe' in text
    data = tomllib.loads(text)
    assert data["servers"]["fs"]["auto"] == ["read", "write"]
    assert data["servers"]["git"]["auto"] == ["log"]
    edit_list(settings.origins["fs"], "auto", "write", add=False)
    assert tomllib.loads(path.read_text())["servers"]["fs"]["auto"] == ["read"]


def test_json_uses_the_clients_key_and_indent(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"fs": {"command": "x", "autoApprove": ["a"]},
                                               "web": {"command": "y"}}}, indent=4))
    settings = load(None, [path])
    edit_list(settings.origins["fs"], "auto", "b", add=True)
    edit_list(settings.origins["web"], "auto", "fetch", add=True)
    text = path.read_text()
    data = json.loads(text)
    assert data["mcpServers"]["fs"]["autoApprove"] == ["a", "b"]
    assert data["mcpServers"]["web"]["alwaysAllow"] == ["fetch"]
    assert '\n    "mcpServers"' in text
    assert load(None, [path]).config.servers["web"].auto == ["fetch"]


def test_a_file_that_became_invalid_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(TOML)
    origin = load(path).origins["fs"]
    path.write_text("[servers\n")
    with pytest.raises(ConfigError, match="c.toml.*not valid TOML"):
        edit_list(origin, "auto", "x", add=True)


def test_policy_standing_changes_are_written_and_globs_respected(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(TOML)
    policy = policy_from(load(path))
    assert policy.standing("git", "push_force") == "not allowed"
    problem = policy.set_standing("git", "push_force", "ask")
    assert problem is not None and "deny list" in problem  # a glob decides; say so
    assert policy.set_standing("git", "status", "auto", "fp1") is None
    assert policy.standing("git", "status") == "auto"
    assert policy.set_standing("fs", "read", "ask") is None
    assert policy.standing("fs", "read") == "ask"
    assert policy.set_standing("fs", "rm", "not allowed") is None
    data = tomllib.loads(path.read_text())["servers"]
    assert data["git"]["auto"] == ["status"]
    assert data["fs"]["auto"] == [] and data["fs"]["deny"] == ["rm"]


def test_a_write_failure_still_applies_for_the_session(tmp_path: Path) -> None:
    def fail(server: str, field: str, tool: str, add: bool) -> None:
        raise ConfigError("cannot write it: read-only file system", tmp_path / "c.toml")

    policy = Policy({"fs": ServerRules()}, ApprovalStore(), fail)
    problem = policy.always_allow("fs", "write", "fp")
    assert problem is not None and "applied for this session only" in problem
    assert policy.judge("fs", "write", "fp").verdict == "auto"
