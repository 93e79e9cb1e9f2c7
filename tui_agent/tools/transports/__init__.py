"""Transports beyond what the mcp SDK has; and the SDK's own, set up safely."""
