"""Importing litellm: once, lazily, quietly, off the event loop.

litellm costs 3.5-8 s to import and, left alone, fetches a cost map and prints
to stdout and stderr. So it is imported once (:func:`preload` starts it early in a
thread), with the local cost map and its debug output switched off. This is the
only module of tui-agent that imports litellm.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from types import ModuleType

_lock = threading.Lock()
_module: ModuleType | None = None


def load_litellm() -> ModuleType:
    """Import litellm once, quietly. Blocking: call it from a thread."""
    global _module
    with _lock:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            litellm.set_verbose = False
            # Usage comes from the provider or is unknown. litellm would otherwise
            # estimate it with tiktoken (the wrong tokenizer for most models), and
            # loading that costs ~0.3 s on the first request of every run.
            litellm.disable_token_counter = True
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _module = litellm
        return _module


def preload() -> threading.Thread:
    """Start importing litellm in a daemon thread, so it is ready by the first turn."""
    thread = threading.Thread(target=load_litellm, name="litellm-import", daemon=True)
    thread.start()
    return thread


def encoder(model: str) -> Callable[[str], list[int]]:
    """The tiktoken encoding litellm's own ``token_counter`` picks for ``model``.
    Blocking (imports litellm, loads the encoding); raises when it cannot load."""
    load_litellm()
    from litellm.litellm_core_utils.token_counter import openai_tokenizer_encoding

    encode: Callable[[str], list[int]] = openai_tokenizer_encoding(model).encode_ordinary
    return encode
