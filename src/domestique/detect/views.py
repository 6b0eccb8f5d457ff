"""Views of the scanned text that undo evasion, each with a map back to the original offsets.

A secret hidden with zero-width characters, soft hyphens, full-width or mathematical look-alike
letters, Cyrillic/Greek homoglyphs next to Latin letters, JSON/URL/HTML escapes, or wrapped in
base64/hex is still the secret. The engine scans these views and reports every finding at its
span in the ORIGINAL text. Views are built only when the text contains something to undo, so
plain ASCII text costs one ``isascii`` check and one regex pass.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

import re2

from domestique.detect.re2opts import RE2_OPTIONS, iter_spans, match_spans

# Characters removed outright: zero-width, joiners, soft hyphen, word joiner, BOM, bidi controls,
# Mongolian vowel separator, invisible operators, variation selectors and tag characters.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f"
)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")

# Homoglyphs that NFKC keeps (different scripts): folded only next to an ASCII letter or digit,
# so Russian or Greek prose stays as it is.
_CONFUSABLES = {
    "а": "a", "в": "B", "е": "e", "к": "k", "м": "M", "н": "H", "о": "o", "р": "p", "с": "c",
    "т": "T", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "τ": "t", "κ": "k", "ι": "i", "υ": "u",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}  # fmt: skip

# Blocks whose characters NFKC folds to ASCII look-alikes: Latin-1 supplement, superscripts and
# subscripts, letterlike symbols, enclosed alphanumerics, ligatures, small forms, full-width
# forms, mathematical alphanumerics.
_NFKC_BLOCKS = (
    "\u00a0-\u00ff\u2000-\u200a\u2024-\u2026\u202f\u205f\u2070-\u209f\u2100-\u214f"
    "\u2150-\u218f\u2460-\u24ff\u3000\ufb00-\ufb06\ufe50-\ufe6b\uff01-\uff5e"
    "\U0001d400-\U0001d7ff\U0001f100-\U0001f1ff"
)
_CONFUSABLE_CLASS = "".join(sorted(_CONFUSABLES))


def _nfkc_ascii_class() -> str:
    """Every character of the blocks above that NFKC turns into something ASCII (~1,800)."""
    points = []
    for block in re.findall(r"(.)-(.)|(.)", _NFKC_BLOCKS):
        lo, hi = (block[0], block[1]) if block[0] else (block[2], block[2])
        for cp in range(ord(lo), ord(hi) + 1):
            folded = unicodedata.normalize("NFKC", chr(cp))
            if folded != chr(cp) and folded.isascii():
                points.append(cp)
    ranges: list[list[int]] = []
    for cp in points:  # as ranges: a class of single characters is slow to match
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(f"{chr(a)}-{chr(b)}" if b > a else chr(a) for a, b in ranges)


_FOLDS_TO_ASCII = _nfkc_ascii_class()
_SPECIAL_CLASS = f"[{_INVISIBLE}{_FOLDS_TO_ASCII}{_CONFUSABLE_CLASS}]"
_SPECIAL_RE = re.compile(f"[{_INVISIBLE}{_FOLDS_TO_ASCII}{_CONFUSABLE_CLASS}\ud800-\udfff]")
_SPECIAL_RE2 = re2.compile(_SPECIAL_CLASS, RE2_OPTIONS)  # over UTF-8: a DFA, not a char loop


# Up to this many "?" in a text's ASCII shadow (its own and its non-ASCII characters), these are
# looked at one by one; beyond, one RE2 pass over the UTF-8 text finds the special ones.
FEW_NON_ASCII = 8192


def _special_positions(text: str) -> list[int]:
    """Indices of the characters the fold view changes (or may change)."""
    shadow = ascii_shadow(text)  # every character the fold changes is not ASCII: "?" here
    if shadow.count(b"?") <= FEW_NON_ASCII:
        out: list[int] = []
        match = _SPECIAL_RE.match
        i = shadow.find(b"?")
        while i >= 0:
            if match(text, i):
                out.append(i)
            i = shadow.find(b"?", i + 1)
        return out
    return _special_positions_utf8(text)


def _special_positions_utf8(text: str) -> list[int]:
    """``_special_positions`` for text with many non-ASCII characters."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the slower per-character scan finds them too
        return [m.start() for m in _SPECIAL_RE.finditer(text)]
    out: list[int] = []
    last_b = last_c = 0
    for spans in iter_spans(_SPECIAL_RE2, data):
        b = spans[0][0]
        last_c += len(data[last_b:b].decode("utf-8"))
        last_b = b
        out.append(last_c)
    return out


