"""Skill folders written the way the Agent Skills spec (agentskills.io/specification) and
anthropics/skills show them: ``SKILL.md`` with YAML frontmatter, files beside it."""

from __future__ import annotations

from pathlib import Path

PDF_DESCRIPTION = (
    "Use this skill whenever the user wants to do anything with PDF files. This includes "
    "reading or extracting text and tables, merge or split documents, rotate pages, add "
    "watermarks, "
    "create new PDFs, fill in PDF forms, encrypt or decrypt them, extract images, and "
    "run OCR on scanned PDFs to make them searchable. If the user mentions a .pdf file "
    "or asks to produce one, use this skill.")
PDF_BODY = """# PDF processing guide

## Overview
This guide covers PDF work with Python libraries and command-line tools. For filling a
form, read forms.md and follow it; for advanced features, see reference.md.

## Quick start
```python
from pypdf import PdfReader
reader = PdfReader("document.pdf")
print(len(reader.pages))
```
"""
FORMS = "# Filling PDF forms\n\nRun scripts/fill_form.py with the field values as JSON.\n"


def pdf_skill(parent: Path, name: str = "pdf", *, extra: str = "") -> Path:
    """The shape of anthropics/skills' pdf skill: frontmatter with a long description and a
    license, instructions, ``forms.md``, ``reference.md`` and a script."""
    folder = parent / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {PDF_DESCRIPTION}\n"
        f"license: Proprietary. LICENSE.txt has complete terms\n{extra}---\n\n{PDF_BODY}",
        encoding="utf-8")
    (folder / "forms.md").write_text(FORMS, encoding="utf-8")
    (folder / "reference.md").write_text("# Reference\n\npypdfium2, pdf-lib.\n",
                                         encoding="utf-8")
    (folder / "scripts" / "fill_form.py").write_text("print('filled')\n", encoding="utf-8")
    (folder / "LICENSE.txt").write_text("terms\n", encoding="utf-8")
    return folder


def skill(parent: Path, name: str, description: str, *, body: str = "Do it well.\n",
          extra: str = "") -> Path:
    """A minimal skill as the spec's minimal example shows it."""
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}",
        encoding="utf-8")
    return folder


def user_skills(home: Path) -> Path:
    """The user's ``skills/`` beside the config (the suite's XDG config home)."""
    folder = home / "config" / "tui-agent" / "skills"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
