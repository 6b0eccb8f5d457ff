"""One settings file as the installer sees it: read values by path, set or remove one member.

Three formats, each edited in place so every byte the installer does not own stays as it was:
JSON and JSONC (:mod:`domestique.hooks.jsonc`), TOML (``tomlkit``, which keeps comments and
layout) and ``.env`` files (one ``KEY=value`` line per setting). A file that does not parse
raises :class:`SettingsError`; the caller leaves it untouched.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from domestique.hooks import jsonc

Path_ = tuple[str, ...]
_MISSING = object()


class SettingsError(ValueError):
    """The settings file cannot be read or edited safely."""


def kind_of(path: Path) -> str:
    """``json`` | ``toml`` | ``env``, from the file name."""
    if path.suffix == ".toml":
        return "toml"
    if path.name == ".env":
        return "env"
    return "json"


def load(kind: str, text: str, path: Path) -> dict[str, Any]:
    """The file's value as plain Python (an empty file is an empty object)."""
    if not text.strip():
        return {}
    try:
        if kind == "toml":
            return tomllib.loads(text)
        if kind == "env":
            return _env_values(text)
        value = jsonc.loads(text)
    except (jsonc.JSONCError, tomllib.TOMLDecodeError) as exc:
        what = "TOML" if kind == "toml" else "JSON"
        raise SettingsError(f"{path} is not valid {what} ({exc}); left unchanged") from exc
    if not isinstance(value, dict):
        raise SettingsError(f"{path} does not hold a JSON object; left unchanged")
    return value


def get(doc: Any, path: Path_) -> Any:
    """The value at ``path`` in a loaded document, or :data:`MISSING`."""
    node = doc
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return _MISSING
        node = node[step]
    return node


MISSING = _MISSING


def first_missing(doc: Any, path: Path_) -> Path_ | None:
    """The shortest prefix of ``path`` that does not exist yet (None: the path exists)."""
    node = doc
    for i, step in enumerate(path):
        if not isinstance(node, dict) or step not in node:
            return path[: i + 1]
        node = node[step]
    return None


def set_value(kind: str, text: str, path: Path_, value: Any) -> str:
    """``text`` with ``path`` set to ``value``, everything else as it was."""
    if kind == "json":
        return jsonc.set_member(text or "{}\n", path, value)
    if kind == "env":
        return _env_set(text, path[0], str(value))
    return _toml_set(text, path, value)


def remove(kind: str, text: str, path: Path_) -> str:
    """``text`` without ``path`` (unchanged when absent)."""
    if kind == "json":
        return jsonc.remove_member(text, path)
    if kind == "env":
        return _env_remove(text, path[0])
    return _toml_remove(text, path)


# --- TOML -----------------------------------------------------------------------------------


def _toml_set(text: str, path: Path_, value: Any) -> str:
    import tomlkit
    from tomlkit.items import Table

    doc = tomlkit.parse(text)
    node: Any = doc
    for i, step in enumerate(path[:-1]):
        if step not in node:
            # A table that only holds tables is written as a super table: no bare header.
            holds_tables = len(path) - i > 2
            node[step] = tomlkit.table(is_super_table=holds_tables)
        node = node[step]
        if not isinstance(node, (Table, dict)):
            raise SettingsError(f"{'.'.join(path[: i + 1])} is not a table")
    node[path[-1]] = value
    return tomlkit.dumps(doc)


def _toml_remove(text: str, path: Path_) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    node: Any = doc
    for step in path[:-1]:
        if not hasattr(node, "__contains__") or step not in node:
            return text
        node = node[step]
    if not hasattr(node, "__contains__") or path[-1] not in node:
        return text
    del node[path[-1]]
    return _tidy(tomlkit.dumps(doc), text)


def _tidy(text: str, before: str) -> str:
    """Collapse the blank lines a removed table leaves behind (never more than one), and end
    the file the way it ended before."""
    text = re.sub(r"\n{3,}", "\n\n", text)
    ending = len(before) - len(before.rstrip("\n"))
    return text.rstrip("\n") + "\n" * ending if text.strip() else ""


# --- .env -----------------------------------------------------------------------------------

_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def _env_values(text: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for line in text.splitlines():
        m = _ENV_LINE.match(line)
        if m and not line.lstrip().startswith("#"):
            raw = m.group(2)
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                raw = raw[1:-1]
            values[m.group(1)] = raw
    return values


def _env_set(text: str, key: str, value: str) -> str:
    line = f"{key}={value}"
    lines = text.splitlines(keepends=True)
    for i, old in enumerate(lines):
        m = _ENV_LINE.match(old)
        if m and m.group(1) == key and not old.lstrip().startswith("#"):
            lines[i] = line + ("\n" if old.endswith("\n") else "")
            return "".join(lines)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line + "\n"


def _env_remove(text: str, key: str) -> str:
    lines = text.splitlines(keepends=True)
    kept = [
        old
        for old in lines
        if not (
            (m := _ENV_LINE.match(old)) and m.group(1) == key and not old.lstrip().startswith("#")
        )
    ]
    return "".join(kept)


def dumps_compact(value: Any) -> str:
    """A value for a message (never a secret: settings the installer writes are not)."""
    return json.dumps(value, ensure_ascii=False)
