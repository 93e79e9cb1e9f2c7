"""The Textual front end. It renders the core's events and answers its gate; it never
talks to litellm or MCP itself (DESIGN.md). Heavy modules load lazily: importing this
package costs nothing."""
