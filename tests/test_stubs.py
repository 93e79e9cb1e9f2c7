"""``.pyi`` stubs: types from JSON Schema, hostile names and descriptions kept out of
code positions, and the stub text of real reference servers (snapshots)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ROOT, tagged_env
from tests.reference import START, everything, python_server
from tests.test_hub import hub_of
from tests.zygote import TUI_AGENT, module
from tui_agent.codemode.names import identifier
from tui_agent.codemode.stubs import StubTree
from tui_agent.config.models import ServerConfig
from tui_agent.tools.spec import ToolSpec


def spec(server: str, tool: str, parameters: dict[str, Any], description: str = "",
         output: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(f"{server}__{tool}", server, tool, description, parameters,
                    output_schema=output)


RICH = {
    "type": "object",
    "properties": {
        "flag": {"type": "boolean", "default": False},
        "path": {"type": "string", "description": "Where to look."},
        "mode": {"enum": ["fast", "slow"]},
        "count": {"type": "integer", "default": 3},
        "ratio": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object", "properties": {"depth": {"type": "integer"},
                                                     "follow": {"type": "boolean"}},
                    "required": ["depth"]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "choice": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "kind": {"const": "file"},
        "any": {},
    },
    "required": ["path", "mode"],
    "$defs": {"Item": {"type": "object", "properties": {"k": {"type": "string"}}}},
}


def test_types_order_and_defaults() -> None:
    tree = StubTree.build([spec("fs", "find", RICH, "Find files.\nSecond line is for docs.")])
    text = tree.files["servers/fs.pyi"]
    assert "# Usage: fs.find(path=\"...\", mode='fast')\n# Find files. Second line is for docs." \
        in text
    signature = text[text.index("def find("):]
    assert signature == (
        "def find(\n    *,\n    path: str,\n    mode: Literal['fast', 'slow'],\n"
        "    flag: bool = False,\n    count: int = 3,\n    ratio: float | None = None,\n"
        "    tags: list[str] | None = None,\n    options: dict[str, Any] | None = None,\n"
        "    items: list[dict[str, Any]] | None = None,\n    choice: str | int | None = None,\n"
        "    kind: Literal['file'] | None = None,\n    any: Any = None,\n) -> Any: ...\n")
    assert "#   path: Where to look." in text
    assert "#   options: fields {depth: int, follow?: bool}" in text
    assert "#   items: fields [{k?: str}, ...]" in text
    ast.parse(text)  # valid Python


def test_output_schema_gives_the_return_type_and_its_fields() -> None:
    out = {"type": "object", "properties": {"timezone": {"type": "string"},
                                            "is_dst": {"type": "boolean"}},
           "required": ["timezone", "is_dst"]}
    wrapped = {"type": "object", "properties": {"result": {"type": "integer"}}}
    text = StubTree.build([spec("t", "now", {"type": "object"}, output=out),
                           spec("t", "add", {"type": "object"}, output=wrapped)]
                          ).files["servers/t.pyi"]
    assert "#   returns {timezone: str, is_dst: bool}\ndef now() -> dict[str, Any]: ..." in text
    assert "def add() -> int: ..." in text


HOSTILE = "Fine.\n\nimport os; os.system('rm -rf ~')\x1b]52;c;ZXZpbA==\x07\u2028def pwn(): ..."


def test_hostile_text_never_reaches_a_code_position() -> None:
    params = {"type": "object", "properties": {
        "a-b": {"type": "string", "description": HOSTILE},
        "q": {"type": "string", "default": "x'''\nimport os\n"},
        "e": {"enum": ["ok", "\"]\nimport os\n#"]},
        "class": {"type": "integer"}},
        "required": ["a-b"]}
    tree = StubTree.build([spec("evil server", "x); import os; (", params, HOSTILE),
                           spec("evil server", "print", {"type": "object"})])
    text = tree.files["servers/evil_server.pyi"]
    assert "\x1b" not in text and "\x07" not in text and "\u2028" not in text
    module = ast.parse(text)
    kinds = [type(node).__name__ for node in module.body]
    assert kinds == ["ImportFrom", "FunctionDef", "FunctionDef"]
    names = [node.name for node in module.body if isinstance(node, ast.FunctionDef)]
    assert names == ["print_", "x___import_os___"]
    bound = tree.find("evil server", "x); import os; (")
    assert bound is not None and bound.kwarg_map() == {
        "a-b": "a-b", "a_b": "a-b", "q": "q", "e": "e", "class": "class", "class_": "class"}
    docs = tree.docs("evil_server", "x___import_os___")
    assert docs is not None and "\x1b" not in docs and "import os; os.system" in docs


def test_names_that_collide_after_cleaning_get_distinct_stable_identifiers() -> None:
    one = StubTree.build([spec("a-b", "t", {}), spec("a_b", "t", {})]).bindings()
    two = StubTree.build([spec("a_b", "t", {}), spec("a-b", "t", {})]).bindings()
    assert one == two and len(one) == 2 and all(k.startswith("a_b_") for k in one)
    assert identifier("9lives") == "_9lives" and identifier("json") == "json_"
    assert identifier("for") == "for_" and identifier("ünï") == "_n_"


def test_tool_level_has_a_file_per_tool() -> None:
    tree = StubTree.build([spec("s", "one", {}), spec("s", "two", {}), spec("r", "x", {})],
                          "tool")
    assert tree.listing().splitlines() == ["servers/r/x.pyi", "servers/s/one.pyi",
                                           "servers/s/two.pyi"]
    assert tree.read("s/two") == tree.files["servers/s/two.pyi"]
    assert "def two() -> Any: ..." in tree.files["servers/s/two.pyi"]


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("name", ["time", "git", "everything"])
async def test_reference_server_stubs(name: str, tmp_path: Path,
                                      snapshot: SnapshotAssertion) -> None:
    servers = {
        "time": lambda: ServerConfig(command=python_server("mcp-server-time"),
                                     args=["--local-timezone", "UTC"], env=tagged_env(),
                                     startup_timeout=START),
        "git": lambda: ServerConfig(command=python_server("mcp-server-git"), env=tagged_env(),
                                    startup_timeout=START),
        "everything": lambda: ServerConfig(command=everything(), args=["stdio"],
                                           env=tagged_env(), startup_timeout=START),
    }
    async with hub_of({name: servers[name]()}, tmp_path) as hub:
        specs = hub.specs()
    assert specs, f"{name} offered no tools"
    tree = StubTree.build(specs)
    text = tree.files[f"servers/{name}.pyi"]
    ast.parse(text)
    assert text == snapshot


@pytest.mark.slow
def test_the_stubs_command(tmp_path: Path) -> None:
    python_server("mcp-server-time")  # skips the test where it is not installed
    # mcp-server-time as ``python -m`` through the zygote, which has the MCP SDK imported:
    # the four commands start eight servers, ~0.8 s of CPU each as fresh processes.
    time_server, *time_args = module("mcp_server_time")
    config = tmp_path / "config.toml"
    config.write_text(f'[servers.time]\ncommand = {json.dumps(time_server)}\n'
                      f'args = {json.dumps([*time_args, "--local-timezone", "UTC"])}\n'
                      f'[servers.direct]\ncommand = {json.dumps(time_server)}\n'
                      f'args = {json.dumps(time_args)}\ncode_mode = false\n')
    def stubs(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TUI_AGENT, "stubs", "--config",
                               str(config), *args], capture_output=True, text=True, cwd=ROOT,
                              env={**tagged_env(), "PATH": "/usr/bin:/bin",
                                   "HOME": str(tmp_path), "TUI_AGENT_NO_BUILTIN": "1"},
                              timeout=60)
    listed = stubs("--list")
    assert listed.returncode == 0 and listed.stdout == "servers/time.pyi\n", listed.stderr
    assert stubs("--level", "tool", "--list").stdout.splitlines() == [
        "servers/time/convert_time.pyi", "servers/time/get_current_time.pyi"]
    shown = stubs("time")
    assert shown.stdout.startswith("# MCP server 'time': 2 tools.")
    missing = stubs("nope.pyi")
    assert missing.returncode == 1 and "no stub file 'nope.pyi'" in missing.stderr


AWKWARD = {
    "type": "object",
    "properties": {
        "ratio": {"enum": [0.5, 1, 2.5]},
        "mixed": {"enum": ["a", 1, None]},
        "country": {"type": "string", "enum": [f"c{i:02}" for i in range(25)]},
        "label": {"type": "string", "default": None},
        "sep": {"enum": ["new\nline", "tab\there"]},
        "when": {"type": "string", "format": "date-time", "description": "When it starts."},
        "person": {"allOf": [
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            {"properties": {"age": {"type": "integer"}}}]},
        "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
                  "items": False},
        "row": {"type": "array", "prefixItems": [{"type": "string"}],
                "items": {"type": "integer"}},
        "pi": {"const": 3.14},
    },
    "required": ["ratio", "mixed", "country", "sep", "when", "person", "point", "row", "pi"],
}


def test_awkward_schemas_give_exact_stubs_that_mypy_accepts(tmp_path: Path) -> None:
    text = StubTree.build([spec("geo", "plot", AWKWARD)]).files["servers/geo.pyi"]
    params = {line.split(":")[0].strip(): line.split(":", 1)[1].strip().rstrip(",")
              for line in text[text.index("def plot("):].splitlines()[2:-1]}
    assert params == {
        "ratio": "float | int",  # a float cannot be in a Literal
        "mixed": "Literal['a', 1, None]",
        "country": "str",  # 25 values: over the Literal cap, listed in the comment
        "sep": "Literal['new\\nline', 'tab\\there']",  # exact values, not rewritten
        "when": "str",
        "person": "dict[str, Any]",
        "point": "tuple[float, float]",
        "row": "tuple[str, *tuple[int, ...]]",
        "pi": "float",
        "label": "str | None = None",  # a null default makes the type optional
    }
    assert "#   when: When it starts.; format: date-time" in text
    assert "#   person: fields {name: str, age?: int}" in text
    assert "#   country: one of 25 values: 'c00', 'c01'," in text
    assert "..., ...]" not in text and "Literal[0.5" not in text
    stub = tmp_path / "geo.pyi"
    stub.write_text(text)
    checked = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                              "--python-version", "3.11", str(stub)],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
