"""tui-agent: a terminal chat agent for any LLM, with MCP tools behind an approval gate."""

__version__ = "0.1.0"
