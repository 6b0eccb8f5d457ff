"""Edit a JSON (or JSONC: ``//`` and ``/* */`` comments, trailing commas) settings file in place.

A host's settings file belongs to the developer: ``domestique install`` changes only the members
it adds or removes and leaves every other byte alone — comments, indentation, key order, blank
lines. :func:`parse` reads the text into nodes that remember where each value sits;
:func:`set_member`, :func:`append_item`, :func:`remove_member` and :func:`remove_item` return the
text with one splice made, indented like its neighbours. Anything that is not JSON(C) raises
:class:`JSONCError` (the installer then leaves the file untouched).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JSONCError(ValueError):
    """The text is not JSON (with comments); ``pos`` is where reading stopped."""

    def __init__(self, msg: str, pos: int) -> None:
        super().__init__(f"{msg} at offset {pos}")
        self.msg = msg
        self.pos = pos


@dataclass(slots=True)
class Node:
    """A value and its span ``text[start:end]``; objects and arrays keep their children."""

    start: int
    end: int
    value: Any = None
    members: list[tuple[str, int, Node]] = field(default_factory=list)  # key, key start, value
    items: list[Node] = field(default_factory=list)
    kind: str = "scalar"  # scalar | object | array


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        """Skip whitespace and comments."""
        t, n = self.text, len(self.text)
        while self.pos < n:
            c = t[self.pos]
            if c in " \t\r\n\ufeff":
                self.pos += 1
            elif t.startswith("//", self.pos):
                nl = t.find("\n", self.pos)
                self.pos = n if nl < 0 else nl + 1
            elif t.startswith("/*", self.pos):
                close = t.find("*/", self.pos + 2)
                if close < 0:
                    raise JSONCError("unterminated comment", self.pos)
                self.pos = close + 2
            else:
                return

    def value(self, depth: int = 0) -> Node:
        if depth > 200:
            raise JSONCError("nested too deeply", self.pos)
        self.skip()
        t, start = self.text, self.pos
        if start >= len(t):
            raise JSONCError("unexpected end", start)
        c = t[start]
        if c == "{":
            return self._object(depth)
        if c == "[":
            return self._array(depth)
        if c == '"':
            s, end = self._string()
            return Node(start, end, s)
        for word, lit in _LITERALS.items():
            if t.startswith(word, start):
                self.pos = start + len(word)
                return Node(start, self.pos, lit)
        m = _NUMBER.match(t, start)
        if not m:
            raise JSONCError("expected a value", start)
        self.pos = m.end()
        return Node(start, self.pos, json.loads(m.group()))

    def _string(self) -> tuple[str, int]:
        try:
            s, end = json.decoder.scanstring(self.text, self.pos + 1)  # type: ignore[attr-defined]
        except json.JSONDecodeError as exc:
            raise JSONCError(exc.msg, exc.pos) from exc
        self.pos = end
        return str(s), end

    def _object(self, depth: int) -> Node:
        node = Node(self.pos, self.pos, {}, kind="object")
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise JSONCError("expected a member name", self.pos)
            key_start = self.pos
            key, _ = self._string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise JSONCError("expected ':'", self.pos)
            self.pos += 1
            child = self.value(depth + 1)
            node.members.append((key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise JSONCError("expected ',' or '}'", self.pos)
        self.pos += 1
        node.end = self.pos
        return node

    def _array(self, depth: int) -> Node:
        node = Node(self.pos, self.pos, [], kind="array")
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            child = self.value(depth + 1)
            node.items.append(child)
            node.value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise JSONCError("expected ',' or ']'", self.pos)
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str) -> Node:
    """The document's root node; raises :class:`JSONCError` on anything but one JSON(C) value."""
    reader = _Reader(text)
    root = reader.value()
    reader.skip()
    if reader.pos != len(text):
        raise JSONCError("extra data after the document", reader.pos)
    return root


def loads(text: str) -> Any:
    """The Python value of a JSON(C) text."""
    return parse(text).value


# --- layout ---------------------------------------------------------------------------------


def _line_indent(text: str, pos: int) -> str:
    """The whitespace that starts the line holding ``pos``."""
    line_start = text.rfind("\n", 0, pos) + 1
    m = re.match(r"[ \t]*", text[line_start:])
    return m.group() if m else ""


def _indent_unit(text: str, root: Node) -> str:
    """The document's indentation step (two spaces when it cannot be told)."""
    stack = [root]
    while stack:
        node = stack.pop()
        children = [c for _, _, c in node.members] or node.items
        first = node.members[0][1] if node.members else (node.items[0].start if node.items else -1)
        if first >= 0 and "\n" in text[node.start : first]:
            outer, inner = _line_indent(text, node.start), _line_indent(text, first)
            if inner.startswith(outer) and len(inner) > len(outer):
                return inner[len(outer) :]
        stack.extend(c for c in children if c.kind != "scalar")
    return "  "


def _render(value: Any, indent: str, unit: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, ensure_ascii=False, indent=unit)
    return text.replace("\n", "\n" + indent)


def _multiline(text: str, node: Node) -> bool:
    return "\n" in text[node.start : node.end]


def _find(root: Node, path: tuple[str | int, ...]) -> tuple[Node | None, int]:
    """The node at ``path`` (or None) and how many path steps exist."""
    node = root
    for i, step in enumerate(path):
        if isinstance(step, str) and node.kind == "object":
            nxt = next((c for k, _, c in reversed(node.members) if k == step), None)
        elif isinstance(step, int) and node.kind == "array" and 0 <= step < len(node.items):
            nxt = node.items[step]
        else:
            nxt = None
        if nxt is None:
            return node, i
        node = nxt
    return node, len(path)


