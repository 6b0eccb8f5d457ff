"""RE2 options shared by every compiled pattern, and a lean match loop over bytes.

Patterns are quiet and get a memory budget large enough for the widest rule. RE2 never
backtracks, so no input can make matching super-linear.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import overload

import re2

RE2_OPTIONS = re2.Options()
RE2_OPTIONS.log_errors = False
RE2_OPTIONS.max_mem = 64 << 20
# The same, with every group non-capturing: a regex compiled so finds the same matches (groups
# never change what matches) with RE2's DFA alone, ~3x faster than reading a rule's many groups.
NO_CAPTURE_OPTIONS = re2.Options()
NO_CAPTURE_OPTIONS.log_errors = False
NO_CAPTURE_OPTIONS.max_mem = 64 << 20
NO_CAPTURE_OPTIONS.never_capture = True


@functools.lru_cache(maxsize=4096)
def compile_once(pattern: str, options: re2.Options = RE2_OPTIONS) -> re2._Regexp:
    """``re2.compile(pattern, options)``, compiled once per process per pattern and options.

    The rule loader compiles every pattern to reject a bad one by name, and the engine needs the
    same patterns: google-re2's own cache keeps only 128, fewer than the ruleset has, so without
    this every pattern was compiled twice at start-up. A compile error is raised (not cached).
    Compiled patterns are immutable and safe to share between scanners and threads.
    """
    return re2.compile(pattern, options)


# For ASCII bytes only (a text's ASCII shadow): the same patterns compiled as Latin-1. RE2's
# UTF-8 programs spell every negated class and ``.`` as multi-byte sequences (a counted
# ``[^\s:]{1,128}`` 128 times over); as Latin-1 each is one byte range, so a program is a third
# to a half the size, compiles ~25% faster and its DFA states hold fewer threads. On ASCII data
# both find the same matches: they differ only on bytes from 0x80 up, and the Perl classes,
# ``\b`` and case folding of ASCII letters are ASCII in both.
ASCII_OPTIONS = re2.Options()
ASCII_OPTIONS.log_errors = False
ASCII_OPTIONS.max_mem = 64 << 20
ASCII_OPTIONS.encoding = re2.Options.Encoding.LATIN1
ASCII_NO_CAPTURE_OPTIONS = re2.Options()
ASCII_NO_CAPTURE_OPTIONS.log_errors = False
ASCII_NO_CAPTURE_OPTIONS.max_mem = 64 << 20
ASCII_NO_CAPTURE_OPTIONS.encoding = re2.Options.Encoding.LATIN1
ASCII_NO_CAPTURE_OPTIONS.never_capture = True


@functools.lru_cache(maxsize=4096)
def compile_for_ascii(pattern: str, *, capture: bool = True) -> re2._Regexp:
    """``pattern`` compiled to search ASCII bytes only (never a ``str``, never bytes from 0x80
    up): as Latin-1 when it can be (see ``ASCII_OPTIONS``), else as the UTF-8 pattern it is. A
    pattern with a character past U+00FF (which no ASCII byte matches either way) or one the
    Latin-1 compile refuses is compiled as UTF-8, whose compile error, if any, is raised."""
    try:
        latin1 = pattern.encode("latin-1")
    except UnicodeEncodeError:
        pass
    else:
        try:
            return re2.compile(latin1, ASCII_OPTIONS if capture else ASCII_NO_CAPTURE_OPTIONS)
        except re2.error:
            pass
    return compile_once(pattern, RE2_OPTIONS if capture else NO_CAPTURE_OPTIONS)


def _class_end(pattern: str, i: int) -> int:
    """The offset just past the character class that opens at ``pattern[i]`` (a ``[``), or -1
    when it does not close. A ``]`` first (after ``[`` or ``[^``) is a member, a backslash
    escapes what follows (``\\x{…}``, ``\\p{…}`` whole), ``[:name:]`` is one member."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n:
        c = pattern[j]
        if c == "]":
            return j + 1
        if c == "\\":
            j = _escape_end(pattern, j)
            continue
        if c == "[" and pattern.startswith("[:", j):
            k = pattern.find(":]", j + 2)
            if k >= 0:
                j = k + 2
                continue
        j += 1
    return -1


def _escape_end(pattern: str, i: int) -> int:
    """The offset just past the escape at ``pattern[i]`` (a backslash): ``\\x{…}``,
    ``\\p{…}`` and ``\\P{…}`` to their closing brace, any other one character."""
    if i + 2 < len(pattern) and pattern[i + 1] in "xpP" and pattern[i + 2] == "{":
        k = pattern.find("}", i + 3)
        return len(pattern) if k < 0 else k + 1
    return i + 2


# A pattern is relaxed only when its upper bounds spell out at least this many optional copies
# in all: below that, the relaxed program is hardly smaller, and compiling it too costs more.
RELAX_MIN_SAVING = 16


def counts_relaxed(pattern: str) -> str | None:
    """``pattern`` with the upper bounds of its counted repetitions dropped: ``X{m,n}`` becomes
    ``X{m,}`` (``X*`` when ``m`` is 0, ``X+`` when it is 1), lazy ones stay lazy, ``X{m}`` and
    ``X{m,}`` are kept. None when that drops fewer than ``RELAX_MIN_SAVING`` optional copies
    (or the pattern holds ``\\Q…\\E``, which is left alone).

    Every text the pattern matches the relaxed one matches too (each repetition's language only
    grows, and the assertions are the same), so where the relaxed pattern finds no match the
    pattern finds none, and the pattern's leftmost match starts no earlier than the relaxed
    one's. RE2 writes a counted repetition out once per count, so ``[^\\s"']{3,128}`` is 128
    copies and ``[^\\s"']{3,}`` four: the relaxed program compiles several times faster and its
    DFA builds fewer states (see ``CompiledRule.first_match``)."""
    if "{" not in pattern or "\\Q" in pattern:
        return None
    out: list[str] = []
    n = len(pattern)
    i = last = 0
    saving = 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _escape_end(pattern, i)
        elif c == "[":
            end = _class_end(pattern, i)
            if end < 0:
                return None
            i = end
        elif c == "{":
            j = i + 1
            while j < n and pattern[j].isdigit():
                j += 1
            low = pattern[i + 1 : j]
            high = ""
            if low and j < n and pattern[j] == ",":
                k = j + 1
                while k < n and pattern[k].isdigit():
                    k += 1
                high, j = pattern[j + 1 : k], k
            if not low or j >= n or pattern[j] != "}":
                i += 1  # a literal brace (RE2 reads one that starts no repetition so)
                continue
            if high:
                m = int(low)
                saving += max(int(high) - max(m, 1), 0)
                out.append(pattern[last:i])
                out.append("*" if m == 0 else "+" if m == 1 else f"{{{m},}}")
                last = j + 1
            i = j + 1
        else:
            i += 1
    if saving < RELAX_MIN_SAVING:
        return None
    out.append(pattern[last:])
    return "".join(out)


_NULL = (-1, -1)
try:  # the wrapper's own loop costs ~5 µs per match in Python; call the C++ Match directly
    _UNANCHORED = re2._Anchor.UNANCHORED
    _ANCHOR_BOTH = re2._Anchor.ANCHOR_BOTH
    _ANCHOR_START = re2._Anchor.ANCHOR_START
    _FAST = True
except AttributeError:  # pragma: no cover - another google-re2 layout: use the public API
    _FAST = False


def iter_spans(regex: re2._Regexp, data: bytes) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every non-overlapping match of ``regex`` in ``data``: the spans of all groups, as
    ``((start, end), (g1_start, g1_end), ...)``; ``(-1, -1)`` for a group that did not take
    part. Offsets are byte offsets (character offsets for ASCII data)."""
    if not _FAST:
        for m in regex.finditer(data):
            yield tuple(m.span(g) for g in range(regex.groups + 1))
        return
    match = regex._regexp.Match
    pos, end = 0, len(data)
    while pos <= end:
        spans = match(_UNANCHORED, data, pos, end)
        if spans[0] == _NULL:
            return
        yield tuple(spans)
        pos = spans[0][1] if spans[0][1] > spans[0][0] else spans[0][1] + 1


def found(regex: re2._Regexp, text: str) -> bool:
    """``regex.search(text) is not None``, without the wrapper's per-call overhead for ASCII."""
    if _FAST and text.isascii():
        data = text.encode("ascii")
        spans = regex._regexp.Match(_UNANCHORED, data, 0, len(data))
        return bool(spans[0] != _NULL)
    return regex.search(text) is not None


def search_from(regex: re2._Regexp, data: bytes, pos: int) -> tuple[int, int] | None:
    """The span of the first match of ``regex`` in ``data`` at or after ``pos``, or None."""
    if pos > len(data):
        return None
    if not _FAST:
        m = regex.search(data, pos)
        return None if m is None else m.span()
    spans = regex._regexp.Match(_UNANCHORED, data, pos, len(data))
    return None if spans[0] == _NULL else (int(spans[0][0]), int(spans[0][1]))


def iter_spans_in(
    regex: re2._Regexp, data: bytes, start: int, end: int
) -> Iterator[tuple[tuple[int, int], ...]]:
    """Like :func:`iter_spans` over ``data[start:end]``, with offsets into ``data``.

    The text around the range is context, not part of the subject: ``^`` does not match at
    ``start`` (unless it is 0) and ``\\b`` sees the byte before it.
    """
    if not _FAST:
        for m in regex.finditer(data, start, end):
            yield tuple(m.span(g) for g in range(regex.groups + 1))
        return
    match = regex._regexp.Match
    pos = start
    while pos <= end:
        spans = match(_UNANCHORED, data, pos, end)
        if spans[0] == _NULL:
            return
        yield tuple(spans)
        pos = spans[0][1] if spans[0][1] > spans[0][0] else spans[0][1] + 1


@overload
def match_spans(regex: re2._Regexp, data: bytes, start: int, end: int) -> list[tuple[int, int]]: ...
@overload
def match_spans(
    regex: re2._Regexp, data: bytes, start: int, end: int, *, dense: int
) -> list[tuple[int, int]] | None: ...
def match_spans(
    regex: re2._Regexp, data: bytes, start: int, end: int, *, dense: int = 0
) -> list[tuple[int, int]] | None:
    """The whole-match spans of :func:`iter_spans_in` (``regex`` may be compiled without
    captures), as offsets into ``data``.

    With ``dense``: None as soon as more than ``16 + offset // dense`` matches were found
    before an offset (too many for a Python step each: the caller takes another way).
    """
    out: list[tuple[int, int]] = []
    if not _FAST:
        for m in regex.finditer(data, start, end):
            if dense and len(out) > 16 + (m.start() - start) // dense:
                return None
            out.append(m.span())
        return out
    match = regex._regexp.Match
    pos = start
    # ``len(out) > 16 + (offset - start) // dense`` is ``offset < start + (len(out) - 16) * dense``:
    # a bound that grows by ``dense`` with each match (-1, never met, without ``dense``).
    bound = start - 16 * dense if dense else -1
    while pos <= end:
        span = match(_UNANCHORED, data, pos, end)[0]
        if span == _NULL:
            break
        if span[0] < bound:
            return None
        out.append(span)
        bound += dense
        pos = span[1] if span[1] > span[0] else span[1] + 1
    return out


def first_match(regex: re2._Regexp, data: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The span of the first match of ``regex`` in ``data[start:end]`` (the bytes around are
    context), or None."""
    if not _FAST:
        m = regex.search(data, start, end)
        return None if m is None else m.span()
    span = regex._regexp.Match(_UNANCHORED, data, start, end)[0]
    return None if span == _NULL else span


def match_at(regex: re2._Regexp, data: bytes, pos: int) -> tuple[int, int] | None:
    """The span of the match of ``regex`` that starts at ``pos`` in ``data`` (the bytes before
    are context), or None: the match an unanchored search reports when none starts earlier."""
    if not _FAST:
        m = regex.match(data, pos)
        return None if m is None else m.span()
    span = regex._regexp.Match(_ANCHOR_START, data, pos, len(data))[0]
    return None if span == _NULL else (int(span[0]), int(span[1]))


def groups_at(
    regex: re2._Regexp, data: bytes, start: int, end: int
) -> tuple[tuple[int, int], ...] | None:
    """The group spans of ``regex``'s match over exactly ``data[start:end]`` (the bytes around
    are context), or None when it does not match there.

    For a match that an unanchored search found at ``start`` ending at ``end``, these are the
    groups that search reports: of the matches starting at ``start``, RE2 prefers the same one.
    """
    if not _FAST:
        m = regex.fullmatch(data, start, end)
        return None if m is None else tuple(m.span(g) for g in range(regex.groups + 1))
    spans = regex._regexp.Match(_ANCHOR_BOTH, data, start, end)
    return None if spans[0] == _NULL else tuple(spans)
