"""Writing a changed JSON value back into the text it was parsed from, changing only what changed.

Pure. Tool-call ``arguments`` travel as a JSON *string*: the model wrote that text and the
agent resends it. When a secret inside is redacted, re-serialising the whole value would
change its spacing, key order quirks and escapes too (and the provider sees another text than
the model wrote). :func:`patch_json_text` instead finds, for each string, key and number that
differs between the text and the new value, the smallest changed run of characters and
replaces only the raw characters of that run (the new characters escaped as JSON needs);
everything else, escapes included, stays byte for byte.

The text must be JSON that :func:`json.loads` accepted without duplicate keys (the walker's
condition for parsing it at all); the new value must have the same shape, with strings changed
and numbers possibly turned into strings (a redacted number becomes its placeholder).
"""

from __future__ import annotations

import json
import re
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")
_DECODER = json.JSONDecoder()


def _string_at(text: str, pos: int) -> tuple[str, int]:
    """The decoded JSON string starting at ``text[pos]`` (its opening quote), and its end."""
    value, end = _DECODER.raw_decode(text, pos)
    if not isinstance(value, str):
        raise ValueError(f"not a string at {pos}")
    return value, end


# A parsed token: ("s", start, end) a string, ("n", start, end) a number or literal,
# ("a", [items]) an array, ("o", [(key token, value token)]) an object.
Token = tuple[Any, ...]


class _Parser:
    __slots__ = ("pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        match = _WS.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def value(self) -> Token:
        self.skip()
        text, pos = self.text, self.pos
        char = text[pos : pos + 1]
        if char == '"':
            _, end = _string_at(text, pos)
            self.pos = end
            return ("s", pos, end)
        if char == "{":
            return self.obj()
        if char == "[":
            return self.array()
        for literal in _LITERALS:
            if text.startswith(literal, pos):
                self.pos = pos + len(literal)
                return ("n", pos, self.pos)
        match = _NUMBER.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"not JSON at {pos}")
        self.pos = match.end()
        return ("n", pos, self.pos)

    def expect(self, char: str) -> None:
        self.skip()
        if self.text[self.pos : self.pos + 1] != char:
            raise ValueError(f"expected {char!r} at {self.pos}")
        self.pos += 1

    def peek(self, char: str) -> bool:
        self.skip()
        if self.text[self.pos : self.pos + 1] == char:
            self.pos += 1
            return True
        return False

    def obj(self) -> Token:
        self.pos += 1
        members: list[tuple[Token, Token]] = []
        if self.peek("}"):
            return ("o", members)
        while True:
            key = self.value()
            if key[0] != "s":
                raise ValueError(f"object key is not a string at {key[1]}")
            self.expect(":")
            members.append((key, self.value()))
            if self.peek("}"):
                return ("o", members)
            self.expect(",")

    def array(self) -> Token:
        self.pos += 1
        items: list[Token] = []
        if self.peek("]"):
            return ("a", items)
        while True:
            items.append(self.value())
            if self.peek("]"):
                return ("a", items)
            self.expect(",")


def _char_offsets(raw: str) -> list[int]:
    """The offset in ``raw`` (a JSON string token with its quotes) where each decoded
    character starts, plus the offset of the closing quote (one entry more than characters)."""
    offsets: list[int] = []
    i, end = 1, len(raw) - 1
    while i < end:
        offsets.append(i)
        if raw[i] != "\\":
            i += 1
        elif raw[i + 1] != "u":
            i += 2
        else:
            code = int(raw[i + 2 : i + 6], 16)
            pair = raw[i + 6 : i + 8] == "\\u" and 0xD800 <= code < 0xDC00
            if pair and 0xDC00 <= int(raw[i + 8 : i + 12], 16) < 0xE000:
                i += 12  # a surrogate pair decodes to one character
            else:
                i += 6
    offsets.append(end)
    return offsets


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _string_patch(text: str, token: Token, new: str) -> tuple[int, int, str] | None:
    """(start, end, replacement) turning the string token into ``new``; None if unchanged."""
    _, start, end = token
    old, _ = _string_at(text, start)
    if old == new:
        return None
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    offsets = _char_offsets(text[start:end])
    lo = start + offsets[head]
    hi = start + offsets[len(old) - tail]
    return lo, hi, _escape(new[head : len(new) - tail])


def _collect(text: str, token: Token, value: Any, out: list[tuple[int, int, str]]) -> None:
    kind = token[0]
    if kind == "s":
        if not isinstance(value, str):
            raise ValueError("a string became another type")
        patch = _string_patch(text, token, value)
        if patch is not None:
            out.append(patch)
    elif kind == "n":
        if isinstance(value, str):  # a redacted number: its placeholder text, as a string
            out.append((token[1], token[2], json.dumps(value, ensure_ascii=False)))
    elif kind == "a":
        if not isinstance(value, list) or len(value) != len(token[1]):
            raise ValueError("an array changed shape")
        for item, v in zip(token[1], value, strict=True):
            _collect(text, item, v, out)
    else:
        if not isinstance(value, dict) or len(value) != len(token[1]):
            raise ValueError("an object changed shape")
        for (key_token, value_token), (key, v) in zip(token[1], value.items(), strict=True):
            _collect(text, key_token, key, out)
            _collect(text, value_token, v, out)


def patch_json_text(text: str, value: Any) -> str:
    """``text`` with every string, key and number that differs from ``value`` rewritten in
    place (only the changed characters); raises ValueError when the shapes differ."""
    parser = _Parser(text)
    token = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise ValueError(f"extra data at {parser.pos}")
    patches: list[tuple[int, int, str]] = []
    _collect(text, token, value, patches)
    out = text
    for lo, hi, replacement in sorted(patches, reverse=True):
        out = out[:lo] + replacement + out[hi:]
    return out
