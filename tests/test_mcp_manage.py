"""``tui-agent mcp list``, ``get`` and ``remove``, the project scope and its trust, and
``--docker``: real processes on real config files (TOML with comments, a project's
``.mcp.json``), and a server in a container of a real engine."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest

from tests import dockerkit
from tests.conftest import ROOT, need
from tests.mcp_kit import COMMENTED, fake_words, machine
from tests.zygote import command
from tui_agent.tools.transports.docker_engine import LABEL_SERVER

pytestmark = pytest.mark.slow


def test_list_names_every_server_with_its_transport_scope_and_file(tmp_path: Path) -> None:
    box = machine(tmp_path)
    (box.project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "shared": {"url": "https://example.test/mcp"},
        "mine": {"command": "other"}}}, indent=2))
    done = box.mcp("list")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0][:4] == ["mine", "stdio", "user", f"{box.user_config}:6"]
    assert "disabled;" in done.stdout.splitlines()[0]
    assert "replaced by a later file's" in done.stdout.splitlines()[0]
    project = box.project / ".mcp.json"
    assert rows[1][:4] == ["shared", "http", "project", f"{project}:3"]
    assert "the project is not trusted yet" in done.stdout.splitlines()[1]
    assert rows[2][:4] == ["mine", "stdio", "project", f"{project}:6"]


def test_get_shows_the_settings_as_written_with_secrets_hidden(tmp_path: Path) -> None:
    box = machine(tmp_path, config=COMMENTED + """
