"""Agent Skills' cost to the first request (issue 47).

N skills (default 100) are installed in the user's skills folder, each in the shape of
anthropics/skills' ones (a SKILL.md with a description of several hundred characters,
a ``references/`` file and a script). One turn runs through the real agent and litellm
against the scripted LLM; the first request is measured with a real tokenizer
(tiktoken's o200k_base) against the same turn with no skills. Printed: the tokens the
skills add in all and per skill (target: at most 60 each), and whether anything but each
``SKILL.md``'s frontmatter was read before a skill was loaded (every file's access time
is set in the past first and checked after; the bodies are also looked for in the
request).

    python -m tests.bench.bench_skills [--skills 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from tests.fakes.llm_server import FakeLLM, Reply
from tests.fakes.tokens import tokens
from tui_agent.config.models import ModelSettings
from tui_agent.core.agent import Agent
from tui_agent.core.llm import LLM
from tui_agent.core.permissions import ApproveAll
from tui_agent.core.skills.catalog import Catalog
from tui_agent.core.skills.local import LocalSkills
from tui_agent.custom.skills import discover
from tui_agent.tools.local import NoTools

TOPICS = ("pdf", "docx", "xlsx", "pptx", "csv", "sql", "git", "docker", "k8s", "aws")


def install(folder: Path, count: int) -> list[Path]:
    """``count`` skills in ``folder``, each with a long description, a reference file and a
    script; the body names a marker that must not reach the model before it is loaded."""
    made = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        name = f"{topic}-helper-{i}"
        skill = folder / name
        (skill / "references").mkdir(parents=True, exist_ok=True)
        (skill / "scripts").mkdir(exist_ok=True)
        description = (
            f"Use this skill whenever the user works with {topic} files or services. It "
            f"covers reading, converting, validating and writing {topic} content, the "
            "common pitfalls, and the scripts that automate the usual steps. Use it when "
            f"the user mentions {topic}, asks to produce one, or needs a report from one, "
            "even if they do not name the format outright.")
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\nlicense: Apache-2.0\n"
            f"metadata:\n  author: bench\n  version: \"1.0\"\n---\n\n# {name}\n\n"
            f"BODY-MARKER-{i}\n" + "Step by step instructions.\n" * 200, encoding="utf-8")
        (skill / "references" / "REFERENCE.md").write_text(f"REF-MARKER-{i}\n" * 50)
        (skill / "scripts" / "run.py").write_text("print('ok')\n")
        made.append(skill)
    return made


async def first_request(catalog: Catalog | None) -> dict[str, object]:
    with FakeLLM() as server:
        server.push(Reply(text="ok"))
        llm = LLM(ModelSettings(name="openai/bench-model", api_base=server.base_url,
                                api_key="sk-bench"))
        agent = Agent(llm, NoTools(), ApproveAll(), skills=catalog)
        async for _ in agent.run_turn("hello"):
            pass
        return server.requests[0]


def _atimes(skills: list[Path], when: float) -> None:
    for skill in skills:
        for path in skill.rglob("*"):
            if path.is_file():
                os.utime(path, (when, path.stat().st_mtime))


def _read_since(skills: list[Path], when: float) -> list[str]:
    return [str(p) for s in skills for p in s.rglob("*")
            if p.is_file() and p.name != "SKILL.md" and p.stat().st_atime > when]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        skills = install(Path(home) / "skills", args.skills)
        past = 1_000_000_000.0
        _atimes(skills, past)
        found = discover([("user", Path(home) / "skills")])
        catalog = Catalog([LocalSkills(found)], [str(p) for p in found.problems])
        with_skills = asyncio.run(first_request(catalog))
        without = asyncio.run(first_request(None))
        read = _read_since(skills, past)
    added = tokens(with_skills) - tokens(without)
    sent = str(with_skills)
    leaked = [m for m in ("BODY-MARKER", "REF-MARKER") if m in sent]
    print(f"{args.skills} skills installed ({len(found.skills)} offered, "
          f"{len(found.problems)} broken)")
    print(f"  first request: {tokens(without):,} tokens without skills, "
          f"{tokens(with_skills):,} with them")
    print(f"  added: {added:,} tokens, {added / max(args.skills, 1):.1f} per skill "
          "(target: at most 60)")
    print(f"  read before a skill was loaded, beyond each SKILL.md: "
          f"{len(read)} files{' (' + ', '.join(read[:3]) + ')' if read else ''}; "
          f"bodies or files in the request: {', '.join(leaked) or 'none'}")


if __name__ == "__main__":
    main()
