"""Windows of local models: the server is asked (Ollama's /api/show, vLLM's /v1/models,
LM Studio's /api/v0/models), once, with a short timeout; ``[model] context_window`` still
wins; a server that does not answer leaves the window unknown, quickly."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tui_agent.config.models import ModelSettings
from tui_agent.core.llm import LLM, Reply


class LocalServer:
    """Answers GET and POST with the JSON object routed to the path; records each
    request (path and body). With ``hang`` it answers nothing until it stops."""

    def __init__(self) -> None:
        self.routes: dict[str, dict[str, Any]] = {}
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.hang = False
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_GET(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.seen.append((self.path, body))
                if server.hang:
                    server.stopping.wait(30)
                    return
                answer = server.routes.get(self.path)
                data = json.dumps(answer if answer is not None else {"error": "no route"})
                self.send_response(200 if answer is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            do_POST = do_GET  # noqa: N815

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"


@pytest.fixture
def local() -> Iterator[LocalServer]:
    server = LocalServer()
    yield server
    server.stopping.set()
    server.http.shutdown()
    server.http.server_close()


def show(context_length: int, parameters: str = "", capabilities: list[str] | None = None
         ) -> dict[str, Any]:
    """An /api/show answer, shaped as Ollama's."""
    return {"modelfile": "FROM qwen3", "parameters": parameters, "template": "{{ .Prompt }}",
            "details": {"family": "qwen3", "parameter_size": "8.2B"},
            "model_info": {"general.architecture": "qwen3", "general.parameter_count": 8190735360,
                           "qwen3.context_length": context_length,
                           "qwen3.embedding_length": 4096},
            "capabilities": capabilities or ["completion", "tools"]}


@pytest.mark.parametrize("prefix", ["ollama", "ollama_chat"])
def test_ollama_is_asked_for_the_window_once(local: LocalServer, prefix: str) -> None:
    local.routes["/api/show"] = show(24576)
    llm = LLM(ModelSettings(name=f"{prefix}/qwen3:8b", api_base=local.base))
    assert llm.window() == 24576
    assert llm.window() == 24576
    assert local.seen == [("/api/show", {"model": "qwen3:8b", "name": "qwen3:8b"})]


def test_the_modelfiles_num_ctx_is_the_window_ollama_runs(local: LocalServer) -> None:
    parameters = 'num_ctx                        16384\nstop                           "<|im_end|>"'
    local.routes["/api/show"] = show(131072, parameters=parameters)
    assert LLM(ModelSettings(name="ollama_chat/qwen3:8b", api_base=local.base)).window() == 16384


def test_the_configured_window_wins_and_the_server_is_not_asked(local: LocalServer) -> None:
    local.routes["/api/show"] = show(40960)
    llm = LLM(ModelSettings(name="ollama_chat/qwen3:8b", api_base=local.base,
                            context_window=8192))
    assert llm.window() == 8192 and local.seen == []


def test_a_server_that_does_not_answer_leaves_the_window_unknown() -> None:
    with socket.socket() as s:  # bound, never listening: the port is ours and refuses
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        llm = LLM(ModelSettings(name="ollama_chat/qwen3:8b",
                                api_base=f"http://127.0.0.1:{port}"))
        assert llm.window() is None


