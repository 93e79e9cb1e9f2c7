"""What the built-in server tells the client about asking, in a tool's ``_meta``: the
one place both sides take the key from. The server sets it (:mod:`.shell.tools`, when its
commands run unsandboxed), the hub reads it into the tool's spec and the gate then asks
for every call. A module of constants only, so that the client reads the key without
importing the server's side of the MCP SDK."""

ASK_META = "io.tui-agent/always-ask"
"""In a tool's ``_meta``: the server's own reason (a sentence, or ``true``) for asking
before every call of the tool, whatever ``auto``, "always allow" or a past approval
say. It can only make the gate stricter, so the client honours it from any server."""

UNSANDBOXED = "commands run without a sandbox on this machine"
"""The built-in shell's reason, as the question shows it."""