# Escapes: JSON/JS \uXXXX (with surrogate pairs), \xXX, C-style single-char escapes,
# URL percent-escapes and HTML numeric entities. Every alternative is a fixed-width token: linear.
_ESCAPE_RE = re.compile(
    r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\[nrt\"'/\\]|%[0-9a-fA-F]{2}|&#[xX][0-9a-fA-F]{1,6};|&#[0-9]{1,7};"
)
# A line is decoded only when it escapes a printable ASCII character (what a secret is made
# of): code full of "\x00" or "\u20ac" escapes is not copied again for nothing.
_ESCAPE_TRIGGER_RE = re2.compile(
    r"\\u00[2-7][0-9a-fA-F]|\\x[2-7][0-9a-fA-F]|%[2-7][0-9a-fA-F]|"
    r"&#(?:[xX]0*[2-7][0-9a-fA-F]|0*(?:3[2-9]|[4-9][0-9]|1[01][0-9]|12[0-6]));",
    RE2_OPTIONS,
)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "/": "/", "\\": "\\"}

# Candidates for base64 (standard and URL-safe) and hex wrapping. Bounded repetition: linear.
_B64_RE = re2.compile(r"[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{24,}", RE2_OPTIONS)
_HEX_RE = re.compile(r"(?:[0-9a-fA-F]{2}){16,}")  # applied to a base64 candidate: hex is a subset
MAX_DECODE_CANDIDATE = 64 * 1024


@dataclass(frozen=True, slots=True)
class Edit:
    """A region of the view (``vstart``, ``vlen``) that stands for ``olen`` chars at ``ostart``."""

    vstart: int
    vlen: int
    ostart: int
    olen: int