@pytest.mark.parametrize(("trained", "parameters", "env", "window"), [
    (131072, "", None, 32768),  # llama3.1's whole trained context: capped
    (131072, "", "8192", 8192),  # the server's configured default context
    (4096, "", "8192", 4096),  # a model trained on less keeps its own
    (131072, "num_ctx 65536", None, 65536),  # a Modelfile's num_ctx is the user's choice
])
def test_ollamas_default_window_is_capped_and_sent_as_num_ctx(
        local: LocalServer, monkeypatch: pytest.MonkeyPatch, trained: int, parameters: str,
        env: str | None, window: int) -> None:
    """The window is sent as ``num_ctx``: a model's whole trained context would make
    Ollama reload it with a KV cache that may not fit."""
    if env is None:
        monkeypatch.delenv("OLLAMA_CONTEXT_LENGTH", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_CONTEXT_LENGTH", env)
    local.routes["/api/show"] = show(trained, parameters=parameters)
    llm = LLM(ModelSettings(name="ollama_chat/llama3.1", api_base=local.base))
    assert llm.window() == window
    assert llm._request([{"role": "user", "content": "hi"}], [])["num_ctx"] == window
    chosen = LLM(ModelSettings(name="ollama_chat/llama3.1", api_base=local.base,
                               context_window=131072))
    assert chosen._request([{"role": "user", "content": "hi"}], [])["num_ctx"] == 131072


def test_a_hung_server_costs_no_more_than_the_timeout(local: LocalServer) -> None:
    local.hang = True
    llm = LLM(ModelSettings(name="ollama_chat/qwen3:8b", api_base=local.base, timeout=0.5))
    started = time.monotonic()
    assert llm.window() is None
    assert time.monotonic() - started < 3
    local.hang = False  # the server came up: the next question is answered
    local.routes["/api/show"] = show(32768)
    assert llm.window() == 32768


def test_ollamas_capabilities_say_what_the_model_reads(local: LocalServer) -> None:
    local.routes["/api/show"] = show(40960, capabilities=["completion", "vision"])
    assert LLM(ModelSettings(name="ollama_chat/qwen3-vl", api_base=local.base)).takes() \
        == {"image"}
    local.routes["/api/show"] = show(40960, capabilities=["completion"])
    assert LLM(ModelSettings(name="ollama_chat/qwen3", api_base=local.base)).takes() == set()


def test_vllm_gives_max_model_len(local: LocalServer) -> None:
    local.routes["/v1/models"] = {"object": "list", "data": [
        {"id": "other", "object": "model", "max_model_len": 4096},
        {"id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm", "max_model_len": 32768}]}
    llm = LLM(ModelSettings(name="hosted_vllm/Qwen/Qwen3-8B", api_base=local.base + "/v1"))
    assert llm.window() == 32768


def test_lm_studio_gives_the_loaded_context_length(local: LocalServer) -> None:
    local.routes["/api/v0/models/qwen3-8b"] = {
        "id": "qwen3-8b", "object": "model", "type": "llm", "state": "loaded",
        "max_context_length": 40960, "loaded_context_length": 8192}
    llm = LLM(ModelSettings(name="lm_studio/qwen3-8b", api_base=local.base + "/v1"))
    assert llm.window() == 8192


@pytest.mark.anyio
async def test_ollama_reads_the_whole_prompt_with_the_window_it_reported() -> None:
    """Through the Ollama fake (tests/fakes/ollama_server.py) and the request that sends
    ``num_ctx`` (core/llm): the window asked of the server is what Ollama is told to hold,
    so a prompt past Ollama's small default is not cut. Runs once both are here."""
    oll = pytest.importorskip("tests.fakes.ollama_server")
    with oll.OllamaFake([oll.Reply(text="Read it all.")],
                        models={"qwen3": oll.Model(context_length=32768)}) as fake:
        llm = LLM(ModelSettings(name="ollama_chat/qwen3", api_base=fake.base_url,
                                max_retries=0))
        long = [{"role": "user", "content": "word " * 6000}]  # past the default 4,096
        items = [item async for item in llm.stream(long)]
        if "num_ctx" not in (fake.chats[-1].get("options") or {}):
            pytest.skip("the request does not send num_ctx yet (core/llm)")
        assert fake.chats[-1]["options"]["num_ctx"] == 32768 == llm.window()
        reply = items[-1]
        assert isinstance(reply, Reply) and reply.text == "Read it all."
        assert fake.truncations == []


def test_the_pickers_window_is_litellms_input_limit_never_its_max_tokens() -> None:
    """In litellm's price list ``max_tokens`` is mostly the output limit."""
    from tui_agent.core.llm import load_litellm
    from tui_agent.core.llm.facts import model_facts

    load_litellm().register_model({
        "openai/output-limit-only": {"max_tokens": 4096, "max_output_tokens": 4096,
                                     "litellm_provider": "openai", "mode": "chat"},
        "openai/input-limit-too": {"max_tokens": 4096, "max_input_tokens": 64000,
                                   "max_output_tokens": 4096, "litellm_provider": "openai",
                                   "mode": "chat"}})
    only = model_facts("openai/output-limit-only")
    both = model_facts("openai/input-limit-too")
    assert only is not None and only.context_window is None
    assert both is not None and both.context_window == 64000
