"""The keyword prefilter: which rules run, and in which windows of the text.

One keyword pass finds every (overlapping) occurrence of every rule keyword in the lower-cased
text: RE2's DFA over the alternation of all keywords, each match standing for the occurrences
that start inside it (several times faster than walking pyahocorasick's automaton over
megabytes), or the automaton over the whole text when keywords are dense. Only rules with a hit
run, each in merged windows around its hits; the few rules without keywords (card, phone,
IBAN, SSN) run in windows around runs of digits (found in the same pass as the escapes and
string joins the views undo). A short ASCII text is first checked for which kinds of work it
holds at all, and rules whose window is a whole keyword-dense text are checked together with
one RE2 set pass (see :meth:`Prefilter.drop_matchless`).

Everything here is pure: text in, windows out. :mod:`domestique.detect.confirm` searches the
windows; :mod:`domestique.detect.engine` ties the two together.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain, count, islice
from operator import itemgetter

import ahocorasick
import re2

from domestique.detect.re2opts import RE2_OPTIONS, iter_spans, match_at, match_spans, search_from
from domestique.detect.ruleset import Rule
from domestique.detect.views import TRIGGER_LINES_RE, TRIGGER_PATTERNS, lower_shadow

# The automaton walks ~13 ns per character from Python; RE2's DFA over the alternation of all
# keywords finds them several times faster but costs a Python step per match. So RE2 finds the
# keywords, and gives up for the automaton over the whole text once it has seen more than one
# keyword per DENSE_KEYWORD_GAP characters (keyword-dense text).
DENSE_KEYWORD_GAP = 48
SMALL_PAIRS = 48  # up to this many keyword occurrences, a plain loop groups them fastest
# With one keyword occurrence per DENSE_PAIRS characters or more, occurrences are counted rather
# than sorted, and the offsets of at most DENSE_FIND_KEYWORDS keywords looked up again.
DENSE_PAIRS = 16
DENSE_FIND_KEYWORDS = 8
# Up to this size an ASCII text is first checked for which kinds of work it holds (one RE2 set
# pass), and the passes for the others are skipped; a longer text always holds most of them.
SET_CHECK_MAX = 32 * 1024
# From this size on, the escape and join triggers and the digit runs are found in one pass (on a
# shorter text the two passes cost less than the shared pass's Python steps).
SHARED_PASS_MIN = 4096
# When this many rules' windows are a whole ASCII text (keyword-dense text), one RE2 set pass
# over it says which of them match anywhere, and the others are not run: a set of a dozen rules
# walks 100 KB in ~0.5 ms where each rule's own pass costs ~0.17 ms. A set is compiled (~2 ms
# per rule) when the same group of rules comes a second time, for at most WHOLE_SETS groups per
# scanner, each with a DFA budget of WHOLE_SET_MEM.
WHOLE_SET_RULES = 4
WHOLE_SETS = 8
WHOLE_SET_MEM = 16 << 20
KEYWORDS, ESCAPES, JOINS, BLOBS, DIGITS = "keywords", "escapes", "joins", "blobs", "digits"
_TRIGGERS = (ESCAPES, JOINS, BLOBS)  # in the order of views.TRIGGER_PATTERNS
_FIRST, _SECOND = itemgetter(0), itemgetter(1)

# A rule's windows (``[start, end]`` lists, see ``_merge_windows``), or what merges them when
# the rule runs.
Windows = list[list[int]] | Callable[[], list[list[int]]]
_WHOLE_SET_OPTIONS = re2.Options()
_WHOLE_SET_OPTIONS.log_errors = False
_WHOLE_SET_OPTIONS.max_mem = WHOLE_SET_MEM
_WHOLE_SET_OPTIONS.never_capture = True

# Rules without keywords (card numbers, phone numbers, IBANs, SSNs) are about digits: they run
# in windows around runs of 8+ digit-ish characters, found by one RE2 pass.
_DIGIT_RUN_RE = re2.compile(r"\d[\d \-.()/]{6,}\d", RE2_OPTIONS)


def digit_runs(shadow: bytes) -> list[tuple[int, int]]:
    """Spans of runs of digits (with the separators numbers are written with), 8+ chars."""
    return [spans[0] for spans in iter_spans(_DIGIT_RUN_RE, shadow)]


# The escape and join triggers of the views and the digit runs, in one RE2 pass over a long text.
_TRIGGER_OR_DIGITS_RE = re2.compile(
    f"(?:{TRIGGER_LINES_RE.pattern})|(?:{_DIGIT_RUN_RE.pattern})", RE2_OPTIONS
)


def triggers_and_digit_runs(shadow: bytes) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The matches of ``views.TRIGGER_LINES_RE`` and :func:`digit_runs`, found in one pass.

    A trigger starts with one of ``\\ % & " '``; a digit run starts with a digit and holds
    only digits and `` -.()/``. So no match of one starts where the other can start, and no
    trigger starts inside a run: each match of the alternation is the match the pass for its
    kind finds there. A run can start inside a trigger, though (``\\u00312345678``): the digits
    inside each trigger are tried in turn, anchored, as the runs' own pass would meet them.
    """
    triggers: list[tuple[int, int]] = []
    runs: list[tuple[int, int]] = []
    pos = 0
    while (hit := search_from(_TRIGGER_OR_DIGITS_RE, shadow, pos)) is not None:
        s, e = hit
        pos = e if e > s else e + 1  # (neither pattern matches the empty string)
        if 48 <= shadow[s] <= 57:  # a digit: a run
            runs.append(hit)
            continue
        triggers.append(hit)
        q = s + 1
        while q < e:
            if 48 <= shadow[q] <= 57 and (run := match_at(_DIGIT_RUN_RE, shadow, q)) is not None:
                runs.append(run)
                q = run[1]
                pos = max(pos, q)  # no trigger starts inside a run
            else:
                q += 1
    return triggers, runs


