"""``/skills`` and ``tui-agent skills``: every skill with its origin, its state this
session (listed, loaded, refused and why) and its tokens, then the skills that were not
offered and why. Plain lines, every untrusted part cleaned, for any front end."""

from __future__ import annotations

from tui_agent.core.skills.catalog import Catalog, tokens_of
from tui_agent.core.skills.index import short
from tui_agent.custom import skills as found
from tui_agent.tools.text import clean
from tui_agent.tools.wording import counted


def skills_report(catalog: Catalog, *, width: int = 60) -> list[str]:
    """The lines of the listing (``width``: characters of a description shown)."""
    entries = catalog.entries()
    problems = catalog.not_offered()
    if not entries and not problems:
        return ["no skills: put a folder with a SKILL.md in the skills/ folder beside "
                "your config, ~/.agents/skills/ or ~/.claude/skills/ (or a trusted "
                "project's .tui-agent/skills/, .agents/skills/, .claude/skills/)"]
    loaded = sum(1 for n in entries if catalog.state(n).state == "loaded")
    lines = [f"{counted(len(entries), 'skill')}, {loaded} loaded: the model reads each "
             "one's name and description until it loads it with the skill tool"]
    wide = max((len(clean(n)) for n in entries), default=0)
    for name, entry in entries.items():
        state = catalog.state(name)
        tokens = state.tokens if state.state == "loaded" \
            else tokens_of(f"- {name}: {short(entry.description)}")
        what = state.state + (f" ({state.reason})" if state.reason else "")
        lines.append(f"  {clean(name):<{wide}}  {entry.origin:<7}  {clean(what)}  "
                     f"~{tokens:,} tokens  {short(entry.description, width)}")
        if entry.allowed_tools:
            granted = "approved" if name in catalog.granted else "asks on load"
            lines.append(f"  {'':<{wide}}  allowed-tools ({granted}): "
                         f"{clean(' '.join(entry.allowed_tools))}")
        lines.append(f"  {'':<{wide}}  {tilde(clean(entry.where))}")
    if problems:
        lines.append(f"not offered ({len(problems)}):")
        lines += [f"  {tilde(clean(p))}" for p in problems]
    return lines


def tilde(text: str) -> str:
    """``text`` with the home directory written ``~``."""
    home = str(found.home())
    return text.replace(f"{home}/", "~/") if home not in ("", "/") else text
