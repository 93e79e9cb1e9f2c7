"""Resources for the model: a server with resources gets ``list_resources`` and
``read_resource`` tools of tui-agent's making, gated like its own (a read-only hint, no
auto-approval by themselves). The model lists, reads a listed resource, fills a template,
and a binary resource is named, never spelled out in base64. Against server-everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import START, everything
from tests.test_client_side import hub_of
from tests.test_elicitation import everything_config, run
from tui_agent.config.models import ServerConfig
from tui_agent.tools.client import ClientSide

pytestmark = pytest.mark.slow


@pytest.mark.anyio
async def test_a_server_with_resources_gets_the_two_tools(tmp_path: Path) -> None:
    server = ServerConfig(command=everything(), args=["stdio"], env=tagged_env(),
                          startup_timeout=START)
    async with hub_of({"every": server}, tmp_path,
                      client_side=lambda n, c: ClientSide()) as hub:
        by_tool = {s.tool: s for s in hub.specs()}
        assert by_tool["list_resources"].hints == ("read-only",)
        assert by_tool["read_resource"].parameters["required"] == ["uri"]
        assert by_tool["read_resource"].name == "every__read_resource"


def test_the_model_lists_and_reads_resources(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(tool_calls=[FakeToolCall("asking__list_resources", {}, id="l")]),
        Reply(tool_calls=[
            FakeToolCall("asking__read_resource", {"uri": "demo://resource/static/document/features.md"},
                         id="r"),
            FakeToolCall("asking__read_resource", {"uri": "demo://resource/dynamic/text/7"},
                         id="t"),
            FakeToolCall("asking__read_resource", {"uri": "demo://resource/dynamic/blob/7"},
                         id="b"),
            FakeToolCall("asking__read_resource", {"uri": "demo://nowhere"}, id="n")]),
        Reply(text="read them"))
    done = run(everything_config(tmp_path, fake_llm), "what is there?")
    assert done.returncode == 0, done.stderr
    told = {e["id"]: e["text"] for e in map(json.loads, done.stdout.splitlines())
            if e["type"] == "tool_result"}
    listing, doc, text, blob, missing = (told[i] for i in "lrtbn")
    assert "resources (" in listing and "- demo://resource/static/document/features.md" in listing
    assert "resource templates (" in listing and "demo://resource/dynamic/text/{resourceId}" \
        in listing
    assert doc.startswith("#") and len(doc) > 200
    assert text.startswith("Resource 7: This is a plaintext resource")
    assert blob.startswith("[") and "bytes]" in blob and len(blob) < 200
    assert missing == ("error: server 'asking' could not read resource: Resource "
                       "demo://nowhere not found (MCP error -32602)")
