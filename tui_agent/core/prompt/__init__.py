"""The system prompt, assembled from named parts in a stable order (see
:mod:`tui_agent.core.prompt.assembly`)."""

from tui_agent.core.prompt.assembly import SystemPrompt as SystemPrompt
from tui_agent.core.prompt.parts import OWN as OWN
from tui_agent.core.prompt.parts import Environment as Environment
from tui_agent.core.prompt.parts import PromptPart as PromptPart
from tui_agent.core.prompt.parts import servers_said as servers_said
