"""Write a person's approval choices back to the config file a server came from.

"Always allow" in the approval modal and the tool toggles of the servers screen
add a tool name to (or take it out of) one of a server's lists (``auto``,
``ask``, ``allow``, ``deny``). A TOML file is edited with tomlkit, so the
user's comments, order and formatting survive; a JSON file (``mcpServers`` and
``servers`` formats) is rewritten with the indentation it had and the key its
client uses (``alwaysAllow`` for Claude Desktop and Cline, and so on). Writes
are atomic: a crash leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.config.atomic import write_text
from tui_agent.config.errors import ConfigError
from tui_agent.config.reading import Origin, read_config_text

Lists = ("auto", "ask", "allow", "deny")

# Our list name -> the JSON keys other clients use for it, the first being the one to
# create. mcp_json reads all of them.
_JSON_KEYS: dict[str, tuple[str, ...]] = {
    "auto": ("alwaysAllow", "autoApprove", "tools_to_auto_execute", "auto"),
    "allow": ("tools_to_execute", "allow"),
    "ask": ("ask",),
    "deny": ("deny",),
}


def edit_list(origin: Origin, field: str, tool: str, *, add: bool,
              write: Callable[[Path, str], None] | None = None) -> None:
    """Add ``tool`` to (or remove it from) the server's ``field`` list in its file.
    ``write`` puts the new text in place (default :func:`replace_file`; the app's keeps a
    trusted project trusted, :func:`~tui_agent.config.trust.trusted_writer`).

    Raises :class:`ConfigError` naming the file when it cannot be read, parsed or written."""
    if field not in Lists:
        raise ValueError(f"not a tool list: {field}")
    text = read_config_text(origin.file)
    if origin.file.suffix.lower() == ".json":
        new = _edit_json(text, origin, field, tool, add)
    else:
        new = _edit_toml(text, origin, field, tool, add)
    if new != text:
        (write or replace_file)(origin.file, new)


def _walk(doc: Any, path: tuple[str | int, ...], file: Path) -> Any:
    node = doc
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            where = ".".join(str(p) for p in path)
            raise ConfigError(f"cannot find {where} any more (was the file edited?)",
                              file) from None
    return node


def _edit_toml(text: str, origin: Origin, field: str, tool: str, add: bool) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigError(f"not valid TOML: {exc}", origin.file) from None
    table = _walk(doc, origin.path, origin.file)
    current = table.get(field)
    if current is None:
        if add:
            table[field] = [tool]
        return tomlkit.dumps(doc)
    found = [i for i, value in enumerate(current) if str(value) == tool]
    if add and not found:
        current.append(tool)
    for index in ([] if add else reversed(found)):
        del current[index]
    return tomlkit.dumps(doc)


def _edit_json(text: str, origin: Origin, field: str, tool: str, add: bool) -> str:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"not valid JSON: {exc}", origin.file) from None
    entry = _walk(doc, origin.path, origin.file)
    if not isinstance(entry, dict):
        raise ConfigError(f"{'.'.join(map(str, origin.path))} is not an object", origin.file)
    keys = [k for k in _JSON_KEYS[field] if isinstance(entry.get(k), list)]
    if add:
        key = keys[0] if keys else _JSON_KEYS[field][0]
        values = entry.setdefault(key, [])
        if tool not in values:
            values.append(tool)
    for key in ([] if add else keys):
        entry[key] = [v for v in entry[key] if v != tool]
    indent = _json_indent(text)
    return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"


def _json_indent(text: str) -> int | str:
    found = re.search(r"\n([ \t]+)\S", text)
    if not found:
        return 2
    unit = found.group(1)
    return unit if "\t" in unit else len(unit)


def replace_file(path: Path, text: str) -> None:
    """Write ``text`` over ``path`` atomically. Raises :class:`ConfigError` naming it."""
    try:
        write_text(path, text)
    except OSError as exc:
        raise ConfigError(f"cannot write it: {exc}", path) from None