class View:
    """A text derived from its parent, with a map of its offsets back to the parent's.

    ``edits`` are sorted, non-overlapping replacements; outside them the view is the parent
    shifted by a constant. A view made from a decoded blob (``whole``) maps every span to the
    blob's span in the parent. ``depth`` counts decoding steps (base64/hex), which are bounded.
    """

    __slots__ = ("_vstarts", "depth", "edits", "parent", "text", "whole")

    def __init__(
        self,
        text: str,
        parent: View | None = None,
        edits: tuple[Edit, ...] = (),
        whole: tuple[int, int] | None = None,
        depth: int = 0,
    ) -> None:
        self.text = text
        self.parent = parent
        self.edits = edits
        self.whole = whole
        self.depth = depth
        self._vstarts = [e.vstart for e in edits]

    def _map_start(self, v: int) -> int:
        i = bisect.bisect_right(self._vstarts, v) - 1
        if i < 0:
            return v
        e = self.edits[i]
        if v < e.vstart + e.vlen:
            return e.ostart
        return v + (e.ostart + e.olen) - (e.vstart + e.vlen)

    def _map_end(self, v: int) -> int:
        # ``v`` is an exclusive end: map the last included character and take its end.
        if v <= 0:
            return self._map_start(0)
        i = bisect.bisect_right(self._vstarts, v - 1) - 1
        if i < 0:
            return v
        e = self.edits[i]
        if v - 1 < e.vstart + e.vlen:
            return e.ostart + e.olen
        return v + (e.ostart + e.olen) - (e.vstart + e.vlen)

    def to_parent(self, start: int, end: int) -> tuple[int, int]:
        """Map a span of this view to its parent's offsets."""
        if self.whole is not None:
            return self.whole
        if start >= end:
            s = self._map_start(start)
            return s, s
        return self._map_start(start), self._map_end(end)

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map a span of this view to the original text, through every parent."""
        view: View | None = self
        while view is not None and view.parent is not None:
            start, end = view.to_parent(start, end)
            view = view.parent
        return start, end


def _fold_char(text: str, i: int, ch: str) -> str | None:
    """The replacement for ``ch`` at ``i`` in the folded view, or None to keep it."""
    if _INVISIBLE_RE.match(ch):
        return ""
    if "\ud800" <= ch <= "\udfff":
        return "\ufffd"  # lone surrogate: keep the length, make the text encodable
    latin = _CONFUSABLES.get(ch)
    if latin is not None:
        prev = text[i - 1] if i > 0 else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        near_ascii = (prev.isascii() and prev.isalnum()) or (nxt.isascii() and nxt.isalnum())
        return latin if near_ascii else None
    folded = unicodedata.normalize("NFKC", ch)
    if folded != ch and folded.isascii():
        return folded
    return None


def fold_view(root: View) -> View | None:
    """The view with invisible characters removed and look-alikes folded; None if unchanged."""
    text = root.text
    if text.isascii():
        return None
    pieces: list[str] = []
    edits: list[Edit] = []
    last = 0
    vpos = 0
    specials = _special_positions(text)
    shadow = ascii_shadow(text)
    shadow_pieces: list[bytes] = []  # the view's shadow, spliced (one byte per character)
    for i in specials:
        rep = _fold_char(text, i, text[i])
        if rep is None:
            continue
        pieces.append(text[last:i])
        shadow_pieces.append(shadow[last:i])
        vpos += i - last
        pieces.append(rep)
        shadow_pieces.append(rep.encode("ascii", "replace"))
        edits.append(Edit(vpos, len(rep), i, 1))
        vpos += len(rep)
        last = i + 1
    if not edits:
        return None
    pieces.append(text[last:])
    shadow_pieces.append(shadow[last:])
    folded = "".join(pieces)
    _remember_shadow(folded, b"".join(shadow_pieces))
    return View(folded, root, tuple(edits), depth=root.depth)


def _decode_escape(tok: str) -> str | None:
    if tok[0] == "\\":
        kind = tok[1]
        if kind in ("u", "x"):
            return chr(int(tok[2:], 16))
        return _SIMPLE_ESCAPES.get(kind)
    if tok[0] == "%":
        b = int(tok[1:], 16)
        return chr(b) if b < 0x80 else None  # multi-byte UTF-8 is joined below
    cp = int(tok[3:-1], 16) if tok.startswith(("&#x", "&#X")) else int(tok[2:-1])
    return chr(cp) if 0 < cp < 0x110000 and not 0xD800 <= cp <= 0xDFFF else None


def _escape_regions(text: str) -> list[tuple[int, int]]:
    """The lines that contain an escape, merged: the only places an escape can hide a secret."""
    return trigger_lines(text)[0]


def trigger_lines(
    text: str, spans: list[tuple[int, int]] | None = None
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The lines of ``text`` with an escape (adjacent ones merged) and those that join string
    literals: where :func:`unescape_view` and :func:`concat_view` have something to undo.

    One RE2 pass finds both. Neither kind of trigger spans a line, and they share no character
    (``\\ % & # ;``, hex digits and ``u x X`` against quotes, blanks, ``+`` and ``.``), so no match
    of one hides a match of the other: the pass sees every line each would find alone.
    ``spans``: the matches of ``TRIGGER_LINES_RE`` in the text's ASCII shadow, when known.
    """
    escapes: list[tuple[int, int]] = []
    joins: list[tuple[int, int]] = []
    data = ascii_shadow(text)
    line_start = line_end = -1
    if spans is None:
        spans = match_spans(TRIGGER_LINES_RE, data, 0, len(data))
    for start, end in spans:
        if start > line_end:  # a new line
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
        if data[start] not in _JOIN_FIRST:  # an escape
            if escapes and line_start <= escapes[-1][1] + 1:
                escapes[-1] = (escapes[-1][0], line_end)
            else:
                escapes.append((line_start, line_end))
        elif not joins or joins[-1][0] != line_start:
            joins.append((line_start, line_end))
    return escapes, joins


def unescape_view(parent: View, regions: list[tuple[int, int]] | None = None) -> View | None:
    """The lines of ``parent`` that hold JSON, URL or HTML escapes, with the escapes decoded.

    Lines without escapes are left out (they are scanned in ``parent`` already); each gap is
    one newline in the view that maps back to the whole gap. None when there is no escape.
    ``regions``: those lines, when already known (see :func:`trigger_lines`).
    """
    text = parent.text
    if regions is None:
        regions = _escape_regions(text)
    if not regions:
        return None
    pieces: list[str] = []
    edits: list[Edit] = []
    vpos = 0
    prev_end = 0
    for region_start, region_end in regions:
        if region_start > prev_end:
            gap = "\n"
            pieces.append(gap)
            edits.append(Edit(vpos, 1, prev_end, region_start - prev_end))
            vpos += 1
        vpos = _decode_region(text, region_start, region_end, pieces=pieces, edits=edits, vpos=vpos)
        prev_end = region_end
    if prev_end < len(text):
        pieces.append("\n")
        edits.append(Edit(vpos, 1, prev_end, len(text) - prev_end))
    out = "".join(pieces)
    if not out.isascii() and _SURROGATE_RE.search(out):
        out = _SURROGATE_RE.sub("\ufffd", out)
    return View(out, parent, tuple(edits), depth=parent.depth)


