"""The permission system every tool call passes: the policy (per-server lists, the
standing a person gave a tool), the store of those standings, and the gate a front end
supplies to ask a person.

One module per job: :mod:`.policy` judges a call, :mod:`.store` keeps "always allow",
:mod:`.gate` is what is asked and answered.
"""

from tui_agent.core.permissions.gate import (
    SCRIPT_REASON,
    ApproveAll,
    Decision,
    DenyAll,
    Gate,
    PendingCall,
    with_change,
)
from tui_agent.core.permissions.policy import (
    Judgement,
    Persist,
    Policy,
    ServerRules,
    Standing,
    Verdict,
)
from tui_agent.core.permissions.store import ApprovalStore

__all__ = ["SCRIPT_REASON", "ApprovalStore", "ApproveAll", "Decision", "DenyAll", "Gate",
           "Judgement", "PendingCall", "Persist", "Policy", "ServerRules", "Standing",
           "Verdict", "with_change"]
