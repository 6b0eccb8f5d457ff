"""Positions of keys and values in a TOML document, for ``file:line:col`` error messages.

:mod:`tomllib` reports positions for syntax errors only; the policy validator finds its errors
(unknown key, wrong type, unknown reason code) on the parsed data, by *path*
(``("rules", 2, "codes", 1)``). This module walks the same text once more and maps every path to
the line and column where its key and its value start. It assumes the text already parsed with
:mod:`tomllib` (so it is valid TOML) and never raises on text that did not: a position it cannot
find falls back to the nearest enclosing path, then to ``1:1``.
"""

from __future__ import annotations

import bisect

from domestique.frozen_class import dataclass, field

PathPart = str | int
Path = tuple[PathPart, ...]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


@dataclass
class Positions:
    """Where each path's key and value start (1-based line and column)."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    # Keys written a second time (tomllib says only "Cannot overwrite a value").
    duplicates: list[tuple[Path, tuple[int, int]]] = field(default_factory=list)

    def of_key(self, path: Path) -> tuple[int, int]:
        """The key of ``path`` (a table header for an array-of-tables element), else nearest."""
        return self._nearest(path, prefer_value=False)

    def of_value(self, path: Path) -> tuple[int, int]:
        """The value of ``path``, else its key, else the nearest enclosing path."""
        return self._nearest(path, prefer_value=True)

    def _nearest(self, path: Path, *, prefer_value: bool) -> tuple[int, int]:
        first, second = (self.values, self.keys) if prefer_value else (self.keys, self.values)
        p = path
        while p:
            for table in (first, second):
                pos = table.get(p)
                if pos is not None:
                    return pos
            p = p[:-1]
        return (1, 1)


class _Walker:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.line_starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.pos = Positions()
        self.aot_len: dict[Path, int] = {}

    def at(self, i: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, i) - 1
        return (line + 1, i - self.line_starts[line] + 1)

    # -- lexical helpers -------------------------------------------------------------------
    def skip_space(self, i: int, *, newlines: bool) -> int:
        s, n = self.s, self.n
        while i < n:
            ch = s[i]
            if ch in " \t\r" or (newlines and ch == "\n"):
                i += 1
            elif ch == "#":
                while i < n and s[i] != "\n":
                    i += 1
            else:
                break
        return i

    def read_basic(self, i: int) -> tuple[str, int]:
        """A one-line basic string starting at the opening quote: (its value, index after)."""
        s, n = self.s, self.n
        out: list[str] = []
        i += 1
        while i < n and s[i] != '"':
            if s[i] == "\\" and i + 1 < n:
                esc = s[i + 1]
                if esc in _ESCAPES:
                    out.append(_ESCAPES[esc])
                    i += 2
                elif esc in "uU":
                    width = 4 if esc == "u" else 8
                    try:
                        out.append(chr(int(s[i + 2 : i + 2 + width], 16)))
                    except ValueError:
                        out.append("?")
                    i += 2 + width
                else:
                    out.append(esc)
                    i += 2
            else:
                out.append(s[i])
                i += 1
        return "".join(out), i + 1

    def read_literal(self, i: int) -> tuple[str, int]:
        end = self.s.find("'", i + 1)
        end = self.n if end < 0 else end
        return self.s[i + 1 : end], end + 1

    def skip_string(self, i: int) -> int:
        s = self.s
        for quote in ('"""', "'''"):
            if s.startswith(quote, i):
                j = i + 3
                while True:
                    k = s.find(quote, j)
                    if k < 0:
                        return self.n
                    if quote == '"""' and _escaped(s, k):
                        j = k + 1
                        continue
                    # A closing delimiter may be followed by up to two more quote characters.
                    end, extra = k + 3, 0
                    while end < self.n and s[end] == quote[0] and extra < 2:
                        end, extra = end + 1, extra + 1
                    return end
        if s[i] == '"':
            return self.read_basic(i)[1]
        return self.read_literal(i)[1]

    def read_key(self, i: int) -> tuple[list[str], list[int], int]:
        """A dotted key: its parts, where each part starts, and the index after it."""
        parts: list[str] = []
        starts: list[int] = []
        s, n = self.s, self.n
        while i < n:
            i = self.skip_space(i, newlines=False)
            starts.append(i)
            if i < n and s[i] == '"':
                part, i = self.read_basic(i)
            elif i < n and s[i] == "'":
                part, i = self.read_literal(i)
            else:
                j = i
                while j < n and s[j] in _BARE:
                    j += 1
                part, i = s[i:j], j
            parts.append(part)
            i = self.skip_space(i, newlines=False)
            if i < n and s[i] == ".":
                i += 1
                continue
            break
        return parts, starts, i

    # -- structure -------------------------------------------------------------------------
    def resolve(self, parts: list[str]) -> Path:
        """A header's key parts → a path, stepping into the last element of arrays of tables."""
        path: Path = ()
        for part in parts:
            path = (*path, part)
            count = self.aot_len.get(path)
            if count:
                path = (*path, count - 1)
        return path

    def value(self, i: int, path: Path) -> int:
        s, n = self.s, self.n
        self.pos.values.setdefault(path, self.at(i))
        if i >= n:
            return i
        ch = s[i]
        if ch == "[":
            i += 1
            index = 0
            while True:
                i = self.skip_space(i, newlines=True)
                if i >= n or s[i] == "]":
                    return i + 1
                i = self.value(i, (*path, index))
                index += 1
                i = self.skip_space(i, newlines=True)
                if i < n and s[i] == ",":
                    i += 1
        if ch == "{":
            i += 1
            while True:
                i = self.skip_space(i, newlines=False)
                if i >= n or s[i] == "}":
                    return i + 1
                i = self.key_value(i, path)
                i = self.skip_space(i, newlines=False)
                if i < n and s[i] == ",":
                    i += 1
        if ch in "\"'":
            return self.skip_string(i)
        while i < n and s[i] not in ",]}#\n":
            i += 1
        return i

    def key_value(self, i: int, table: Path) -> int:
        parts, starts, i = self.read_key(i)
        path = table
        for part, start in zip(parts, starts, strict=True):
            path = (*path, part)
            self.pos.keys.setdefault(path, self.at(start))
        if path in self.pos.values:
            self.pos.duplicates.append((path, self.at(starts[-1])))
        i = self.skip_space(i, newlines=False)
        if i < self.n and self.s[i] == "=":
            i += 1
        i = self.skip_space(i, newlines=False)
        return self.value(i, path)

    def document(self) -> Positions:
        s, n = self.s, self.n
        table: Path = ()
        i = 0
        while True:
            i = self.skip_space(i, newlines=True)
            if i >= n:
                return self.pos
            if s.startswith("[[", i):
                parts, starts, j = self.read_key(i + 2)
                parent = self.resolve(parts[:-1])
                array = (*parent, parts[-1])
                count = self.aot_len.get(array, 0)
                self.aot_len[array] = count + 1
                table = (*array, count)
                self.pos.keys.setdefault(array, self.at(starts[-1]))
                self.pos.keys[table] = self.at(i)
                i = j + 2
            elif s[i] == "[":
                parts, starts, j = self.read_key(i + 1)
                table = self.resolve(parts)
                self.pos.keys.setdefault(table, self.at(starts[-1]))
                i = j + 1
            else:
                before = i
                i = self.key_value(i, table)
                if i <= before:  # not TOML after all: never loop forever
                    i = before + 1
            # Rest of the line (trailing comment).
            while i < n and s[i] != "\n":
                i += 1


def _escaped(s: str, k: int) -> bool:
    backslashes = 0
    while k - 1 - backslashes >= 0 and s[k - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def locate(text: str) -> Positions:
    """Map every key and value path in ``text`` (valid TOML) to its (line, column)."""
    try:
        return _Walker(text).document()
    except (IndexError, ValueError, RecursionError):
        return Positions()


def line_col_of_offset(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1