def _merge_windows(ends: list[int], before: int, after: int, n: int) -> list[list[int]]:
    """Windows ``[end - before, end + after]`` around keyword hits, merged where they touch.

    When hits are dense enough that the windows would cover the text anyway, one window over the
    whole text is returned without walking them (the keyword-dense worst case).
    """
    if len(ends) * (before + after) >= n:
        return [[0, n]]
    if not ends:
        return []
    ends.sort()
    # Sorted, the window of one hit touches the previous one's exactly when the hits are at
    # most ``before + after`` apart (``before`` and ``after`` are not negative): a window
    # starts at each wider gap. Found by a comprehension, not a Python step per window merge.
    width = before + after
    gaps = [i for i, prev, e in zip(count(1), ends, islice(ends, 1, None)) if e - prev > width]
    gaps.append(len(ends))
    windows: list[list[int]] = []
    lo = 0
    for hi in gaps:
        first = ends[lo]
        windows.append([first - before if first > before else 0, ends[hi - 1] + after])
        lo = hi
    windows[-1][1] = min(windows[-1][1], n)  # only the last window can pass the end
    return windows


def _merge_spans(spans: list[tuple[int, int]], before: int, after: int, n: int) -> list[list[int]]:
    """Windows around sorted, non-overlapping spans, merged where they touch."""
    windows: list[list[int]] = []
    for s, e in spans:
        a, b = max(0, s - before), min(n, e + after)
        if windows and a <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], b)
        else:
            windows.append([a, b])
    return windows


def _extensions_first(keyword: str) -> tuple[int, ...]:
    """Sort key: keywords in code-point order, except that a keyword comes after every keyword
    it is a proper prefix of (``password``, ``passwd``, ``pass``)."""
    return (*map(ord, keyword), 0x110000)


