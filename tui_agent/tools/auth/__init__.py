"""MCP authorization (OAuth 2.1) for remote servers: where tokens are kept
(:mod:`.storage`) and the end of a browser login (:mod:`.callback`). The SDK's auth
providers do the protocol; what is here is what the SDK leaves to its caller."""
