"""Provider errors in plain words: each provider's own error body, as its API sends it,
read through the real litellm client (no b'...' literal, the real status, the provider's
own type and message); overloads retried; every context-length wording drives compaction."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import model_for
from tests.fakes.llm_server import FakeLLM
from tests.fakes.llm_server import Reply as FakeReply
from tui_agent.config.models import ModelSettings
from tui_agent.core.compaction import overflowed, window_in
from tui_agent.core.events import Retrying
from tui_agent.core.llm import LLM
from tui_agent.core.llm.errors import LLMError

pytestmark = pytest.mark.anyio

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "gemini": "gemini/gemini-2.5-flash",
          "ollama": "ollama_chat/llama3.1", "openai": "openai/gpt-4o"}


class ErrorServer:
    """Answers every request with one provider's error: its status and its JSON body."""

    def __init__(self) -> None:
        self.status = 500
        self.body: dict[str, Any] = {}
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                data = json.dumps(server.body).encode()
                self.send_response(server.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()

    def settings(self, provider: str, **extra: Any) -> ModelSettings:
        base = f"http://127.0.0.1:{self.http.server_address[1]}"
        values: dict[str, Any] = {
            "name": MODELS[provider], "api_base": base + ("/v1" if provider == "openai" else ""),
            "api_key": "sk-test", "max_retries": 0, "retry_backoff": 0.01, "timeout": 10}
        return ModelSettings(**{**values, **extra})


@pytest.fixture
def errors() -> Iterator[ErrorServer]:
    server = ErrorServer()
    yield server
    server.http.shutdown()
    server.http.server_close()


async def failure(settings: ModelSettings) -> tuple[LLMError, list[Retrying]]:
    retries: list[Retrying] = []
    with pytest.raises(LLMError) as caught:
        async for item in LLM(settings).stream([{"role": "user", "content": "hi"}]):
            if isinstance(item, Retrying):
                retries.append(item)
    return caught.value, retries


@pytest.mark.parametrize(("provider", "status", "body", "said"), [
    ("anthropic", 529, {"type": "error", "error": {"type": "overloaded_error",
                                                   "message": "Overloaded"}},
     "anthropic at {base} is overloaded (529): Overloaded"),
    ("gemini", 503, {"error": {"code": 503, "status": "UNAVAILABLE",
                               "message": "The model is overloaded. Please try again later."}},
     "gemini at {base} is overloaded (503): The model is overloaded. Please try again "
     "later."),
])
async def test_an_overloaded_provider_is_named_and_retried(
        errors: ErrorServer, provider: str, status: int, body: dict[str, Any],
        said: str) -> None:
    errors.status, errors.body = status, body
    settings = errors.settings(provider, max_retries=1)
    said = said.format(base=settings.api_base)
    error, retries = await failure(settings)
    assert error.kind == "overloaded" and error.retriable
    assert str(error) == said
    assert [r.reason for r in retries] == [said] and errors.requests == 2


@pytest.mark.parametrize(("provider", "status", "body", "kind", "said"), [
    ("anthropic", 401, {"type": "error", "error": {"type": "authentication_error",
                                                   "message": "invalid x-api-key"}},
     "auth", ": invalid x-api-key. Give it the key"),
    ("anthropic", 429, {"type": "error", "error": {
        "type": "rate_limit_error", "message": "Number of request tokens has exceeded your "
                                               "per-minute rate limit"}},
     "rate_limit", "(429): Number of request tokens has exceeded your per-minute rate limit"),
    ("gemini", 429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                               "message": "Resource has been exhausted (e.g. check quota)."}},
     "rate_limit", "(429): Resource has been exhausted (e.g. check quota)."),
    ("ollama", 500, {"error": "llama runner process has terminated: exit status 2"},
     "server", "failed (500): llama runner process has terminated: exit status 2"),
    ("ollama", 404, {"error": "model 'llama3.1' not found"},
     "unknown_model", "'ollama_chat/llama3.1' (404): model 'llama3.1' not found"),
])
async def test_the_providers_own_message_is_read_from_its_body(
        errors: ErrorServer, provider: str, status: int, body: dict[str, Any], kind: str,
        said: str) -> None:
    errors.status, errors.body = status, body
    error, _ = await failure(errors.settings(provider))
    assert error.kind == kind
    assert said in str(error)
    assert "b'" not in str(error) and '{"' not in str(error)


