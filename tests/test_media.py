"""Images from tools reach the model as image parts when it takes them (``[model] vision``,
else litellm's word), and as a one-line name otherwise; base64 never reaches it as text,
not even through a structured copy of the blocks. Against the reference server-filesystem's
``read_media_file`` on a real PNG, through ``tui-agent run`` and the scripted model."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.reference import filesystem
from tests.test_elicitation import run
from tui_agent.tools.results import render


def png(width: int, height: int) -> bytes:
    """A real PNG (solid red), made here so no file is needed."""
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_a_structured_copy_of_an_image_is_named_not_spelled_out() -> None:
    from mcp.types import CallToolResult, ImageContent

    data = base64.b64encode(png(32, 32)).decode()
    big = base64.b64encode(png(64, 64) * 4).decode()
    block = ImageContent(type="image", data=data, mime_type="image/png")
    out = render(CallToolResult(content=[block], structured_content={"content": [
        {"type": "image", "data": data, "mimeType": "image/png"}], "raw": big}))
    assert data[:40] not in out.text and big[:40] not in out.text
    assert "[image: image/png," in out.text and "[binary data," in out.text
    assert [(m.kind, m.mime, m.data) for m in out.media] == [("image", "image/png", data)]


def test_sounds_go_as_audio_parts_to_a_model_that_hears() -> None:
    from tui_agent.core.calls import Call
    from tui_agent.core.llm import ToolCallRequest
    from tui_agent.core.messages import media_message
    from tui_agent.tools.spec import Media, ToolOutcome

    media = (Media("image", "image/png", "iVBOR"), Media("audio", "audio/wav", "UklGR"),
             Media("audio", "audio/ogg", "T2dnU"))
    calls = [Call(ToolCallRequest("c", "rec__capture", "{}"),
                  outcome=ToolOutcome("[image ...] [audio ...]", media=media))]
    heard = media_message(calls, frozenset({"image", "audio"}))
    assert heard is not None and heard["content"][1:] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
        {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}]  # no ogg
    seen = media_message(calls, frozenset({"image"}))
    assert seen is not None and len(seen["content"]) == 2
    assert media_message(calls, frozenset()) is None


@pytest.mark.slow
@pytest.mark.parametrize("vision", [True, False])
def test_read_media_file_reaches_the_model_as_an_image_or_a_name(
        tmp_path: Path, fake_llm: FakeLLM, vision: bool) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    picture = png(96, 96)
    (project / "red.png").write_bytes(picture)
    encoded = base64.b64encode(picture).decode()
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fs__read_media_file",
                                                 {"path": str(project / "red.png")}, id="m")]),
                  Reply(text="a red square"))
    conf = tmp_path / "c.toml"
    conf.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                    f'api_key = "sk-test"\nvision = {str(vision).lower()}\n\n'
                    f'[servers.fs]\ncommand = {json.dumps(filesystem())}\nargs = '
                    f'[{json.dumps(str(project))}]\nroots = [{json.dumps(str(project))}]\n'
                    'auto = ["*"]\nstartup_timeout = 30\n',
                    encoding="utf-8")
    done = run(conf, "what is in red.png?")
    assert done.returncode == 0, done.stderr
    messages = fake_llm.requests[1]["messages"]
    told = next(m for m in messages if m["role"] == "tool")
    assert told["content"].startswith("[image: image/png,")
    sent = json.dumps(messages)
    if vision:
        shown = messages[-1]
        assert shown["role"] == "user"
        assert shown["content"][0]["text"] == \
            "The images and sounds the tool calls above returned: fs__read_media_file (1)."
        assert shown["content"][1] == {"type": "image_url", "image_url": {
            "url": f"data:image/png;base64,{encoded}"}}
        assert sent.count(encoded[:60]) == 1  # once, as the image part
    else:
        assert encoded[:60] not in sent  # never as text
        assert messages[-1] is told or messages[-1]["role"] == "tool"
