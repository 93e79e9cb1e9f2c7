"""Secrets and saved conversations: a key the model streams in pieces never lands whole in
the session file, nor comes back whole from it (load, export, ``run -c``); a secret a tool
echoes reaches the model provider as ``***``, the same form live and resumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, tagged_env
from tests.fakes.llm_server import FakeLLM, FakeToolCall, Reply
from tests.zygote import TUI_AGENT, module
from tui_agent.config import paths
from tui_agent.core.export import to_markdown
from tui_agent.core.session import SessionWriter, load

KEY = "sk-streamed-key-0123456789"


def conf_with_key(tmp_path: Path, fake_llm: FakeLLM, extra: str = "") -> Path:
    """A config whose model key is ``KEY`` (written as it is: a secret all the same)."""
    path = tmp_path / "config.toml"
    path.write_text(f'[model]\nname = "openai/fake-model"\napi_base = "{fake_llm.base_url}"\n'
                    f'api_key = "{KEY}"\nmax_retries = 0\n{extra}', encoding="utf-8")
    return path


def tui_agent(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TUI_AGENT, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL,
                          env={**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)})


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen[bytes], timeout: float,
             what: Callable[[], str]) -> None:
    """Poll ``condition`` while ``proc`` runs; after ``timeout`` the test fails with
    ``what()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what()
        assert proc.poll() is None, f"run ended before it was killed ({what()})"
        time.sleep(0.05)


def streamed(jsonl: bytes) -> str:
    """The ``delta`` texts of the whole lines of ``jsonl`` (the run's events or the session
    file's ``partial`` records), joined: a word streamed in two pieces may land in two
    records (a flush every 0.25 s falls where it falls), so the raw bytes need not hold it."""
    lines = jsonl.split(b"\n")[:-1]  # the last one may be still being written
    return "".join(json.loads(line).get("delta", "") for line in lines if line.strip())


def sent_text(fake_llm: FakeLLM, index: int) -> str:
    return json.dumps(fake_llm.requests[index]["messages"], ensure_ascii=False)


def test_a_key_streamed_in_pieces_is_masked_across_partial_records(tmp_path: Path) -> None:
    """The writer's side, record by record: every flush of ``partial`` records holds back
    what could begin the key, so no two records hold its halves; the loader and the export
    show it masked."""
    writer = SessionWriter.create(tmp_path / "s.jsonl", {}, [KEY])
    writer.message({"role": "user", "content": "what is the key?"})
    for piece in ("It is sk", "-streamed", "-key-01", "23456789", " and sk-", "no more"):
        writer.partial(piece)
        writer.flush_partial()  # one record per piece, as a slow stream writes them
    writer.close()
    raw = writer.path.read_text(encoding="utf-8")
    deltas = streamed(raw.encode("utf-8"))
    assert deltas == "It is *** and sk-no more"
    assert "sk-streamed" not in raw and "0123456789" not in raw
    conv = load(writer.path)
    assert conv.messages[-1] == {"role": "assistant", "content": "It is *** and sk-no more"}
    assert KEY not in to_markdown(conv)