def _insert(text: str, container: Node, piece_for: Any, unit: str) -> str:
    """Insert a new last child into ``container`` (an object or array node)."""
    children = [c for _, _, c in container.members] or container.items
    close = container.end - 1
    multiline = _multiline(text, container)
    if children:
        last = children[-1]
        first_pos = container.members[-1][1] if container.members else last.start
        indent = _line_indent(text, first_pos)
        after = last.end
        # A trailing comma already there (JSONC) is kept; otherwise one is added.
        rest = text[after:close]
        stripped = _strip_comments(rest).strip()
        comma, tail = ",", ""
        if stripped.startswith(","):
            # A trailing comma (JSONC) stays a trailing comma, after the new last child.
            after = after + rest.index(",") + 1
            comma, tail = "", ","
        if multiline:
            body = piece_for(indent, multiline=True)
            return f"{text[:after]}{comma}\n{indent}{body}{tail}{text[after:]}"
        body = piece_for(indent, multiline=False)
        return f"{text[:after]}{comma} {body}{tail}{text[after:]}"
    # An empty container opens onto lines of its own.
    outer = _line_indent(text, container.start)
    inner = outer + unit
    body = piece_for(inner, multiline=True)
    return f"{text[: container.start + 1]}\n{inner}{body}\n{outer}{text[close:]}"


def _strip_comments(s: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", s, flags=re.S)


def set_member(text: str, path: tuple[str, ...], value: Any) -> str:
    """``text`` with the member at ``path`` set to ``value`` (objects created on the way)."""
    root = parse(text)
    if root.kind != "object":
        raise JSONCError("the document is not an object", 0)
    unit = _indent_unit(text, root)
    node, found = _find(root, path)
    assert node is not None
    if found == len(path):
        indent = _line_indent(text, node.start)
        body = _render(value, indent, unit, _multiline(text, node) or node.kind == "scalar")
        if node.kind == "scalar" and isinstance(value, (dict, list)) and value:
            body = _render(value, indent, unit, True)
        return text[: node.start] + body + text[node.end :]
    if node.kind != "object":
        raise JSONCError(f"{'.'.join(map(str, path[:found]))} is not an object", node.start)
    nested: Any = value
    for step in reversed(path[found + 1 :]):
        nested = {step: nested}
    key = json.dumps(path[found], ensure_ascii=False)

    def piece(indent: str, *, multiline: bool) -> str:
        return f"{key}: {_render(nested, indent, unit, multiline)}"

    return _insert(text, node, piece, unit)


def append_item(text: str, path: tuple[str, ...], item: Any) -> str:
    """``text`` with ``item`` appended to the array at ``path`` (created when absent)."""
    root = parse(text)
    node, found = _find(root, path)
    if node is None or found < len(path):
        return set_member(text, path, [item])
    if node.kind != "array":
        raise JSONCError(f"{'.'.join(path)} is not an array", node.start)
    unit = _indent_unit(text, root)

    def piece(indent: str, *, multiline: bool) -> str:
        return _render(item, indent, unit, multiline)

    return _insert(text, node, piece, unit)


def _cut(text: str, container: Node, index: int) -> str:
    """Remove child ``index`` of ``container`` with its comma and, when it had lines of its own,
    those lines."""
    children = [c for _, _, c in container.members] or container.items
    starts = [k for _, k, _ in container.members] or [c.start for c in container.items]
    start, end = starts[index], children[index].end
    line_start = text.rfind("\n", 0, start) + 1
    if len(children) == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    rest = text[end : container.end - 1]
    trailing_comma = _strip_comments(rest).strip().startswith(",")
    if index < len(children) - 1 or trailing_comma:
        # Up to the next child's line (or the next child itself when on the same line).
        nxt = starts[index + 1] if index < len(children) - 1 else end + rest.index(",") + 1
        if index == len(children) - 1:
            # The last child with a trailing comma: its whole line goes when it had one.
            line_end = text.find("\n", nxt)
            if text[line_start:start].strip() == "" and text[nxt:line_end].strip() == "":
                return text[:line_start] + text[line_end + 1 :]
            # On one line: from just after the previous child's comma.
            if index == 0:
                return text[: container.start + 1] + text[nxt:]
            prev_end = children[index - 1].end
            comma = text.find(",", prev_end, start)
            return text[: comma + 1 if comma >= 0 else start] + text[nxt:]
        if text[line_start:start].strip() == "" and "\n" in text[end:nxt]:
            next_line = text.rfind("\n", 0, nxt) + 1
            return text[:line_start] + text[next_line:]
        return text[:start] + text[nxt:]
    # The last child: take the comma after the previous child with it.
    prev_end = children[index - 1].end
    between = text[prev_end:start]
    comma = between.find(",")
    cut_from = prev_end + comma if comma >= 0 else prev_end
    return text[:cut_from] + text[end:]


def remove_member(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the member at ``path`` (unchanged when there is none)."""
    root = parse(text)
    parent, found = _find(root, path[:-1])
    if parent is None or found < len(path) - 1 or parent.kind != "object":
        return text
    for i in range(len(parent.members) - 1, -1, -1):
        if parent.members[i][0] == path[-1]:
            return _cut(text, parent, i)
    return text


def remove_item(text: str, path: tuple[str | int, ...], index: int) -> str:
    """``text`` without item ``index`` of the array at ``path``."""
    root = parse(text)
    node, found = _find(root, path)
    if node is None or found < len(path) or node.kind != "array" or index >= len(node.items):
        return text
    return _cut(text, node, index)
