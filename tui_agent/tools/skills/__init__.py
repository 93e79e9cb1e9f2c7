"""Skills over MCP (SEP-2640, ``io.modelcontextprotocol/skills``): what servers list, and
their files read lazily and verified; the names other layers use are here."""

from tui_agent.tools.skills.entries import (
    SKILLS_EXTENSION,
    ServerSkill,
    SkillError,
    SkillRefused,
)

__all__ = ["SKILLS_EXTENSION", "ServerSkill", "SkillError", "SkillRefused"]