def test_a_file_that_holds_a_split_key_is_masked_on_load_and_export(tmp_path: Path) -> None:
    """A file an older tui-agent wrote, the key split across two partial records: joined on
    load, it is masked there and in the export."""
    path = tmp_path / "20260101-000000-abcdef.jsonl"
    lines = [{"kind": "meta", "version": 1, "id": path.stem},
             {"kind": "message", "seq": 0, "message": {"role": "user", "content": "key?"}},
             {"kind": "partial", "seq": 1, "delta": f"It is {KEY[:9]}"},
             {"kind": "partial", "seq": 1, "delta": f"{KEY[9:]}."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    conv = load(path, [KEY])
    assert conv.messages[-1]["content"] == "It is ***."
    assert KEY not in to_markdown(conv) and KEY not in to_markdown(load(path), [KEY])


@pytest.mark.slow
def test_a_crash_mid_stream_never_leaves_the_key_whole(tmp_path: Path,
                                                       fake_llm: FakeLLM) -> None:
    """The model streams the configured key in small, slow pieces (each occurrence spans
    more than one flush of partial records); ``run`` is killed mid-reply. Neither the
    session file, nor ``export``, nor what ``run -c`` sends the model holds the key."""
    # ~1.5 s of stream to AFTER, then 80 s more: far longer than run needs to get AFTER
    # into the file, however busy the machine (it is killed there, so the rest never runs).
    text = "Here: " + f"{KEY} and " * 3 + "AFTER " + "word " * 1000
    fake_llm.push(Reply(text=text, chunk_chars=3, delay=0.05))
    conf = conf_with_key(tmp_path, fake_llm)
    env = {**os.environ, **tagged_env(), "PYTHONPATH": str(ROOT)}
    events = tmp_path / "events.jsonl"  # what the run got of the stream, to say where it stuck
    with events.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "run", "--config",
                                 str(conf), "--output", "jsonl", "what is my key?"],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    found: list[Path] = []

    def after_in_file() -> bool:
        found[:] = paths.sessions_dir().glob("*.jsonl")
        return bool(found) and "AFTER" in streamed(found[0].read_bytes())

    def stuck(what: str) -> str:
        """Where the stream got to: the fake's chunks sent, the run's events, the file."""
        got = events.read_bytes()
        held = found[0].read_bytes() if found else b"(no session file)"
        count = got.count(b"\n")
        return (f"{what}: the fake sent {fake_llm.chunks_sent} chunks; the run printed "
                f"{count} events (AFTER in their text: {'AFTER' in streamed(got)}), "
                f"the last {got[-300:]!r}; the session file ends {held[-300:]!r}")
    try:
        # Two waits, two guards against a hang: the real command's start-up (its imports
        # take 5 s on a quiet machine and 30 s or more at load 10), then the stream.
        wait_for(lambda: bool(fake_llm.requests), proc, 180,
                 lambda: stuck("run never asked the model"))
        wait_for(after_in_file, proc, 60,
                 lambda: stuck("the reply never reached the session file"))
    finally:
        proc.kill()  # mid-reply when the waits held; otherwise no run is left behind
        proc.wait(30)
    session = found[0]
    raw = session.read_text(encoding="utf-8")
    assert KEY not in raw
    deltas = streamed(raw.encode("utf-8"))
    assert KEY not in deltas and deltas.startswith("Here: *** and *** and *** and AFTER")
    exported = tui_agent("export", session.stem)
    assert exported.returncode == 0, exported.stderr
    assert KEY not in exported.stdout and "Here: *** and" in exported.stdout
    fake_llm.push(Reply(text="ok"))
    again = tui_agent("run", "--config", str(conf), "-c", "and now?")
    assert again.returncode == 0, again.stderr
    assert KEY not in sent_text(fake_llm, 1) and "Here: *** and" in sent_text(fake_llm, 1)
@pytest.mark.slow
def test_a_secret_a_tool_echoes_reaches_the_model_masked_live_and_resumed(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A server's tool gives back the configured key (here the fake server's ``echo``, the
    key in its arguments): the provider gets ``***`` in the tool result and in the call,
    and ``run -c`` then sends the very same messages."""
    command, *argv = module("tests.fakes.mcp_server")
    server = (f'\n[servers.fake]\ncommand = {json.dumps(command)}\n'
              f'args = {json.dumps(argv)}\n'
              f'cwd = "{ROOT}"\nauto = ["echo"]\n'
              f'env = {{ TUI_AGENT_TEST_TAG = "{os.environ["TUI_AGENT_TEST_TAG"]}" }}\n')
    conf = conf_with_key(tmp_path, fake_llm, server)
    fake_llm.push(Reply(tool_calls=[FakeToolCall("fake__echo", {"text": f"key={KEY}"},
                                                 id="e1")]),
                  Reply(text="echoed"), Reply(text="again"))
    live = tui_agent("run", "--config", str(conf), "--output", "jsonl", "echo the key")
    assert live.returncode == 0, live.stderr
    tool_result = fake_llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "key=***" in tool_result["content"]
    assert KEY not in sent_text(fake_llm, 1)
    resumed = tui_agent("run", "--config", str(conf), "-c", "once more")
    assert resumed.returncode == 0, resumed.stderr
    assert KEY not in sent_text(fake_llm, 2)
    live_messages = fake_llm.requests[1]["messages"]
    assert fake_llm.requests[2]["messages"][:len(live_messages)] == live_messages


@pytest.mark.anyio
async def test_a_learned_token_never_reaches_the_model_in_a_sampling_request(
        fake_llm: FakeLLM) -> None:
    """A server's sampling request (answered by the model, outside the conversation) that
    carries an OAuth token tui-agent holds: the provider gets ``***``."""
    from tests.conftest import model_for
    from tui_agent.config.interpolate import learn_secret
    from tui_agent.core.llm import LLM
    from tui_agent.core.messages import complete_text

    token = "oauth-token-only-this-test-5b1f0c"
    learn_secret(token)
    fake_llm.push(Reply(text="summarized"))
    said = await complete_text(LLM(model_for(fake_llm)), [
        {"role": "user", "content": f"summarize: Authorization: Bearer {token}"}])
    assert said == "summarized"
    assert fake_llm.requests[0]["messages"][-1]["content"] == \
        "summarize: Authorization: Bearer ***"


@pytest.mark.anyio
async def test_a_configured_key_never_reaches_the_model_in_a_sampling_request(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    """A server's sampling request that echoes a key of the config (which the server may
    have been given in its env or headers): the wiring the app and ``run`` use sends
    ``***`` to the provider, as the conversation's own requests do."""
    from tui_agent.config import load as load_config
    from tui_agent.tools.sampling import SampleRequest
    from tui_agent.wiring import build

    settings = load_config(conf_with_key(tmp_path, fake_llm))
    complete = build.sampling_complete(lambda: settings,
                                       lambda: settings.config.model.name,
                                       lambda: settings.secrets)
    fake_llm.push(Reply(text="noted"))
    said, model = await complete(SampleRequest(
        server="echo", messages=(("user", f"the key I was given is {KEY}"),),
        system_prompt=f"never say {KEY}", max_tokens=50))
    assert (said, model) == ("noted", "openai/fake-model")
    assert KEY not in sent_text(fake_llm, 0)
    assert fake_llm.requests[0]["messages"] == [
        {"role": "system", "content": "never say ***"},
        {"role": "user", "content": "the key I was given is ***"}]


