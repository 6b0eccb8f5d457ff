"""Decoding shell word syntax: backslash escapes, double-quoted text, ANSI-C ``$'…'`` strings."""

from __future__ import annotations

_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_HEX = "0123456789abcdefABCDEF"
_OCT = "01234567"


def _take(s: str, i: int, alphabet: str, limit: int) -> tuple[str, int]:
    j = i
    while j < len(s) and j - i < limit and s[j] in alphabet:
        j += 1
    return s[i:j], j


def decode_ansi_c(body: str) -> str:
    """Decode the body of ``$'…'`` the way bash does (``\\x63url`` -> ``curl``).

    Unknown escapes stay as written; a NUL ends the string (bash truncates there).
    """
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e in _OCT:
            digits, i = _take(body, i - 1, _OCT, 3)
            out.append(chr(int(digits, 8) & 0xFF))
        elif e == "x":
            digits, j = _take(body, i, _HEX, 2)
            if digits:
                out.append(chr(int(digits, 16)))
                i = j
            else:
                out.append("\\x")
        elif e in "uU":
            digits, j = _take(body, i, _HEX, 4 if e == "u" else 8)
            code = int(digits, 16) if digits else -1
            if 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
                out.append(chr(code))
                i = j
            else:
                out.append("\\" + e)
        elif e == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    text = "".join(out)
    nul = text.find("\x00")
    return text if nul < 0 else text[:nul]


def _unescape(raw: str, escapable: str | None) -> str:
    """Drop the backslash of each escape; ``escapable`` None means every character escapes.

    A backslash-newline disappears. Outside quotes a lone trailing backslash is dropped; inside
    double quotes a backslash before a character that does not escape stays literal.
    """
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n and (escapable is None or raw[i + 1] in escapable):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if c != "\\" or escapable is not None:
            out.append(c)
        i += 1
    return "".join(out)


def unescape_unquoted(raw: str) -> str:
    """An unquoted word: ``\\X`` is X, a backslash-newline disappears."""
    return _unescape(raw, None)


def unescape_double_quoted(raw: str) -> str:
    """Text inside ``"…"``: only ``\\\\ \\" \\$ \\``` and backslash-newline are escapes."""
    return _unescape(raw, '\\"$`\n')


def join_continuations(text: str) -> tuple[str, list[int] | None]:
    """Remove backslash-newline outside single quotes, as bash does before splitting words.

    tree-sitter-bash splits ``rm -r\\<NL>f`` into two words where bash reads ``-rf``; joining
    first closes that parser differential. Returns the new text and, when anything changed, a map
    from each new index to its index in ``text`` (for spans).
    """
    if "\\\n" not in text:
        return text, None
    out: list[str] = []
    index: list[int] = []
    i, n = 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "'" and quote == "":
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else (quote or '"')
        elif c == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out += [c, text[i + 1]]
            index += [i, i + 1]
            i += 2
            continue
        out.append(c)
        index.append(i)
        i += 1
    index.append(n)
    return "".join(out), index