def _decode_region(
    text: str, start: int, end: int, *, pieces: list[str], edits: list[Edit], vpos: int
) -> int:
    """Append ``text[start:end]`` with escapes decoded to ``pieces``; return the new view offset."""
    last = start
    pending: list[tuple[int, int]] = []  # a run of %XX bytes >= 0x80 forming UTF-8

    def flush_pending() -> None:
        nonlocal vpos
        if not pending:
            return
        raw = bytes(int(text[s + 1 : e], 16) for s, e in pending)
        rep = raw.decode("utf-8", "replace")
        pieces.append(rep)
        edits.append(Edit(vpos, len(rep), pending[0][0], pending[-1][1] - pending[0][0]))
        vpos += len(rep)
        pending.clear()

    for m in _ESCAPE_RE.finditer(text, start, end):
        s, e = m.span()
        tok = m.group()
        if pending and s != pending[-1][1]:
            flush_pending()
        if tok[0] == "%" and int(tok[1:], 16) >= 0x80:
            if not pending:
                pieces.append(text[last:s])
                vpos += s - last
            pending.append((s, e))
            last = e
            continue
        flush_pending()
        rep = _decode_escape(tok)
        if rep is None:
            continue
        pieces.append(text[last:s])
        vpos += s - last
        pieces.append(rep)
        edits.append(Edit(vpos, len(rep), s, e - s))
        vpos += len(rep)
        last = e
    flush_pending()
    pieces.append(text[last:end])
    return vpos + (end - last)


# String literals joined by concatenation: "ab" + "cd", 'ab' . 'cd' (PHP), "ab" "cd" (C,
# Python). Removing the separator rejoins a value split to hide it.
_CONCAT_RE = re2.compile(r"""(?:"[ \t]*(?:\+|\.)?[ \t]*"|'[ \t]*(?:\+|\.)?[ \t]*')""", RE2_OPTIONS)
_CONCAT_TRIGGER_RE = re2.compile(
    r"""(?:"[ \t]*[+.][ \t]*"|'[ \t]*[+.][ \t]*'|" +"|' +')""", RE2_OPTIONS
)


def concat_view(parent: View, regions: list[tuple[int, int]] | None = None) -> View | None:
    """The lines of ``parent`` that join string literals, with the joins removed.

    ``"ghp_Ky9P" + "f34q…"`` reads as one literal in the view; spans map back over the join.
    None when no line joins literals. ``regions``: those lines, when already known (see
    :func:`trigger_lines`).
    """
    text = parent.text
    data = ascii_shadow(text)
    if regions is None:
        regions = trigger_lines(text)[1]
    if not regions:
        return None
    pieces: list[str] = []
    edits: list[Edit] = []
    vpos = 0
    prev_end = 0
    for start, end in regions:
        if start > prev_end:
            pieces.append("\n")
            edits.append(Edit(vpos, 1, prev_end, start - prev_end))
            vpos += 1
        last = start
        # (_CONCAT_RE has no assertion: the text around a line does not change its matches)
        for s, e in match_spans(_CONCAT_RE, data, start, end):
            pieces.append(text[last:s])
            vpos += s - last
            edits.append(Edit(vpos, 0, s, e - s))
            last = e
        pieces.append(text[last:end])
        vpos += end - last
        prev_end = end
    if prev_end < len(text):
        pieces.append("\n")
        edits.append(Edit(vpos, 1, prev_end, len(text) - prev_end))
    return View("".join(pieces), parent, tuple(edits), depth=parent.depth)


TRIGGER_LINES_RE = re2.compile(
    f"(?:{_ESCAPE_TRIGGER_RE.pattern})|(?:{_CONCAT_TRIGGER_RE.pattern})", RE2_OPTIONS
)
_JOIN_FIRST = frozenset(b"\"'")  # a join starts with a quote, an escape never does

# What must occur (in the lower-cased ASCII shadow) for unescape_view, concat_view or
# decoded_views to build anything. Lower-casing only adds matches (\\U becomes \\u), so a text in
# which none of these matches has no derived view: the engine skips them all at once.
TRIGGER_PATTERNS: tuple[str, ...] = (
    _ESCAPE_TRIGGER_RE.pattern,
    _CONCAT_TRIGGER_RE.pattern,
    _B64_RE.pattern,
)