@pytest.mark.parametrize(("provider", "body", "window"), [
    ("anthropic", {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 208310 tokens > 200000 maximum"}}, 200000),
    ("gemini", {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": (
        "The input token count (1200000) exceeds the maximum number of tokens allowed "
        "(1048576).")}}, 1048576),
    ("openai", {"error": {"message": "This model's maximum context length is 128000 tokens. "
                                     "However, your messages resulted in 130000 tokens.",
                          "type": "invalid_request_error", "param": "messages",
                          "code": "context_length_exceeded"}}, 128000),
    ("ollama", {"error": "the input length exceeds the context length"}, None),
])
async def test_each_providers_context_length_wording_reads_as_too_long_with_its_window(
        errors: ErrorServer, provider: str, body: dict[str, Any], window: int | None) -> None:
    """The kind and the window compaction acts on (tests/test_e2e_* run the compaction)."""
    errors.status, errors.body = 400, body
    error, _ = await failure(errors.settings(provider))
    assert error.kind == "context_window" and overflowed(error)
    assert window_in(str(error)) == window  # what compaction learns the window from
    assert "b'" not in str(error) and '{"' not in str(error)


async def test_a_spent_quota_is_not_a_rate_limit_and_is_not_retried(errors: ErrorServer) -> None:
    errors.status, errors.body = 429, {"error": {
        "message": "You exceeded your current quota, please check your plan and billing "
                   "details.", "type": "insufficient_quota", "param": None,
        "code": "insufficient_quota"}}
    error, retries = await failure(errors.settings("openai", max_retries=2))
    assert error.kind == "budget" and not error.retriable
    assert "the budget is spent (You exceeded your current quota" in str(error)
    assert retries == [] and errors.requests == 1


async def test_the_providers_words_reach_no_terminal_with_escapes(errors: ErrorServer) -> None:
    errors.status, errors.body = 400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "bad \x1b]52;c;aGk=\x07request\x1b[2J\u202e here"}}
    error, _ = await failure(errors.settings("anthropic"))
    assert error.kind == "bad_request"
    assert str(error).endswith(": bad request here")


def error_page(functions: int) -> str:
    """A load balancer's 502 page with inline script: braces and quotes everywhere, no
    error body in it."""
    script = "".join(f"function f{i}(a) {{ if (a) {{ var o = {{'k{i}': [1, 2], \"v\": a}}; "
                     f"return o['k{i}']; }} }}\n" for i in range(functions))
    return (f"<!DOCTYPE html><html><head><title>502 Bad\n Gateway</title><script>{script}"
            "</script></head><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>")


async def test_a_large_html_error_page_is_read_in_few_parses_and_named_by_its_title(
        fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the body runs on the event loop: a 12 KB page costs no more parses than
    a small one (it used to try every pair of braces: seconds with the loop blocked)."""
    parses: list[int] = []
    literal_eval = ast.literal_eval

    def counted(text: str) -> Any:
        parses.append(len(text))
        if len(parses) > 500:  # the old way took millions: stop it early
            raise RuntimeError("too many parses of one error body")
        return literal_eval(text)

    monkeypatch.setattr(ast, "literal_eval", counted)
    said = []
    for functions in (4, 160):
        parses.clear()
        fake_llm.push(FakeReply(status=502, error_body=error_page(functions)))
        error, _ = await failure(model_for(fake_llm, max_retries=0))
        said.append((error.kind, str(error).split(": ", 1)[1], len(parses)))
    assert len(error_page(160)) > 11_000
    (small_kind, small_words, small), (kind, words, large) = said
    assert kind == small_kind == "server" and words == small_words == \
        "an HTML error page: 502 Bad Gateway"
    assert 0 < small <= large <= small * 10
