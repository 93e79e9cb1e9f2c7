"""Tools: MCP servers, their catalog, and turning their results into safe text."""
