"""The first-run panel (no model yet) and the demo's introduction."""

from __future__ import annotations

from textual.widgets import Markdown

from tui_agent.config import paths
from tui_agent.wiring.runtime import PROVIDER_KEYS, keys_in_env

FIRST_RUN = """\
## Welcome to tui-agent

No model is configured yet. Point tui-agent at one:

- **A hosted model**: set a key litellm knows ({keys}, ...), then type
  `/model openai/gpt-4o-mini` here, or start with `tui-agent --model openai/gpt-4o-mini`.
- **A local Ollama** (it listens on `http://localhost:11434`): `/model ollama/llama3.1`.
- **Any OpenAI-compatible server** (vLLM, LM Studio, llama.cpp):
  `/model openai/NAME http://HOST:PORT/v1` here, or start with
  `tui-agent --model openai/NAME --api-base http://HOST:PORT/v1`.
- **For good**: `[model] name = "..."` in `{config}`.
{found}
**No key at hand?** Quit (`ctrl+q`) and run `tui-agent --demo`: an offline tour with a
scripted model and a real MCP server.
"""

DEMO = """\
## Offline demo

The model here is a **scripted tour, not an AI**: it walks through a streamed answer,
a tool call that stops at the approval gate, and a read-only tool that does not.
The `notes` MCP server and everything else are real.

Press `enter` to start.
"""


def welcome(demo: bool) -> Markdown:
    if demo:
        text = DEMO
    else:
        found = keys_in_env()
        hint = (f"\nFound in your environment: {', '.join(f'`{k}`' for k in found)}: pick a "
                "model of that provider with `/model`.\n" if found else "")
        text = FIRST_RUN.format(keys=", ".join(f"`{k}`" for k in PROVIDER_KEYS[:3]),
                                config=paths.default_config_file(), found=hint)
    return Markdown(text, classes="welcome", open_links=False)