[servers.api]
url = "https://user:pa55word@api.example.test/mcp?key=qwerty123"
headers = { Authorization = "Bearer literal-token-1", X-Team = "${TEAM_TOKEN}" }
env = { DEBUG = "1" }
oauth = { client_id = "me", client_secret = "oauth-secret-9" }
""")
    done = box.mcp("get", "api")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"file: {box.user_config}:13" in out and "scope: user" in out
    for secret in ("pa55word", "qwerty123", "literal-token-1", "oauth-secret-9"):
        assert secret not in out
    assert "X-Team = \"${TEAM_TOKEN}\"" in out, "a reference reveals nothing: shown"
    assert 'DEBUG = "********"' in out
    assert "url: https://user:********@api.example.test/mcp?key=********" in out
    missing = box.mcp("get", "nope")
    assert missing.returncode == 2
    assert "no server named 'nope' (the servers: api, mine)" in missing.stderr


def test_remove_takes_the_table_out_and_keeps_every_other_line(tmp_path: Path) -> None:
    box = machine(tmp_path)
    done = box.mcp("remove", "mine")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"removed mine from {box.user_config} (user)\n"
    assert box.user_config.read_text() == (
        "# my tui-agent config: every comment here must survive\n"
        "[model]\n"
        'name = "openai/fake-model"   # the model I use\n'
        "\n"
        "[agent]\n"
        "max_depth = 7   # deeper than the default\n")
    again = box.mcp("remove", "mine")
    assert again.returncode == 2 and "no server named 'mine'" in again.stderr


def test_remove_from_a_project_json_keeps_the_others(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    file = box.project / ".mcp.json"
    file.write_text(json.dumps({"mcpServers": {"a": {"command": "x"},
                                               "b": {"command": "y"}}}, indent=4))
    done = box.mcp("remove", "a")
    assert done.returncode == 0, done.stderr
    assert file.read_text() == json.dumps({"mcpServers": {"b": {"command": "y"}}},
                                          indent=4) + "\n"


def test_project_scope_writes_the_projects_file_and_keeps_it_trusted(
        tmp_path: Path) -> None:
    """A server the person adds to a project is their own agreement: the project runs it
    without asking again (``servers`` starts it)."""
    box = machine(tmp_path, config=None)
    done = box.mcp("add", "local", "--scope", "project", *fake_words("--name", "proj"))
    assert done.returncode == 0, done.stderr
    file = box.project / ".tui-agent" / "config.toml"
    assert f"added local in {file}:1 (project)" in done.stdout
    assert "local  connected  stdio" in done.stdout
    servers = box.mcp("list")
    assert "the project is not trusted" not in servers.stdout
    listed = servers.stdout.split()
    assert listed[:3] == ["local", "stdio", "project"]


def test_remove_from_a_trusted_project_keeps_it_trusted(tmp_path: Path) -> None:
    """Removing a server is the person's own edit too, as adding one is: the project's
    other servers go on running without asking again."""
    box = machine(tmp_path, config=None)
    for name in ("one", "two"):
        done = box.mcp("add", name, "--scope", "project", "--no-start", "--",
                       sys.executable, "-V")
        assert done.returncode == 0, done.stderr
    removed = box.mcp("remove", "one")
    assert removed.returncode == 0, removed.stderr
    assert f"removed one from {box.project / '.tui-agent' / 'config.toml'} (project)" \
        in removed.stdout
    listed = box.mcp("list")
    assert listed.stdout.split()[:3] == ["two", "stdio", "project"]
    assert "the project is not trusted yet" not in listed.stdout


def test_a_project_waiting_for_agreement_keeps_waiting(tmp_path: Path) -> None:
    box = machine(tmp_path, config=None)
    (box.project / ".mcp.json").write_text('{"mcpServers": {"theirs": {"command": "x"}}}')
    done = box.mcp("add", "mine", "--scope", "project", "--no-start", "--",
                   sys.executable, "-V")
    assert done.returncode == 0, done.stderr
    assert f"note: the project in {box.project} is not trusted yet" in done.stdout
    assert "the project is not trusted yet" in box.mcp("list").stdout


def test_a_server_in_a_container_is_added_and_started(tmp_path: Path) -> None:
    client = dockerkit.engine()
    need(client is not None, "a Docker engine")
    image = dockerkit.ensure_image(client)
    box = machine(tmp_path, config=None)
    # A name of its own (another suite on the same engine runs this test too), as short as
    # "boxed": the line is cut at 80 columns, and the server's name and version must show.
    name = f"b{uuid.uuid4().hex[:4]}"
    volumes = [w for m in dockerkit.mounts() for w in ("--volume", m)]
    # A container's start can take past the default 10 s with a second suite on the CPUs.
    done = box.mcp("add", name, "--docker", image, *volumes, "--startup-timeout", "60",
                   "--env", "PYTHONDONTWRITEBYTECODE=1",
                   *fake_words("--name", "in-a-box"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{name}  connected  docker" in done.stdout and "(in-a-box 1.0" in done.stdout
    server = tomllib.loads(box.user_config.read_text())["servers"][name]
    assert server["image"] == image
    assert server["command"] == [sys.executable, "-m", "tests.fakes.mcp_server", "--name",
                                 "in-a-box"]
    assert f"{ROOT}:{ROOT}:ro" in server["volumes"]
    assert server["startup_timeout"] == 60
    assert client is not None
    left = [c for c in client.containers.list(all=True)
            if c.labels.get(LABEL_SERVER) == name]
    assert not left, "the container of the one start is removed"


def test_config_names_the_file_written_before_or_after_the_command(tmp_path: Path) -> None:
    box = machine(tmp_path)
    other = tmp_path / "other.toml"
    after = box.mcp("add", "--config", str(other), "one", "--no-start", "--",
                    sys.executable, "-V")
    assert after.returncode == 0, after.stderr
    assert f"added one in {other}:1 (--config)" in after.stdout
    before = subprocess.run([*command(), "--config", str(other), "mcp", "add", "two",
                             "--no-start", "--", sys.executable, "-V"], cwd=box.project,
                            env=box.env, capture_output=True, text=True, timeout=120)
    assert before.returncode == 0, before.stderr
    assert set(tomllib.loads(other.read_text())["servers"]) == {"one", "two"}
    assert box.user_config.read_text() == COMMENTED
