"""A ``session/prompt``'s content blocks besides text, as the scripted model receives
them: an image block (or an embedded image) is an image part for a model that reads
images, and a JSON-RPC error saying why (nothing sent) for one that does not; a resource
link to a file and an embedded resource (the editor's selection) go as ``@`` files do, a
``<file>`` block after the words; beside an MCP prompt's command they go with its text, and
a built-in command refuses them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, image_block, resource_block, resource_link_block, text_block
from acp.helpers import embedded_blob_resource, embedded_text_resource

from tests.acp_kit import Editor, config, fake_server_toml, prompt, running
from tests.fakes.llm_server import FakeLLM, Reply

pytestmark = pytest.mark.slow

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJ"
       "RU5ErkJggg==")
"""A 1x1 PNG, base64."""


def sent(fake: FakeLLM, index: int) -> Any:
    """The user message's content of the model's request ``index``."""
    return fake.requests[index]["messages"][-1]["content"]


def file_block(shown: str, text: str) -> str:
    return f'<file path="{shown}" size="{len(text.encode())} B">\n{text}</file>'


def test_images_reach_a_model_that_reads_images(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """An image block, and an image embedded as a resource (a screenshot the editor holds),
    each an image part after the words, named in them."""
    fake_llm.push(Reply(text="two single pixels"))
    conf = config(tmp_path, fake_llm, extra="vision = true\n")
    shot = resource_block(embedded_blob_resource((tmp_path / "shot.png").as_uri(), PNG,
                                                 mime_type="image/png"))

    async def scenario() -> str:
        async with running(Editor(), conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return await prompt(conn, sid, [text_block("what are these?"),
                                            image_block(PNG, "image/png"), shot])

    assert asyncio.run(scenario()) == "end_turn"
    words, *images = sent(fake_llm, 0)
    assert words == {"type": "text", "text": 'what are these?\n\n<image path="image" '
                     'size="70 B"/>\n\n<image path="shot.png" size="70 B"/>'}
    assert [i["type"] for i in images] == ["image_url", "image_url"]
    assert [i["image_url"]["url"] for i in images] == [f"data:image/png;base64,{PNG}"] * 2


@pytest.mark.parametrize("form", ["image block", "link to a png"])
def test_an_image_for_a_model_that_reads_none_is_refused_saying_why(
        fake_llm: FakeLLM, tmp_path: Path, form: str) -> None:
    """A JSON-RPC error naming the model, the image and the setting; nothing reaches the
    model, and the session takes the next prompt without the image."""
    import base64

    from acp import RequestError

    picture = tmp_path / "pixel.png"
    picture.write_bytes(base64.b64decode(PNG))
    block = image_block(PNG, "image/png") if form == "image block" \
        else resource_link_block("pixel.png", picture.as_uri())
    fake_llm.push(Reply(text="words only"))
    log = tmp_path / "stderr.log"

    async def scenario() -> tuple[Any, str]:
        async with running(Editor(), config(tmp_path, fake_llm), cwd=tmp_path,
                           log=log) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as caught:
                await prompt(conn, sid, [text_block("what is this?"), block])
            assert fake_llm.requests == []
            return caught.value, await prompt(conn, sid, "then just words")

    error, then = asyncio.run(scenario())
    shown = "image" if form == "image block" else "pixel.png"
    assert error.code == -32602
    assert error.data == {"message": "openai/fake-model does not read images (as far as "
                          "litellm knows; set [model] vision = true if it does): "
                          f"{shown} was not sent"}
    assert then == "end_turn"
    history = json.dumps(fake_llm.requests[0]["messages"])
    assert "what is this?" not in history and "image_url" not in history
    assert "Traceback" not in log.read_text(encoding="utf-8")


def test_resource_links_and_embedded_selections_go_as_at_files_do(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A link to a file is read as ``@`` reads it (through the editor, which offers
    ``fs/read_text_file``: its unsaved buffer); an embedded resource is the editor's own
    text (a selection), named by its uri; a link to no file stays a link in the words."""
    (tmp_path / "src").mkdir()
    app = tmp_path / "src" / "app.py"
    app.write_text("print('disk')\n", encoding="utf-8")
    buffer, selection = "print('buffer')\n", "def selected():\n    pass\n"
    editor = Editor(buffers={str(app): buffer})
    fake_llm.push(*[Reply(text=f"reply {i}") for i in range(4)])
    turns: list[str | list[Any]] = [
        "explain @src/app.py",
        [text_block("explain"), resource_link_block("app.py", app.as_uri())],
        [text_block("explain"), resource_block(embedded_text_resource(app.as_uri(),
                                                                      selection))],
        [text_block("see"), resource_link_block("docs", "https://example.com/docs")]]

    async def scenario() -> list[str]:
        async with running(editor, config(tmp_path, fake_llm), cwd=tmp_path,
                           fs=True) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            return [await prompt(conn, sid, turn) for turn in turns]

    assert asyncio.run(scenario()) == ["end_turn"] * 4
    assert editor.read == [str(app), str(app)]
    assert sent(fake_llm, 0) == f"explain @src/app.py\n\n{file_block('src/app.py', buffer)}"
    assert sent(fake_llm, 1) == f"explain\n\n{file_block('src/app.py', buffer)}"
    assert sent(fake_llm, 2) == f"explain\n\n{file_block('src/app.py', selection)}"
    assert sent(fake_llm, 3) == "see [docs](https://example.com/docs)"


