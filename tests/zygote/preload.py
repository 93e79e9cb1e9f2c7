"""What the zygote imports once so that none of its children does: the command and every
module a headless ``tui-agent`` run, ``servers``, ``stubs`` or ``login`` reaches, litellm
set up as the command sets it up, and the MCP SDK.

Not the TUI (``tui_agent.ui``, textual): the suite starts the full-screen app in a
terminal, and those tests run the real command (:data:`tests.zygote.REAL`). A child that
still needs a module imports it itself, as a fresh process would.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import threading

import tui_agent

SKIPPED = ("tui_agent.ui", "tui_agent.__main__", "tui_agent.codemode.child",
           "tui_agent.demo.server")
"""The TUI, and the modules that are programs (importing them would run them)."""

LIBRARIES = ("mcp", "mcp.client.session", "mcp.client.stdio", "mcp.client.sse",
             "mcp.client.streamable_http", "mcp.shared.auth", "httpx", "anyio", "pydantic",
             "keyring", "starlark", "platformdirs", "tomlkit",
             # The server side, for the fake servers started as ``--module=`` requests.
             "mcp.server.mcpserver", "mcp.server.lowlevel", "mcp.server.stdio",
             "mcp.server.sse", "mcp.server.streamable_http_manager", "uvicorn",
             "starlette.applications", "sse_starlette",
             # What litellm imports at the first completion (the openai SDK, its handler,
             # the tokenizer): 0.6 s of CPU in every child that talks to a model.
             "openai", "openai.resources", "litellm.llms.openai.openai",
             "litellm.llms.openai_like.chat.handler", "litellm.proxy._types",
             "litellm.litellm_core_utils.default_encoding", "tiktoken", "jiter",
             "anyio._backends._asyncio")


def load() -> list[str]:
    """Import everything; the modules that would not import (named for the log)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from tui_agent.core.llm.loader import load_litellm

    load_litellm()
    failed = []
    for name in LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:
            failed.append(name)
    _walk(tui_agent.__path__, "tui_agent.", failed)
    return failed


def _walk(path: list[str], prefix: str, failed: list[str]) -> None:
    """``pkgutil.walk_packages`` without entering the skipped packages (it imports every
    package it passes to list what is inside)."""
    for info in pkgutil.iter_modules(path, prefix):
        if info.name.startswith(SKIPPED):
            continue
        try:
            module = importlib.import_module(info.name)
        except Exception:
            failed.append(info.name)
            continue
        if info.ispkg:
            _walk(list(module.__path__), info.name + ".", failed)


def threads() -> list[str]:
    """Threads besides this one: a fork copies only the thread that forks, so a lock
    another thread held would stay locked forever in every child."""
    return [t.name for t in threading.enumerate() if t is not threading.current_thread()]
