"""tui-agent: a terminal chat agent for any LLM, with MCP tools behind an approval gate.

Design note: the layers, each importing only the ones below it (import-linter holds this
to ``pyproject.toml``'s contracts, run by ``tests/test_architecture.py``)::

    cli                 the command line: parses, then hands over to a front end
    ui | headless       the front ends: the Textual app | plain terminal and pipes
    wiring              the composition root: settings -> policy, hub, model, agent, session
    demo                the offline tour's scripted model and notes server
    core                the chat loop, events, the litellm client, approval, sessions
    codemode            .pyi stubs and the Starlark sandbox (knows nothing of the loop)
    tools               MCP: the hub, one connection per server, transports, the client
                        seam (auth and handlers), results; the tool vocabulary (spec.py)
    config              settings: models, loading, ${VAR}, paths (imports nothing of ours)

``ui`` and ``headless`` never import each other; nothing below ``ui`` imports textual;
only ``core/llm/loader.py`` imports litellm; no two modules import each other, even inside a
function.
"""

__version__ = "0.1.0"