def keyword_alternation(keywords: Iterable[str]) -> str:
    """The alternation of ``keywords`` that matches, at the leftmost position where one starts,
    the longest keyword starting there.

    Leftmost-first, an alternative before every alternative it is a prefix of gives the longest
    of those starting at one place (they are all prefixes of the longest). Keeping the rest in
    code-point order puts keywords with a common prefix next to each other, and RE2 factors
    neighbours' common prefixes (``pass(?:word|wd|)``): a trie, where the longest-first order
    left ~700 alternatives side by side. Same matches, a program a third smaller, and every
    DFA state RE2 builds holds the trie's few live branches, not one thread per keyword: a
    fresh process's first 2 MB of code cost this pass ~12 ms instead of ~35 ms.
    """
    return "|".join(re2.escape(k) for k in sorted(keywords, key=_extensions_first))


def whole_set(patterns: Sequence[str], options: re2.Options = _WHOLE_SET_OPTIONS) -> re2.Set:
    """An RE2 set of ``patterns`` (ids from 0), and last (id ``len(patterns)``) the empty
    pattern, which matches everywhere: a pass that reports it did not give up (an RE2 set
    reports no match at all when its DFA runs out of memory)."""
    rset = re2.Set.SearchSet(options)
    for pattern in patterns:
        rset.Add(pattern)
    rset.Add("")
    rset.Compile()
    return rset


def matching_somewhere(rset: re2.Set, count: int, data: bytes) -> set[int] | None:
    """The ids of the ``count`` patterns of ``rset`` (a :func:`whole_set`) that match somewhere
    in ``data``: ``i`` is there exactly when ``first_match`` of pattern ``i`` over the whole of
    ``data`` finds a match. None when the pass gave up."""
    ids = rset.Match(data)
    if not ids or count not in ids:
        return None
    return set(ids)


# What one match of the keyword alternation at ``s`` stands for, per keyword: the occurrences
# (end offset relative to ``s``, minus length, keyword id) that start inside it, and the
# keywords that start inside it and run past its end, (relative start, keyword, relative end,
# minus length, keyword id), to be checked against the text; these by the character they need
# right after the match.
_Crossing = tuple[int, bytes, int, int, int]
_Reading = tuple[tuple[tuple[int, int, int], ...], dict[bytes, tuple[_Crossing, ...]]]


class _KeywordReadings:
    """Per keyword, what a match of the keyword alternation stands for (see ``_Reading``).

    The alternation (see ``keyword_alternation``) matches at ``s`` the longest keyword that starts
    there, and its next match is the leftmost keyword starting at or after the end: so every
    occurrence the automaton reports starts inside one match, and is either wholly inside it
    (found by walking the automaton over the keyword itself) or starts inside and runs past its
    end (a keyword that a proper suffix of it begins). Worked out on a keyword's first match,
    not for all keywords up front (a scanner is built in every short-lived process).
    """

    __slots__ = ("_automaton", "_extends", "_ids", "_keywords", "known", "lengths", "single")

    def __init__(self, keywords: list[str], automaton: ahocorasick.Automaton) -> None:
        self._keywords = keywords
        self._automaton = automaton
        self._ids = {kw.encode(): kid for kid, kw in enumerate(keywords)}
        self.lengths = [len(kw) for kw in keywords]
        self.known: dict[bytes, _Reading] = {}  # the keywords worked out so far
        # A match followed by a character, when it stands for one occurrence, the keyword
        # itself (no keyword starts inside it, none that starts inside runs on with that
        # character): that occurrence, as in its reading. Met so far (at most one entry per
        # keyword and ASCII character).
        self.single: dict[bytes, tuple[int, int, int]] = {}
        self._extends: dict[str, list[int]] | None = None  # a proper prefix -> the keywords

    def get(self, word: bytes) -> _Reading | None:
        reading = self.known.get(word)
        if reading is None and word in self._ids:
            reading = self.known[word] = self._read(self._keywords[self._ids[word]])
        return reading

    def _read(self, kw: str) -> _Reading:
        keywords = self._keywords
        extends = self._extends
        if extends is None:
            extends = {}
            for kid, other in enumerate(keywords):
                for cut in range(1, len(other)):
                    extends.setdefault(other[:cut], []).append(kid)
            self._extends = extends
        inside = tuple((end, -len(keywords[k]), k) for end, k in self._automaton.iter(kw))
        crossing: dict[bytes, list[_Crossing]] = {}
        for j in range(1, len(kw)):
            for k in extends.get(kw[j:], ()):
                word = keywords[k]
                crossing.setdefault(word[len(kw) - j].encode(), []).append(
                    (j, word.encode(), j + len(word) - 1, -len(word), k)
                )
        return inside, {c: tuple(v) for c, v in crossing.items()}


