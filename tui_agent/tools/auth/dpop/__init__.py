"""DPoP (RFC 9449): a key per server and a proof on every token and MCP request
(:mod:`.flow`), the key and its proofs (:mod:`.keys`)."""

from tui_agent.tools.auth.dpop.flow import RECORD, Dpop
from tui_agent.tools.auth.dpop.keys import DpopKey, thumbprint
from tui_agent.tools.auth.token_hash import token_hash

__all__ = ["RECORD", "Dpop", "DpopKey", "thumbprint", "token_hash"]
