"""What one headless run was asked for (``tui-agent run``'s parsed command line), shared
by the set-up (:mod:`tui_agent.headless.run`) and the loop (:mod:`tui_agent.headless.drive`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.config import Settings
from tui_agent.core.attachments import Attachment
from tui_agent.core.filters import ToolFilter


@dataclass
class Run:
    """Everything one headless run needs, built from the parsed command line."""

    settings: Settings
    prompt: str | None
    approve: str
    output: str
    session_file: Path | None = None
    resume: str | None = None
    tool_filter: ToolFilter = field(default_factory=ToolFilter)
    elicit: str = "ask"
    """``--elicit``: ask, defaults or decline."""
    login: str = "auto"
    """``--login``: auto (a browser login on a terminal only), browser or never."""
    verbose: bool = False
    """``--verbose``: what servers log is shown too."""
    show_reasoning: bool = False
    """``--show-reasoning``: the model's thinking on stderr (text output)."""
    sampling: str = "deny"
    """``--sampling``: allow or deny servers' requests for the model."""
    attach: list[str] = field(default_factory=list)
    """``--attach SERVER:URI``: resources put before the prompt."""
    mcp_prompt: list[str] | None = None
    """``--mcp-prompt SERVER:PROMPT KEY=VALUE ...``: a server's prompt to start from."""
    max_depth: int | None = None
    compact: bool = False
    """``--compact``: summarize the resumed conversation first (with no prompt: only that)."""
    images: list[Path] = field(default_factory=list)
    """``--image PATH``: images sent with the prompt."""
    files: tuple[Attachment, ...] = ()
    """The files the prompt names with ``@path``, and the images, once read."""
