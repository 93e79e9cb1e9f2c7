"""Code mode: tools reached through ``.pyi`` stubs and one Starlark script.

Nothing here imports the chat loop; the core hands the sandbox one
``call_tool`` callable that already passes the approval gate.
"""
