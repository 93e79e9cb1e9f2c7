"""Write permission rules made in a session into the config files, and take them out.

"Always" in the approval modal adds a rule to the user's config (``[permissions]
allow``); ``/permissions`` removes one from whichever file holds it. The TOML is edited
with tomlkit, so comments, order and layout survive, and written atomically
(:func:`~tui_agent.config.atomic.write_text`). Only TOML files hold rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.config.errors import ConfigError
from tui_agent.config.locate import toml_line
from tui_agent.config.reading import read_config_text
from tui_agent.config.rule_text import RuleEntry
from tui_agent.config.rule_where import rule_line
from tui_agent.config.writeback import replace_file


class TomlRuleFiles:
    """Rules kept in TOML files: new ones in ``user`` (created when missing). ``write``
    puts each changed file's new text in place (default
    :func:`~tui_agent.config.writeback.replace_file`; the app's keeps a trusted project
    trusted over its own edit, :func:`~tui_agent.config.trust.trusted_writer`)."""

    def __init__(self, user: Path, write: Callable[[Path, str], None] | None = None) -> None:
        self.user = user
        self.write = write or replace_file

    def add(self, kind: str, text: str) -> RuleEntry:
        """Append ``text`` to ``[permissions] KIND`` of the user's config (kept once);
        returns it with its file and line. Raises :class:`ConfigError` naming the file."""
        doc, source = self._parse(self.user, missing_ok=True)
        table = doc.get("permissions")
        if table is None:
            import tomlkit

            table = tomlkit.table()
            doc["permissions"] = table
        rules = table.get(kind)
        if rules is None:
            table[kind] = [text]
        elif text not in [str(r) for r in rules]:
            rules.append(text)
        new = _dump(doc)
        if new != source:
            self.write(self.user, new)
        line = rule_line(new, text, toml_line(new, ("permissions", kind)) or 0)
        return RuleEntry(kind, text, self.user, line)

    def remove(self, entry: RuleEntry) -> None:
        """Take ``entry`` out of its file. Raises :class:`ConfigError` naming the file."""
        if entry.file is None:
            return
        if entry.file.suffix.lower() != ".toml":
            raise ConfigError("rules are only edited in TOML files", entry.file)
        doc, _ = self._parse(entry.file)
        rules = (doc.get("permissions") or {}).get(entry.kind)
        found = [i for i, r in enumerate(rules or ()) if str(r) == entry.text]
        if not found or rules is None:
            raise ConfigError(f"permissions.{entry.kind} holds no rule {entry.text!r} "
                              "any more (was the file edited?)", entry.file)
        del rules[found[0]]
        self.write(entry.file, _dump(doc))

    def _parse(self, file: Path, *, missing_ok: bool = False) -> tuple[Any, str]:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            text = read_config_text(file)
        except ConfigError:
            if not (missing_ok and not file.exists()):
                raise
            text = ""
        try:
            return tomlkit.parse(text), text
        except TOMLKitError as exc:
            raise ConfigError(f"not valid TOML: {exc}", file) from None


def _dump(doc: Any) -> str:
    import tomlkit

    return tomlkit.dumps(doc)
