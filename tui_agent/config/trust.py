"""Trust for project content: the files of a project read as prompts (AGENTS.md, and
what else a caller hands :func:`hold_content`). One question covers a project's config
and its content: what is not trusted yet joins :attr:`Settings.held`, the trust dialog
(or the headless warning) lists it, and :func:`record_trust` remembers the answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tui_agent.config.errors import ConfigError
from tui_agent.config.held import HeldProject, held_in_text, held_on_disk
from tui_agent.config.loader import Settings
from tui_agent.config.project import (
    CONTENT_TRUSTED,
    Project,
    content_trust_store,
    digest,
    trust_store,
)
from tui_agent.config.writeback import replace_file


def hold_content(settings: Settings, root: Path, content: Sequence[tuple[str, Path]],
                 env: Mapping[str, str] = os.environ, *, trust: bool = False) -> bool:
    """Whether the project content in ``root`` (``(kind, path)``: memory files, ...) may
    be read: once the user trusted the folder (``trust`` records it now). Otherwise it is
    added to ``settings.held``, for the trust dialog (or the headless warning) to list.
    Trust is for the folder, not the files' text: editing them never asks again."""
    if not content:
        return True
    store = content_trust_store(env)
    if trust:
        store.record(root, CONTENT_TRUSTED)
    if store.trusted(root, CONTENT_TRUSTED):
        return True
    held = settings.held or HeldProject(settings.project or Project(root, ()), "")
    held.content += content
    held.content_root = root
    settings.held = held
    return False


def content_trusted(root: Path, env: Mapping[str, str] = os.environ) -> bool:
    """Whether the user trusted the project content of ``root``."""
    return content_trust_store(env).trusted(root, CONTENT_TRUSTED)


def record_trust(held: HeldProject, env: Mapping[str, str] = os.environ) -> None:
    """The user agreed to everything ``held`` lists: remember it. Raises ``OSError``."""
    if held.asks_config() or held.skills or held.folders:  # what the digest covers
        trust_store(env).record(held.project.root, held.digest)
    if held.content and held.content_root is not None:
        content_trust_store(env).record(held.content_root, CONTENT_TRUSTED)


def trust_content(root: Path, env: Mapping[str, str] = os.environ) -> None:
    """Trust the project content of ``root`` (``/init`` wrote its only memory file, every
    word approved by the user). Raises ``OSError``."""
    content_trust_store(env).record(root, CONTENT_TRUSTED)


def trusted_writer(settings: Settings, env: Mapping[str, str] = os.environ
                   ) -> Callable[[Path, str], None]:
    """How the app writes its own edit into a config file (an "always allow", a rule
    removed in ``/permissions``): atomically, and, for a file of a trusted project, keeping
    the project trusted over that edit only. The edit is the person's own agreement, not a
    change to ask about; but when the project's files, as they are on disk just before it,
    are not the ones the person trusted (someone else changed one since), trust is left
    alone and the next start asks again. The new digest counts the file as written here,
    never as read back, so nothing that lands on disk meanwhile is trusted with it.
    Raises :class:`~tui_agent.config.errors.ConfigError` naming the file."""

    def write(file: Path, text: str) -> None:
        project = settings.project
        if project is None or settings.held is not None or file not in project.files:
            replace_file(file, text)
            return
        store = trust_store(env)
        try:
            parts = held_on_disk(project)
        except ConfigError:  # a file that cannot be read now: not what was trusted
            parts, was = {}, False
        else:
            was = not any(parts.values()) or store.trusted(project.root,
                                                           digest(project, parts))
        replace_file(file, text)
        now = held_in_text(file, text)
        if was and now is not None:
            parts[file] = now
            store.record(project.root, digest(project, parts))

    return write
