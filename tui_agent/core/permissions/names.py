"""A tool's name as rules and hooks write it: Claude Code's ``mcp__SERVER__TOOL`` (the
built-in servers too: ``mcp__local__shell``), so a rule or hook script written for
Claude Code's MCP tools matches here unchanged. The model sees ``SERVER__TOOL``; rules
written that way are read too (:func:`rule_name` of such a name)."""

from __future__ import annotations

PREFIX = "mcp__"


def rule_name(server: str, tool: str) -> str:
    """``mcp__SERVER__TOOL``: how rules, hooks' ``tool_name`` and their matchers name a
    tool."""
    return f"{PREFIX}{server}__{tool}"