def test_a_commands_files_go_with_an_mcp_prompt_and_a_built_in_refuses_them(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """An MCP prompt's command with the editor's selection beside it: the prompt's text and
    the file go to the model together. A built-in command sent with an image is refused
    (JSON-RPC -32602, saying so) before it does anything: ``/code on`` leaves the mode as
    it was, and the session goes on."""
    from acp import RequestError

    selection = "def selected():\n    pass\n"
    fake_llm.push(Reply(text="Hello, Ada!"), Reply(text="tools still"))
    editor = Editor()
    conf = config(tmp_path, fake_llm, fake_server_toml())

    async def scenario() -> tuple[str, Any, str]:
        async with running(editor, conf, cwd=tmp_path) as (conn, _):
            sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            await editor.until(lambda: any(c.name == "fake:greet" for u in editor.of(
                "available_commands_update") for c in u.available_commands))
            greeted = await prompt(conn, sid, [
                text_block("/fake:greet name=Ada"),
                resource_block(embedded_text_resource((tmp_path / "a.py").as_uri(),
                                                      selection))])
            with pytest.raises(RequestError) as caught:
                await prompt(conn, sid, [text_block("/code on"), image_block(PNG, "image/png")])
            return greeted, caught.value, await prompt(conn, sid, "and now?")

    greeted, refused, then = asyncio.run(scenario())
    assert greeted == "end_turn" and then == "end_turn"
    assert sent(fake_llm, 0) == f"Say hello to Ada.\n\n{file_block('a.py', selection)}"
    assert refused.code == -32602
    assert refused.data == {"message": "/code takes no files or images (1 sent with it): "
                                       "nothing was done; send them with a prompt"}
    offered = [t["function"]["name"] for t in fake_llm.requests[1]["tools"]]
    assert "fake__echo" in offered  # the server's tools as they are: /code on did not run
    assert editor.of("config_option_update") == []  # code mode stayed off


def test_a_file_outside_the_sessions_folders_is_read_only_when_allowed(
        fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A link or an ``@`` path that resolves (``..`` and symlinks too) outside the session's
    folder is asked about as a tool call is; rejected, nothing is read or sent (the prompt
    is refused naming the file), allowed, it goes as any file. Inside, nobody is asked."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("the secret\n", encoding="utf-8")
    (project / "link.txt").symlink_to(secret)
    (project / "mine.txt").write_text("mine\n", encoding="utf-8")
    editor = Editor(answers=["reject_once", "reject_once", "allow_once"])
    fake_llm.push(*[Reply(text=f"reply {i}") for i in range(2)])
    sneaky = f"file://{project}/../outside/secret.txt"

    async def scenario() -> list[str]:
        async with running(editor, config(project, fake_llm), cwd=project) as (conn, _):
            sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
            answers = []
            for turn in ([text_block("read"), resource_link_block("secret", sneaky)],
                         "read @link.txt",
                         [text_block("read"), resource_link_block("secret", secret.as_uri())],
                         "read @mine.txt"):
                try:
                    answers.append(await prompt(conn, sid, turn))
                except RequestError as exc:
                    answers.append(json.dumps(exc.data))
            return answers

    first, second, third, fourth = asyncio.run(scenario())
    assert "outside the session's folders" in first and str(secret) in first
    assert "outside the session's folders" in second
    assert (third, fourth) == ("end_turn", "end_turn")
    assert [[loc.path for loc in call.locations or []] for call, _ in editor.asked] == \
        [[str(secret)]] * 3
    assert len(fake_llm.requests) == 2
    assert "the secret" in sent(fake_llm, 0) and "mine" in sent(fake_llm, 1)