def _printable_ratio(s: str) -> float:
    if not s:
        return 0.0
    if s.isprintable():
        return 1.0
    ok = sum(1 for c in s if c.isprintable() or c in "\n\r\t")
    return ok / len(s)


def decoded_views(parent: View, max_depth: int = 2, *, shadow: bytes | None = None) -> list[View]:
    """Views of plausible base64/hex blobs in ``parent``, decoded to text.

    A blob is kept when it decodes to UTF-8 text that is at least 95% printable (a secret wrapped
    to hide it); binary data and identifiers that merely look like base64 are dropped.
    ``shadow``: the ASCII shadow of ``parent.text``, when already at hand.
    """
    if parent.depth >= max_depth:
        return []
    text = parent.text
    out: list[View] = []
    tried: dict[str, str | None] = {}  # code repeats its long identifiers: decode each once
    for (bs, be), blob in _spans(_B64_RE, text, shadow):
        if len(blob) > MAX_DECODE_CANDIDATE:
            continue
        if blob in tried:
            decoded = tried[blob]
        else:
            decoded = _hex_text(blob) if _HEX_RE.fullmatch(blob) else None
            if decoded is None:
                decoded = _b64_text(blob)
            tried[blob] = decoded
        if decoded is not None:
            out.append(View(decoded, parent, whole=(bs, be), depth=parent.depth + 1))
    return out


def _hex_text(blob: str) -> str | None:
    try:
        decoded = bytes.fromhex(blob).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return decoded if _printable_ratio(decoded) >= 0.95 else None


_SHADOW_MEMO: tuple[str, bytes] = ("", b"")


def ascii_shadow(text: str) -> bytes:
    """``text`` as bytes with every non-ASCII character replaced by ``?``: one byte per char.

    Passes that look only for ASCII (keywords, digits, escapes, base64) run over the shadow with
    RE2 on bytes, so their offsets are the text's character offsets with no conversion. The
    last shadow is remembered: the views and the engine ask for the same text's shadow in turn
    (encoding a non-ASCII megabyte costs about a millisecond).
    """
    global _SHADOW_MEMO  # noqa: PLW0603 - a one-entry memo; a tuple swap is atomic
    memo = _SHADOW_MEMO
    if memo[0] is text:
        return memo[1]
    shadow = text.encode("ascii") if text.isascii() else text.encode("ascii", "replace")
    _SHADOW_MEMO = (text, shadow)
    return shadow


def _remember_shadow(text: str, shadow: bytes) -> None:
    """Remember ``shadow`` as ``ascii_shadow(text)`` (built by the caller, e.g. spliced)."""
    global _SHADOW_MEMO  # noqa: PLW0603 - see ascii_shadow
    _SHADOW_MEMO = (text, shadow)


_LOWER_MEMO: tuple[str, bytes] = ("", b"")


def lower_shadow(text: str) -> bytes:
    """``ascii_shadow(text).lower()``, remembered like the shadow (keywords are looked for in
    it, and a long text is first checked for any of them)."""
    global _LOWER_MEMO  # noqa: PLW0603 - a one-entry memo; a tuple swap is atomic
    memo = _LOWER_MEMO
    if memo[0] is text:
        return memo[1]
    lower = ascii_shadow(text).lower()
    _LOWER_MEMO = (text, lower)
    return lower


def _spans(
    regex: re2._Regexp, text: str, shadow: bytes | None = None
) -> Iterator[tuple[tuple[int, int], str]]:
    """Matches of an ASCII-only ``regex`` in ``text``, as character spans and matched text."""
    data = ascii_shadow(text) if shadow is None else shadow
    for s, e in match_spans(regex, data, 0, len(data)):
        yield (s, e), text[s:e]


def _b64_text(blob: str) -> str | None:
    core = blob.rstrip("=")
    if len(core) % 4 == 1:
        return None
    # Mixed-case letters and digits are what encoded data looks like; a long identifier is not.
    if core.isalpha() and (core.islower() or core.isupper()):
        return None
    padded = core + "=" * (-len(core) % 4)
    alt = "-_" if ("-" in core or "_" in core) else None
    if alt is not None and ("+" in core or "/" in core):
        return None
    try:
        raw = base64.urlsafe_b64decode(padded) if alt else base64.b64decode(padded, validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if len(decoded) < 8 or _printable_ratio(decoded) < 0.95:
        return None
    return decoded
