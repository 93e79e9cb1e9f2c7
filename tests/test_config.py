"""Configuration: defaults, TOML, imported JSON, ${VAR} expansion, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.config import ConfigError, load, paths
from tui_agent.config.interpolate import mask


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def error_of(*args: object, **kwargs: object) -> str:
    with pytest.raises(ConfigError) as info:
        load(*args, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


def test_no_config_file_gives_defaults() -> None:
    settings = load()
    assert settings.files == []
    assert settings.config.model.name is None
    assert settings.config.agent.max_depth == 10
    assert settings.config.agent.tool_timeout == 60
    assert settings.config.servers == {}


def test_full_toml_is_read(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", """
[model]
name = "openai/gpt-4o-mini"
temperature = 0.2
system_prompt = "Be brief."

[agent]
max_depth = 4

[code_mode]
enabled = true
binding_level = "tool"

[servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
auto = ["read_*"]
timeout = 30

[servers.remote]
url = "http://127.0.0.1:9000/sse"
""")
    config = load(cfg).config
    assert config.model.name == "openai/gpt-4o-mini"
    assert config.agent.max_depth == 4
    assert config.code_mode.binding_level == "tool"
    assert config.servers["files"].transport == "stdio"
    assert config.servers["files"].auto == ["read_*"]
    assert config.servers["files"].allow == ["*"]
    assert config.servers["remote"].transport == "sse"


def test_config_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(tmp_path / "elsewhere.toml", '[model]\nname = "ollama/llama3.1"\n')
    monkeypatch.setenv(paths.CONFIG_ENV, str(cfg))
    assert load().config.model.name == "ollama/llama3.1"


def test_xdg_default_location_is_used(isolated_env: Path) -> None:
    target = paths.default_config_file()
    assert target.is_relative_to(isolated_env)
    target.parent.mkdir(parents=True)
    write(target, '[model]\nname = "openai/x"\n')
    assert load().files == [target]


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path / "nope.toml")
    assert "nope.toml" in message and "does not exist" in message


def test_malformed_toml_names_file_and_line(tmp_path: Path) -> None:
    cfg = write(tmp_path / "bad.toml", '[model]\nname = "x"\n[agent\nmax_depth = 3\n')
    message = error_of(cfg)
    assert "bad.toml" in message
    assert "line 3" in message
    assert "not valid TOML" in message


def test_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[servers.fs]\ncomand = "npx"\n')
    message = error_of(cfg)
    assert "line 2" in message
    assert "unknown key 'comand'" in message
    assert "did you mean 'command'" in message


def test_unknown_section_lists_the_known_ones(tmp_path: Path) -> None:
    message = error_of(write(tmp_path / "c.toml", "[modle]\nname = 'x'\n"))
    assert "unknown key 'modle'" in message and "did you mean 'model'" in message


def test_wrong_type_says_what_was_expected(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[model]\nname = "x"\n\n[agent]\nmax_depth = "ten"\n')
    message = error_of(cfg)
    assert "line 5" in message
    assert "agent.max_depth" in message
    assert "integer" in message and "'ten'" in message


def test_server_without_command_or_url(tmp_path: Path) -> None:
    message = error_of(write(tmp_path / "c.toml", '[servers.empty]\nargs = ["x"]\n'))
    assert "servers.empty" in message and "'command'" in message and "line 1" in message


def test_variables_expand_where_servers_read_them(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", """
[servers.api]
command = "${TOOL_BIN}/run"
args = ["--root", "${ROOT:-/srv}"]
env = { TOKEN = "${API_TOKEN}" }

[servers.web]
url = "http://127.0.0.1:${PORT:-8000}/mcp"
headers = { Authorization = "Bearer ${API_TOKEN}" }
""")
    settings = load(cfg, env={"TOOL_BIN": "/opt/bin", "API_TOKEN": "s3cr3t-token-value"})
    api, web = settings.config.servers["api"], settings.config.servers["web"]
    assert api.command == "/opt/bin/run"
    assert api.args == ["--root", "/srv"]
    assert api.env == {"TOKEN": "s3cr3t-token-value"}
    assert web.url == "http://127.0.0.1:8000/mcp"
    assert web.headers == {"Authorization": "Bearer s3cr3t-token-value"}
    assert "s3cr3t-token-value" in settings.secrets
    assert "/opt/bin" not in settings.secrets  # commands are not secrets
    assert mask("token=s3cr3t-token-value", settings.secrets) == "token=***"


def test_unset_variable_leaves_only_its_server_unready(tmp_path: Path) -> None:
    """A server's unset ``${VAR}`` stops that server only (issue 46): it is kept as
    written, with why it cannot start naming the file, the line, the key, the variable
    and the server; the rest loads."""
    cfg = write(tmp_path / "c.toml", '[servers.api]\ncommand = "x"\nenv = { T = "${NOPE}" }\n'
                '[servers.ok]\ncommand = "y"\n')
    settings = load(cfg, env={})
    assert settings.config.servers["api"].env == {"T": "${NOPE}"}
    assert list(settings.unready) == ["api"]
    assert settings.unready["api"] == (
        f"not started: {cfg}: line 3: servers.api.env.T: ${{NOPE}} is not set in the "
        "environment (set NOPE, or remove it from server 'api', or write ${NOPE:-default} "
        "to give a default)")
    assert settings.config.servers["ok"].command == "y"


def test_unset_model_key_is_still_an_error_naming_the_variable(tmp_path: Path) -> None:
    """The model's key has no per-server fallback: loading stops, naming the file, the
    line, the key and the variable to set."""
    cfg = write(tmp_path / "c.toml", '[model]\nname = "openai/x"\napi_key = "${NOPE_KEY}"\n')
    message = error_of(cfg, env={})
    assert message == (f"invalid configuration in {cfg}: line 3: model.api_key: ${{NOPE_KEY}} "
                       "is not set in the environment (set NOPE_KEY, or write "
                       "${NOPE_KEY:-default} to give a default)")


def test_disabled_server_needs_no_variables(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[servers.api]\ncommand = "${NOPE}"\ndisabled = true\n')
    assert load(cfg, env={}).config.servers["api"].disabled


def test_api_key_env(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[model]\nname = "openai/x"\napi_key_env = "MY_KEY"\n')
    settings = load(cfg, env={"MY_KEY": "sk-abcdef123"})
    assert settings.config.model.api_key == "sk-abcdef123"
    assert "sk-abcdef123" in settings.secrets
    assert "MY_KEY is not set" in error_of(cfg, env={})


def test_mcp_servers_json_is_imported_as_is(tmp_path: Path) -> None:
    """The Claude Desktop / Cursor / Roo-Code shape, every key it defines."""
    data = {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"},
                 "alwaysAllow": ["get_current_time"], "timeout": 15},
        "remote": {"url": "http://127.0.0.1:7000/mcp", "disabled": True},
    }}
    settings = load(None, [write(tmp_path / "m.json", json.dumps(data, indent=2))], env={})
    time_server = settings.config.servers["time"]
    assert time_server.command == "uvx" and time_server.args == ["mcp-server-time"]
    assert time_server.env == {"TZ": "UTC"}
    assert time_server.auto == ["get_current_time"]
    assert time_server.timeout == 15
    assert settings.config.servers["remote"].disabled
    assert settings.config.servers["remote"].transport == "http"
    assert settings.origins["time"].file == tmp_path / "m.json"


def test_servers_list_json_is_imported(tmp_path: Path) -> None:
    data = {"servers": [
        {"name": "git", "command": "mcp-server-git", "args": ["--repository", "."],
         "enabled": True, "description": "the repo"},
        {"name": "events", "url": "http://127.0.0.1:7001/sse", "transport": "sse",
         "enabled": False},
    ]}
    servers = load(None, [write(tmp_path / "s.json", json.dumps(data))], env={}).config.servers
    assert servers["git"].description == "the repo" and not servers["git"].disabled
    assert servers["events"].transport == "sse" and servers["events"].disabled


def test_json_keys_of_other_clients_warn_but_load(tmp_path: Path) -> None:
    data = {"mcpServers": {"x": {"command": "x", "autoStart": True}}}
    settings = load(None, [write(tmp_path / "m.json", json.dumps(data, indent=2))], env={})
    assert any("autoStart" in w and "ignored" in w for w in settings.warnings)


def test_json_errors_name_file_line_and_key(tmp_path: Path) -> None:
    bad_syntax = write(tmp_path / "a.json", '{\n  "mcpServers": {\n    "x": {"command": }\n}')
    message = error_of(None, [bad_syntax])
    assert "a.json" in message and "line 3" in message and "not valid JSON" in message

    bad_type = write(tmp_path / "b.json", json.dumps(
        {"mcpServers": {"x": {"command": "x", "alwaysAllow": "all"}}}, indent=2))
    message = error_of(None, [bad_type], env={})
    assert "b.json" in message and "line 5" in message
    assert "mcpServers.x.alwaysAllow" in message and "list" in message

    wrong_shape = write(tmp_path / "c.json", '{"tools": []}')
    assert "mcpServers" in error_of(None, [wrong_shape])


def test_later_json_replaces_a_server_and_says_so(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", '[servers.x]\ncommand = "old"\n')
    js = write(tmp_path / "m.json", json.dumps({"mcpServers": {"x": {"command": "new"}}}))
    settings = load(cfg, [js], env={})
    assert settings.config.servers["x"].command == "new"
    assert any("replaces" in w for w in settings.warnings)


def test_shipped_example_config_is_valid() -> None:
    """configs/example.toml loads as it is (its variables given)."""
    example = Path(__file__).resolve().parents[1] / "configs" / "example.toml"
    settings = load(example, env={"HOME": "/home/ada"})
    assert settings.config.servers["files"].args[-1] == "/home/ada/projects"
    assert settings.config.servers["github"].disabled


def test_docker_servers_are_read_and_their_variables_expanded(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", """
[servers.box]
image = "mcp/fetch:${TAG:-1.0}"
command = ["${BIN}/server", "--stdio"]
volumes = ["${DATA}:/data:ro", "cache:/cache"]
request_timeout = 12

[servers.theirs]
container = "devbox"
command = "my-server"
args = ["--quiet"]

[servers.gw]
transport = "gateway"
args = ["--servers", "fetch"]
""")
    settings = load(cfg, env={"BIN": "/opt", "DATA": "/srv/data"})
    box, theirs, gw = (settings.config.servers[n] for n in ("box", "theirs", "gw"))
    assert (box.transport, box.image, box.timeout) == ("docker", "mcp/fetch:1.0", 12)
    assert box.exec_command == ["/opt/server", "--stdio"]
    assert box.volumes == ["/srv/data:/data:ro", "cache:/cache"]
    assert (box.network, box.read_only, box.memory, box.lazy_start) == ("none", True, "512m",
                                                                       False)
    assert theirs.exec_command == ["my-server", "--quiet"]
    assert (gw.transport, gw.lazy_start, gw.idle_after) == ("docker-gateway", True, 300.0)


@pytest.mark.parametrize(("body", "line", "says"), [
    ('image = "a"\ncontainer = "b"', 1, "either 'image'"),
    ('command = "x"\nnetwork = "host"', 1, "'network' is only for transport 'docker'"),
    ('container = "b"', 1, "with 'container' needs 'command'"),
    ('image = "a"\nvolumes = ["relative/dir:/x"]', 1, "must be an absolute host path"),
    ('image = "a"\nvolumes = ["/x:y"]', 1, "the target 'y' must be an absolute path"),
    ('image = "a"\nvolumes = ["/x:/y:rx"]', 1, "unknown option 'rx'"),
    ('image = "a"\nmemory = "lots"', 1, "memory 'lots' is not a size"),
    ('transport = "docker-gateway"\ncommand = "x"', 1, "give it 'args'"),
    ('command = "x"\ntimeout = 3\nrequest_timeout = 4', 1, "not both"),
    ('image = "a"\ncpus = 0', 3, "greater than 0"),
])
def test_bad_docker_settings_are_named_with_their_line(tmp_path: Path, body: str, line: int,
                                                       says: str) -> None:
    message = error_of(write(tmp_path / "c.toml", f"\n[servers.box]\n{body}\n"))
    assert "servers.box" in message and says in message, message
    assert f"line {line + 1}" in message, message