class Prefilter:
    """The keyword index of a rule set and the passes that plan a scan: built once per rule
    set, shared by every scanner derived from it, holding no per-scan state (the whole-text
    sets it compiles are a cache)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = tuple(rules)
        # Groups of rules (indices) whose windows were the whole text: None when seen once, then
        # their whole_set (False: it did not compile). See WHOLE_SET_RULES.
        self._whole_sets: dict[tuple[int, ...], re2.Set | bool | None] = {}
        self.keywordless = tuple(i for i, r in enumerate(rules) if not r.keywords)
        kw_map: dict[str, list[int]] = {}
        self._kw_rules: list[tuple[int, ...]] = []  # keyword id -> rules that use it
        self._kw_max = [max((len(k) for k in r.keywords), default=0) for r in rules]
        self._kw_bytes: list[bytes] = []  # keyword id -> the keyword
        for i, r in enumerate(rules):
            for kw in r.keywords:
                kw_map.setdefault(kw, []).append(i)
        self.automaton: ahocorasick.Automaton | None = None
        self._keyword_scan: re2._Regexp | None = None
        if kw_map:
            self._keyword_scan = re2.compile(keyword_alternation(kw_map), RE2_OPTIONS)
            auto = ahocorasick.Automaton()
            for kid, (kw, idxs) in enumerate(kw_map.items()):
                auto.add_word(kw, kid)
                self._kw_rules.append(tuple(idxs))
                self._kw_bytes.append(kw.encode())
            auto.make_automaton()
            self.automaton = auto
        self._kw_reads = (
            None if self.automaton is None else _KeywordReadings(list(kw_map), self.automaton)
        )
        # What could start work in an ASCII text: a keyword, an escape, a string join, a base64
        # or hex blob, a digit run. A text with none of them can hold no rule finding (ordinary
        # prose, most short prompts): only the known-value and record detectors run on it.
        # Short texts are checked with an RE2 set, which says which of them occur, so the
        # passes for the absent ones are skipped; long ones with one search for any of them.
        parts = {
            KEYWORDS: keyword_alternation(kw_map),
            **dict(zip(_TRIGGERS, TRIGGER_PATTERNS, strict=True)),
            DIGITS: _DIGIT_RUN_RE.pattern if self.keywordless else "",
        }
        parts = {k: v for k, v in parts.items() if v}
        # A long text is checked for anything at all with the keyword pass's own regex and one
        # small regex for the rest, not one alternation of everything: RE2 builds a DFA's states
        # as it meets them, and a second DFA over all keywords cost a fresh process ~20 ms of
        # building on its first megabytes.
        others = [p for k, p in parts.items() if k != KEYWORDS]
        self._others = (
            re2.compile("|".join(f"(?:{p})" for p in others), RE2_OPTIONS) if others else None
        )
        self._which = whole_set(list(parts.values()), RE2_OPTIONS)
        self._which_ids = list(parts)

    def present(self, text: str) -> frozenset[str] | None:
        """For ASCII text, which kinds of work it holds (see ``__init__``); None: not known."""
        if not text.isascii():
            return None
        lower = lower_shadow(text)
        if len(text) > SET_CHECK_MAX:
            # The keywords first: most long texts hold one near their start, and the keyword
            # pass's DFA states built here serve that pass; the other kinds' regex (counted
            # repetitions: dear states to build in a fresh process) runs only on the rest.
            scan = self._keyword_scan
            if scan is not None and search_from(scan, lower, 0) is not None:
                return None
            if self._others is not None and search_from(self._others, lower, 0) is not None:
                return None
            return frozenset()
        # None when the set gave up (out of memory): then nothing is skipped.
        which = matching_somewhere(self._which, len(self._which_ids), lower)
        if which is None:
            return None
        return frozenset(self._which_ids[i] for i in which if i < len(self._which_ids))

    def wants_keywords(self, present: frozenset[str] | None) -> bool:
        """Whether a view holding ``present`` (see :meth:`present`) is searched for keywords."""
        return self.automaton is not None and (present is None or KEYWORDS in present)

    def digit_windows(
        self, windows: dict[int, Windows], runs: list[tuple[int, int]], n: int
    ) -> None:
        """Adds to ``windows`` those of the rules without keywords, around the digit ``runs``."""
        for i in self.keywordless:
            rule = self._rules[i]
            windows[i] = _merge_spans(runs, rule.window_before, rule.window_after, n)

    def drop_matchless(self, windows: dict[int, Windows], data: bytes, n: int) -> None:
        """Drops from ``windows`` the rules whose window is the whole text (``data``, ASCII,
        ``n`` long) and which match nowhere in it: confirming would find nothing for them
        (its first search finds no match, see WHOLE_SET_RULES)."""
        if len(windows) < WHOLE_SET_RULES:
            return
        whole = tuple(sorted(i for i, w in windows.items() if not callable(w) and w == [[0, n]]))
        if len(whole) < WHOLE_SET_RULES:
            return
        sets = self._whole_sets
        rset = sets.get(whole)
        if rset is None:
            if whole not in sets:  # seen once: compiled if the same group comes again
                if len(sets) < WHOLE_SETS:
                    sets[whole] = None
                return
            try:
                rset = whole_set([self._rules[i].regex for i in whole])
            except re2.error:  # (each compiles alone; a set may not, within its budget)
                rset = False
            sets[whole] = rset
        if rset is False:
            return
        ids = matching_somewhere(rset, len(whole), data)
        if ids is None:  # the pass gave up: every rule runs
            return
        for k, i in enumerate(whole):
            if k not in ids:
                del windows[i]

    def keyword_rule_windows(self, lower: bytes, n: int) -> Mapping[int, Windows]:
        """Per rule, the windows around its keywords' occurrences in ``lower`` (``n`` long).

        The automaton's occurrences in keyword-dense text are flattened (in C) into one list of
        ints, not kept as a tuple each: some ten thousand tuples in 100 KB, each tracked by the
        garbage collector, set off a dozen collections per scan. They are paired only when the
        counts of the keywords cannot decide the windows (see ``_keyword_windows``).
        """
        assert self.automaton is not None
        pairs = self._sparse_keyword_hits(lower)
        if pairs is None:
            flat = list(chain.from_iterable(self.automaton.iter(lower.decode("ascii"))))
            kids = flat[1::2]
            if len(kids) > SMALL_PAIRS and len(kids) * DENSE_PAIRS >= n:
                dense = self._keyword_windows_dense(Counter(kids), n, lower)
                if dense is not None:
                    return dense
            pairs = list(zip(flat[::2], kids, strict=True))
        return self._keyword_windows(pairs, n, lower) if pairs else {}

    def keyword_hits(self, lower: bytes) -> list[tuple[int, int]]:
        """Every keyword occurrence in ``lower``: (offset of its last character, keyword id), as
        the automaton reports them (by end, the longest first)."""
        assert self.automaton is not None
        pairs = self._sparse_keyword_hits(lower)
        return list(self.automaton.iter(lower.decode("ascii"))) if pairs is None else pairs

    def _sparse_keyword_hits(self, lower: bytes) -> list[tuple[int, int]] | None:
        """``keyword_hits``, or None for keyword-dense text (see below).

        RE2's DFA over the alternation of all keywords finds the leftmost keyword at each step
        several times faster than walking the automaton over the whole text; each of its matches
        stands for the occurrences that start inside it (see ``_KeywordReadings``). Once it has
        seen more than one keyword per ``DENSE_KEYWORD_GAP`` characters (keyword-dense text),
        the automaton over the whole text is cheaper than a Python step per match.
        """
        assert self.automaton is not None
        assert self._keyword_scan is not None
        starts = match_spans(self._keyword_scan, lower, 0, len(lower), dense=DENSE_KEYWORD_GAP)
        if starts is None:
            return None
        reads = self._kw_reads
        assert reads is not None
        single = reads.single
        last = len(lower) - 1
        pairs: list[tuple[int, int]] = []  # the matches that stand for one occurrence each
        more: list[tuple[int, int, int]] = []  # the others: (end, minus length, keyword id)
        for s, e in starts:
            if e <= last:
                # Most matches: one keyword, and the character after it starts no other
                # keyword inside it. Known by the match and that character.
                hit = single.get(lower[s : e + 1])
                if hit is not None:
                    pairs.append((s + hit[0], hit[2]))
                    continue
            word = lower[s:e]
            reading = reads.get(word)
            if reading is None:  # cannot happen: the alternation matches keywords only
                return None
            inside, crossing = reading
            crossers = crossing.get(lower[e : e + 1], ()) if crossing else ()
            if len(inside) == 1 and not crossers:
                end, _, kid = inside[0]
                pairs.append((s + end, kid))
                if e <= last:
                    single[lower[s : e + 1]] = inside[0]  # (shared: no new tuple per entry)
                continue
            more += [(s + end, minus_len, kid) for end, minus_len, kid in inside]
            for j, word, end, minus_len, kid in crossers:
                if lower.startswith(word, s + j):
                    more.append((s + end, minus_len, kid))
        if not more:
            # Matches do not overlap, so single occurrences (each ending at its match's last
            # character) are in the automaton's order already.
            return pairs
        # Merged into the automaton's order: by end, the longest first (a single occurrence's
        # end is its match's last character: at most one of them ends at any offset).
        lengths = reads.lengths
        more.sort()
        ends = [end for end, _ in pairs]
        out: list[tuple[int, int]] = []
        lo = 0
        for end, minus_len, kid in more:
            hi = bisect_left(ends, end, lo)
            if hi < len(ends) and ends[hi] == end:
                other = pairs[hi][1]
                if (-lengths[other], other) < (minus_len, kid):
                    hi += 1
            out += pairs[lo:hi]
            out.append((end, kid))
            lo = hi
        out += pairs[lo:]
        return out

    def _keyword_windows_small(
        self, pairs: list[tuple[int, int]], n: int
    ) -> dict[int, list[list[int]]]:
        """``_keyword_windows`` for a few pairs, with a Python step each (less set-up)."""
        ends: dict[int, list[int]] = {}  # keyword id -> offsets of its last characters
        for end, kid in pairs:
            ends.setdefault(kid, []).append(end)
        rule_ends: dict[int, list[int]] = {}
        for kid, offsets in ends.items():
            for i in self._kw_rules[kid]:
                rule_ends.setdefault(i, []).extend(offsets)
        out: dict[int, list[list[int]]] = {}
        for i, offsets in rule_ends.items():
            rule = self._rules[i]
            before = rule.window_before + self._kw_max[i] - 1
            out[i] = _merge_windows(offsets, before, rule.window_after + 1, n)
        return out

    def _keyword_windows(
        self, pairs: list[tuple[int, int]], n: int, lower: bytes | None = None
    ) -> Mapping[int, Windows]:
        """Per rule, the windows around its keywords' occurrences (see ``_merge_windows``).

        ``pairs`` are (offset of a keyword's last character, keyword id), in text order. They
        are grouped by keyword with C-level sorts and slices, not a Python step per occurrence
        (keyword-dense text has one every ten characters). Rules come in the order of their
        first keyword's first occurrence. ``lower``: the text the pairs were found in, for
        keyword-dense text (see ``_keyword_windows_dense``).
        """
        if len(pairs) <= SMALL_PAIRS:
            return self._keyword_windows_small(pairs, n)
        if lower is not None and len(pairs) * DENSE_PAIRS >= n:
            dense = self._keyword_windows_dense(Counter(map(_SECOND, pairs)), n, lower)
            if dense is not None:
                return dense
        first_seen = list(dict.fromkeys(map(_SECOND, pairs)))  # keyword ids, in text order
        pairs.sort(key=_SECOND)  # stable: each keyword's offsets stay in text order
        kids = list(map(_SECOND, pairs))
        slices: dict[int, tuple[int, int]] = {}
        lo = 0
        for kid in sorted(first_seen):
            hi = bisect_right(kids, kid, lo)
            slices[kid] = (lo, hi)
            lo = hi
        rule_parts: dict[int, list[tuple[int, int]]] = {}
        for kid in first_seen:
            for i in self._kw_rules[kid]:
                rule_parts.setdefault(i, []).append(slices[kid])
        ends: list[int] | None = None
        out: dict[int, list[list[int]]] = {}
        for i, parts in rule_parts.items():
            rule = self._rules[i]
            # A window runs from ``before`` chars before the end of a keyword to ``after``
            # chars after it; the offsets here are of the keyword's last character.
            before = rule.window_before + self._kw_max[i] - 1
            after = rule.window_after + 1
            if sum(hi - lo for lo, hi in parts) * (before + after) >= n:
                out[i] = [[0, n]]  # what _merge_windows finds, without the offsets
                continue
            if ends is None:
                ends = list(map(_FIRST, pairs))
            offsets: list[int] = []
            for lo, hi in parts:
                offsets += ends[lo:hi]
            out[i] = _merge_windows(offsets, before, after, n)
        return out

    def _keyword_windows_dense(
        self, counts: Counter[int], n: int, lower: bytes
    ) -> dict[int, Windows] | None:
        """``_keyword_windows`` for keyword-dense text, without sorting the occurrences.

        Most rules' windows there cover the whole text, which only the number of their keywords'
        occurrences decides: those are counted (in C). The few keywords whose rules need the
        offsets are found again with ``bytes.find``, each occurrence (overlapping ones too) as the
        automaton reports it. None when more than ``DENSE_FIND_KEYWORDS`` keywords would be.
        ``counts``: per keyword id, its occurrences, in order of first occurrence. A rule's
        windows that are not the whole text are merged when asked for (see ``Windows``).
        """
        rule_kids: dict[int, list[int]] = {}
        for kid in counts:
            for i in self._kw_rules[kid]:
                rule_kids.setdefault(i, []).append(kid)
        plan: list[tuple[int, int, int, list[int] | None]] = []
        wanted: set[int] = set()
        for i, kids in rule_kids.items():
            rule = self._rules[i]
            before = rule.window_before + self._kw_max[i] - 1
            after = rule.window_after + 1
            if sum(counts[kid] for kid in kids) * (before + after) >= n:
                plan.append((i, before, after, None))  # the whole text (see _merge_windows)
            else:
                plan.append((i, before, after, kids))
                wanted.update(kids)
        if len(wanted) > DENSE_FIND_KEYWORDS:
            return None
        ends: dict[int, list[int]] = {}
        for kid in wanted:
            word = self._kw_bytes[kid]
            last = len(word) - 1
            found: list[int] = []
            at = lower.find(word)
            while at >= 0:
                found.append(at + last)
                at = lower.find(word, at + 1)
            ends[kid] = found
        out: dict[int, Windows] = {}
        for i, before, after, some in plan:
            if some is None:
                out[i] = [[0, n]]
                continue
            offsets: list[int] = []
            for kid in some:
                offsets += ends[kid]
            # Merged when the rule runs: a few hundred windows per rule, each a list the garbage
            # collector tracks, are not all kept at once.
            out[i] = partial(_merge_windows, offsets, before, after, n)
        return out
