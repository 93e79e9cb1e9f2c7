"""Serve one of the provider fakes by hand, to point a real ``tui-agent`` at it.

    python -m tests.fakes.serve anthropic --text "The sum is 385." --thinking "n(n+1)(2n+1)/6..."
    python -m tests.fakes.serve gemini --text "hello" --thinking "..."
    python -m tests.fakes.serve ollama --text "hello" --thinking "..."

Every request gets the same reply (thinking first, when the request asks for it). It
prints the flags that reach it, e.g. ``--model anthropic/claude-sonnet-4-5 --api-base
http://127.0.0.1:PORT`` and the key variable to set (any value). Ctrl-C stops it. The
OpenAI-format fake has its own runner: ``python -m tests.fakes.llm_server``.
"""

from __future__ import annotations

import argparse
import time

from tests.fakes import anthropic_server, gemini_server, ollama_server

MODELS = {"anthropic": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
          "gemini": ("gemini/gemini-3.1-pro-preview", "GEMINI_API_KEY"),
          "ollama": ("ollama_chat/qwen3", None)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("provider", choices=sorted(MODELS))
    parser.add_argument("--text", default="Hello from the fake provider.")
    parser.add_argument("--thinking", default=None,
                        help="thinking streamed before the text, when the request asks for it")
    args = parser.parse_args(argv)
    fake: anthropic_server.AnthropicFake | gemini_server.GeminiFake | ollama_server.OllamaFake
    if args.provider == "anthropic":
        fake = anthropic_server.AnthropicFake()
        fake.repeat = anthropic_server.Reply(text=args.text, thinking=args.thinking)
    elif args.provider == "gemini":
        fake = gemini_server.GeminiFake()
        fake.repeat = gemini_server.Reply(text=args.text, thoughts=args.thinking)
    else:
        fake = ollama_server.OllamaFake()
        fake.repeat = ollama_server.Reply(text=args.text, thinking=args.thinking)
    model, key = MODELS[args.provider]
    with fake:
        if key:
            print(f"export {key}=x   # any value: the fake checks one is sent", flush=True)
        print(f"--model {model} --api-base {fake.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
