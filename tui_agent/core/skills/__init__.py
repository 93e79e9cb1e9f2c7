"""Agent Skills as the model meets them: a catalog over every origin (the user's and the
project's folders, MCP servers), the short index the system prompt carries, and the
built-in ``skill`` tool that loads one."""
