"""Customer records: exact-data-match against registered CSV rows, holding no raw cell value.

``domestique records add customers.csv --columns email,name,account_id`` normalises each chosen
cell (NFKC, case-folded, whitespace collapsed), keeps only its keyed fingerprint (HMAC under the
per-install key) with the row and column it came from, and writes that index under
``$DOMESTIQUE_HOME/records/<name>.json`` (:mod:`domestique.detect.sources` reads and writes the
files; this module is pure). Scanning fingerprints candidate words and runs of capitalised
words in the text the same way; values from two or more different fields of one row make every
matched value a ``records.customer`` finding.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import re2

from domestique.detect.re2opts import RE2_OPTIONS, iter_spans
from domestique.keys import Fingerprinter

CODE = "records.customer"
MIN_CELL_LENGTH = 3
MAX_WORDS = 4
MIN_FIELDS = 2
FP_BYTES = 16  # the stored fingerprints: "hmac-sha256:" + 32 hex = the first 16 bytes
# Runs of two or more capitalised words on one line (ASCII or Latin letters); linear: each
# repetition must start with whitespace and a capital.
_CAPITALISED_RUN = re.compile(r"\b[A-ZÀ-Þ][\w'\-]*(?:[ \t]+[A-ZÀ-Þ][\w'\-]*)+")
# The same over ASCII text (where \w is [A-Za-z0-9_]), for RE2: ~4x faster than ``re`` on a
# megabyte of code. Group 1 is the run; the character before it, if any, is not a word character.
_CAPITALISED_RUN_ASCII = re2.compile(
    r"(?:^|[^A-Za-z0-9_])([A-Z][A-Za-z0-9_'\-]*(?:[ \t]+[A-Z][A-Za-z0-9_'\-]*)+)", RE2_OPTIONS
)
SET_NAME_RE = re.compile(  # the name of a record set, also its file's stem
    r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
)
# Word characters plus the punctuation that lives inside e-mails, ids and names.
_KEEP = set("@.+-_'")
_WS = re.compile(r"\s+")
_DIGIT = re.compile(r"\d")


class RecordsError(ValueError):
    """A records file or CSV is unusable (missing column, bad name, damaged index)."""


def normalise_cell(value: str) -> str:
    """The form both the CSV cell and the scanned text are fingerprinted in."""
    text = unicodedata.normalize("NFKC", value).casefold()
    return _WS.sub(" ", text).strip().strip(".,;:")


def _split_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for cp in range(128):
        ch = chr(cp)
        if not (ch.isalnum() or ch in _KEEP):
            table[cp] = " "
    return table


_SPLIT = _split_table()
_SPLIT_BYTES = bytes(ord(_SPLIT.get(i, chr(i))) for i in range(128)) + bytes(range(128, 256))


@dataclass(frozen=True, slots=True)
class RecordSetInfo:
    name: str
    columns: tuple[str, ...]
    rows: int
    cells: int
    added: str


_SHAPES = frozenset(("at", "digit", "alpha", "other"))


def word_shape(word: str) -> str:
    """The coarse shape of a one-word value: ``at`` (e-mail-like), ``digit``, ``alpha``, ``other``.

    Stored per record set (which shapes its one-word cells have) so scanning skips words of
    shapes no cell has; it says nothing about any value beyond that.
    """
    if word.isalpha():
        return "alpha"
    if "@" in word:
        return "at"
    return "digit" if _DIGIT.search(word) else "other"


@dataclass(frozen=True, slots=True)
class RecordIndex:
    """What is stored for a record set: fingerprints and the coarse shape of its cells."""

    cells: dict[str, list[list[int]]]  # fingerprint -> [[row, column], ...]
    max_words: int  # the most words in one cell (capped at MAX_WORDS)
    shapes: tuple[str, ...]  # word_shape of every one-word cell, deduplicated


def build_index(rows: Sequence[Sequence[str]], fingerprinter: Fingerprinter) -> RecordIndex:
    """Fingerprint every cell of ``rows`` (normalised; cells under 3 characters skipped)."""
    cells: dict[str, list[list[int]]] = {}
    max_words = 1
    shapes: set[str] = set()
    for r, row in enumerate(rows):
        for c, raw in enumerate(row):
            value = normalise_cell(raw)
            if len(value) < MIN_CELL_LENGTH:
                continue
            words = value.count(" ") + 1
            max_words = max(max_words, min(MAX_WORDS, words))
            if words == 1:
                shapes.add(word_shape(value))
            cells.setdefault(fingerprinter.fingerprint(value), []).append([r, c])
    return RecordIndex(cells, max_words, tuple(sorted(shapes)))


class CustomerRecords:
    """The exact-data-match detector over every record set registered under ``home``."""

    code = CODE
    priority = 90

    def __init__(self, fingerprinter: Fingerprinter, sets: Sequence[dict[str, object]]) -> None:
        self._fp = fingerprinter
        # fingerprint bytes -> ((set number, row, column), ...)
        self._cells: dict[bytes, tuple[tuple[int, int, int], ...]] = {}
        self._max_words = 1
        self._shapes: set[str] = set()
        for n, doc in enumerate(sets):
            cells = doc["cells"]
            assert isinstance(cells, dict)
            for fp, places in cells.items():
                key = bytes.fromhex(str(fp).removeprefix("hmac-sha256:"))[:FP_BYTES]
                prev = self._cells.get(key, ())
                self._cells[key] = prev + tuple((n, int(r), int(c)) for r, c in places)
            mw = doc.get("max_words", 1)
            self._max_words = max(self._max_words, int(mw) if isinstance(mw, int) else 1)
            shapes = doc.get("shapes")
            if isinstance(shapes, list):
                self._shapes.update(str(x) for x in shapes)
            else:  # an index without shapes: every word is a candidate
                self._shapes.update(_SHAPES)
        self.size = len(self._cells)

    def _candidates(self, text: str) -> dict[str, set[str]]:
        """normalised candidate -> the surface forms it was seen as (words joined by NUL)."""
        out: dict[str, set[str]] = {}
        ascii_text = text.isascii()
        every_shape = self._shapes >= _SHAPES
        if ascii_text:  # bytes.translate is an order of magnitude faster than str.translate
            data = text.encode("ascii")
            for word in set(data.translate(_SPLIT_BYTES).split()):
                raw = word.strip(b".,;:'-_+")
                if len(raw) < MIN_CELL_LENGTH:
                    continue
                surface = raw.decode("ascii")
                if every_shape or word_shape(surface) in self._shapes:
                    # ASCII needs no NFKC and has no inner whitespace: lower() is the normal form.
                    out.setdefault(surface.lower(), set()).add(surface)
        else:
            for w in set(text.split()):
                surface = w.strip(".,;:'-_+")
                if len(surface) < MIN_CELL_LENGTH or word_shape(surface) not in self._shapes:
                    continue
                norm = surface.lower() if surface.isascii() else normalise_cell(surface)
                out.setdefault(norm, set()).add(surface)
        if self._max_words > 1:
            # Multi-word cells (names): runs of capitalised words, as names are written in text.
            runs = (
                [text[g[0] : g[1]] for _, g in iter_spans(_CAPITALISED_RUN_ASCII, data)]
                if ascii_text
                else [m.group() for m in _CAPITALISED_RUN.finditer(text)]
            )
            for found in runs:
                run = [p.strip(".,;:") for p in found.split()]
                for i in range(len(run)):
                    for k in range(2, min(self._max_words, len(run) - i) + 1):
                        phrase = run[i : i + k]
                        joined = " ".join(phrase)
                        norm = joined.lower() if joined.isascii() else normalise_cell(joined)
                        out.setdefault(norm, set()).add("\u0000".join(phrase))
        return out

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        if not self._cells or not text:
            return
        matched: dict[tuple[int, int], set[int]] = {}  # (set, row) -> columns
        where: dict[tuple[int, int], list[set[str]]] = {}
        for norm, surfaces in self._candidates(text).items():
            places = self._cells.get(self._fp.digest(norm)[:FP_BYTES])
            if not places:
                continue
            for n, r, c in places:
                matched.setdefault((n, r), set()).add(c)
                where.setdefault((n, r), []).append(surfaces)
        spans: set[tuple[int, int]] = set()
        for key, cols in matched.items():
            if len(cols) < MIN_FIELDS:
                continue
            for surfaces in where[key]:
                for surface in surfaces:
                    spans.update(_locate(text, surface))
        for s, e in sorted(spans):
            yield s, e, text[s:e]


def _locate(text: str, surface: str) -> Iterator[tuple[int, int]]:
    """Every occurrence of ``surface`` (words joined by NUL: any whitespace between them)."""
    if "\u0000" not in surface:
        start = text.find(surface)
        while start >= 0:
            end = start + len(surface)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if not (before.isalnum() or after.isalnum()):
                yield start, end
            start = text.find(surface, start + 1)
        return
    pattern = r"\s+".join(re.escape(w) for w in surface.split("\u0000"))
    for m in re.finditer(rf"(?<!\w){pattern}(?!\w)", text):
        yield m.span()