def test_export_and_sessions_mask_again_with_the_configs_keys(tmp_path: Path,
                                                              fake_llm: FakeLLM) -> None:
    """A file that holds a key whole (written before the key was configured, or by an
    older tui-agent): ``export`` and ``sessions`` read the config and mask it, though the
    key is no environment variable; a config that cannot be read is a warning, and the
    export still goes."""
    conf = conf_with_key(tmp_path, fake_llm)
    directory = paths.sessions_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "20260101-000000-c0ffee.jsonl"
    lines = [{"kind": "meta", "version": 1, "id": path.stem},
             {"kind": "message", "seq": 0, "message": {"role": "user",
                                                       "content": f"my key is {KEY}"}}]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    listed = tui_agent("--config", str(conf), "sessions")
    exported = tui_agent("--config", str(conf), "export", path.stem)
    assert listed.returncode == 0 and exported.returncode == 0, listed.stderr + exported.stderr
    assert path.stem in listed.stdout and KEY not in listed.stdout
    assert "my key is ***" in exported.stdout and KEY not in exported.stdout
    broken = tmp_path / "broken.toml"
    broken.write_text("[model\n", encoding="utf-8")
    anyway = tui_agent("--config", str(broken), "export", path.stem)
    assert anyway.returncode == 0 and "my key is" in anyway.stdout, anyway.stderr
    assert "broken.toml" in anyway.stderr and "masked again" in anyway.stderr
