"""The prefilter's and the confirmation's shortcuts find exactly what the plain way finds
(issue 3, scan speed).

Each shortcut is checked against the slow, obvious computation it replaces, on inputs built to
stress it: keyword soups from the real rule set (overlapping and crossing keywords), escapes and
string joins on the same lines, repeated lines whose matches are read once.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import Scanner, prefilter
from domestique.detect.confirm import CompiledRule, _first_matches
from domestique.detect.prefilter import (
    Windows,
    _merge_windows,
    digit_runs,
    matching_somewhere,
    triggers_and_digit_runs,
    whole_set,
)
from domestique.detect.re2opts import (
    NO_CAPTURE_OPTIONS,
    RE2_OPTIONS,
    first_match,
    groups_at,
    iter_spans,
    match_spans,
    search_from,
)
from domestique.detect.ruleset import builtin_rules
from domestique.detect.views import (
    _CONCAT_TRIGGER_RE,
    _ESCAPE_TRIGGER_RE,
    _SPECIAL_RE,
    TRIGGER_LINES_RE,
    View,
    _special_positions,
    _special_positions_utf8,
    ascii_shadow,
    fold_view,
    lower_shadow,
    trigger_lines,
)
from domestique.keys import Fingerprinter

KEYWORDS = sorted({k for r in builtin_rules() for k in r.keywords})
FILLERS = ["", "", " ", "x", "_", "\n", "=", "ab" * 7, "é"]


def _soup(rnd: random.Random) -> str:
    parts = []
    for _ in range(rnd.randint(1, 40)):
        word = rnd.choice(KEYWORDS)
        if rnd.random() < 0.3:  # a keyword's tail: the start of another one, or not
            word = word[rnd.randint(0, len(word) - 1) :]
        parts.append(word + rnd.choice(FILLERS))
    return "".join(parts)


def test_keyword_hits_are_the_automatons_occurrences(scanner: Scanner) -> None:
    """RE2 matches standing for the occurrences inside them give every occurrence the automaton
    reports over the whole text, in its order, also for overlapping and crossing keywords."""
    rnd = random.Random(3)
    for _ in range(1500):
        text = _soup(rnd)
        lower = lower_shadow(text)
        expected = list(scanner._prefilter.automaton.iter(lower.decode("ascii")))  # type: ignore[union-attr]
        assert scanner._prefilter.keyword_hits(lower) == expected, text


def _reference_lines(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The escape lines (adjacent merged) and join lines, each found by its own pass."""
    data = ascii_shadow(text)
    found: list[list[tuple[int, int]]] = [[], []]
    for kind, regex in enumerate((_ESCAPE_TRIGGER_RE, _CONCAT_TRIGGER_RE)):
        pos = 0
        while (hit := search_from(regex, data, pos)) is not None:
            start = text.rfind("\n", 0, hit[0]) + 1
            end = text.find("\n", hit[1])
            end = len(text) if end < 0 else end
            lines = found[kind]
            if kind == 0 and lines and start <= lines[-1][1] + 1:
                lines[-1] = (lines[-1][0], end)
            else:
                lines.append((start, end))
            pos = end + 1
    return found[0], found[1]


PIECES = ["\\u0041", "\\x7a", "%2F", "&#65;", "&#x41;", '" + "', "' . '", '" "', "'+'", "a", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, " ", "x9", "\\", "%", "&#"]), max_size=30))
def test_one_pass_finds_the_escape_and_join_lines(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert trigger_lines(text) == _reference_lines(text)


def test_groups_at_reads_the_groups_the_search_reports() -> None:
    """Anchored at a match found by the capture-free regex, the groups are the search's."""
    pattern = r"(?:^|[^a-z])(?:key|token)\s*=\s*(?:'([^']+)'|(\w+))"
    plain = re2.compile(pattern, RE2_OPTIONS)
    bare = re2.compile(pattern, NO_CAPTURE_OPTIONS)
    data = b"key = 'abc' xtoken=zz9 token = 'q' key=v"
    searched = list(iter_spans(plain, data))
    assert [s[0] for s in searched] == match_spans(bare, data, 0, len(data))
    assert [groups_at(plain, data, *s[0]) for s in searched] == searched
    assert groups_at(plain, data, 1, 5) is None


def test_repeated_lines_are_each_found(scanner: Scanner) -> None:
    """A match's reading is cached per distinct match: every copy is still reported, at its own
    span, and the first one (no character before it) as well as the others."""
    line = "DB_PASSWORD=h7Kq2Lm9xPw\n"
    text = line * 5
    findings = [f for f in scanner.scan(text) if f.code == "secret.password_assignment"]
    assert [(f.start, f.end) for f in findings] == [
        (i * len(line) + 12, i * len(line) + 23) for i in range(5)
    ]


DIGIT_PIECES = ["\\u0031", "\\u00312", "\\x39", "%37", "&#0000049;", "&#x0031;", "&#49;", "12", "3"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*PIECES, *DIGIT_PIECES, "0", "7", " ", "-", ".", "(", ")", "/", "%", "&#"]
        ),
        max_size=40,
    )
)
def test_one_pass_finds_the_triggers_and_the_digit_runs(pieces: list[str]) -> None:
    """The shared pass finds what the trigger pass and the digit-run pass find, also for runs
    that start inside an escape (``\\u0031`` followed by digits)."""
    data = "".join(pieces).encode()
    expected = (match_spans(TRIGGER_LINES_RE, data, 0, len(data)), digit_runs(data))
    assert triggers_and_digit_runs(data) == expected


def test_windows_searched_together_find_each_windows_first_match(scanner: Scanner) -> None:
    """Close windows searched as one range first give every window that holds a match, with
    the match a search of that window alone finds first; none is skipped that holds one."""
    rnd = random.Random(9)
    rules = [c for c in scanner._rules if c.rule.keywords][:40]
    examples = [e for c in rules for e in c.rule.examples] or ["password = 'h7Kq2Lm9xPw'"]
    for _ in range(300):
        parts = [rnd.choice([*examples, _soup(rnd), "x" * rnd.randint(0, 600), "é", "\n"])]
        while len(parts) < rnd.randint(2, 12):
            parts.append(rnd.choice([*examples, _soup(rnd), " " * rnd.randint(0, 300), "é"]))
        text = "".join(parts)
        data = ascii_shadow(text)
        n = len(text)
        cuts = sorted(rnd.sample(range(n + 1), min(n + 1, 2 * rnd.randint(1, 10))))
        windows = [[cuts[i], cuts[i + 1]] for i in range(0, len(cuts) - 1, 2)]
        crule = rnd.choice(rules)
        for text_ascii in {text.isascii(), False}:
            expected = []
            for wa, wb in windows:
                if not (text_ascii or text[wa:wb].isascii()):
                    expected.append((wa, wb, None))
                elif (first := first_match(crule.bounds, data, wa, wb)) is not None:
                    expected.append((wa, wb, first))
            # a fresh rule: its first searches go through the relaxed regex (the gate)
            fresh = CompiledRule(crule.rule)
            got = list(_first_matches(fresh, text, windows, data, text_ascii))
            assert got == expected, (crule.rule.id, text, windows)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [*"ab9 ?=\n", "\u00a0", "é", "…", "\u200b", "а", "ｈ", "\ud800", "\U0001d400", "€"]
        ),
        max_size=60,
    )
)
def test_special_characters_are_found_either_way(text: str) -> None:
    """The fold view's special characters, found one by one or by a pass over UTF-8."""
    expected = [m.start() for m in _SPECIAL_RE.finditer(text)]
    assert _special_positions(text) == expected
    if "\ud800" not in text:
        assert _special_positions_utf8(text) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [*"ab9 ?=\n", "\u00a0", "é", "…", "\u200b", "а", "ｈ", "\ud800", "ﬁ"]
        ),
        max_size=60,
    )
)
def test_the_fold_views_spliced_shadow_is_its_shadow(text: str) -> None:
    """The fold view's ASCII shadow, spliced from the text's, is the view's own."""
    view = fold_view(View(text))
    if view is not None:
        assert ascii_shadow(view.text) == view.text.encode("ascii", "replace")


def test_dense_keyword_windows_are_the_sorted_ones(scanner: Scanner) -> None:
    """Counting occurrences and finding the few needed offsets again gives every rule the
    windows (and the order of rules) that sorting all occurrences gives."""
    rnd = random.Random(21)
    checked = counted = 0
    for _ in range(400):
        few = rnd.sample(KEYWORDS, rnd.randint(2, 9))  # some frequent, some rare
        parts = []
        for _ in range(rnd.randint(20, 300)):
            word = rnd.choice(few[:2]) if rnd.random() < 0.8 else rnd.choice(few)
            parts.append(word + rnd.choice(FILLERS) + " " * rnd.randint(0, 30))
        text = "".join(parts)
        if rnd.random() < 0.3:  # keyword-dense at the start only: listed, not counted
            text += "." * rnd.randint(len(text), 30 * len(text))
        lower = lower_shadow(text)
        pre = scanner._prefilter
        pairs = pre.keyword_hits(lower)
        # The windows of every path, merged ones asked for, are those of the sorting path.
        expected = _merged(pre._keyword_windows(list(pairs), len(text))) if pairs else []
        assert _merged(pre.keyword_rule_windows(lower, len(text))) == expected, text
        counted += pre._sparse_keyword_hits(lower) is None  # (counted, not listed)
        if len(pairs) <= 48:
            continue
        counts = Counter(kid for _, kid in pairs)
        dense = pre._keyword_windows_dense(counts, len(text), lower)
        if dense is not None:
            checked += 1
            assert _merged(dense) == expected, text
        assert _merged(pre._keyword_windows(list(pairs), len(text), lower)) == expected
    assert checked > 100
    assert counted > 100


def _merged(windows: Mapping[int, Windows]) -> list[tuple[int, list[list[int]]]]:
    """Per rule, in order, its windows, merged when they were left to merge on demand."""
    return [(i, w() if callable(w) else w) for i, w in windows.items()]


def _reference_windows(ends: list[int], before: int, after: int, n: int) -> list[list[int]]:
    """Windows around each hit, merged one at a time where they touch."""
    if len(ends) * (before + after) >= n:
        return [[0, n]]
    windows: list[list[int]] = []
    for e in sorted(ends):
        a, b = max(0, e - before), e + after
        if windows and a <= windows[-1][1]:
            windows[-1][1] = b
        else:
            windows.append([a, b])
    if windows:
        windows[-1][1] = min(windows[-1][1], n)
    return windows


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.integers(0, 3000), max_size=40),
    st.integers(0, 200),
    st.integers(0, 200),
    st.integers(0, 4000),
)
def test_windows_are_merged_where_they_touch(
    ends: list[int], before: int, after: int, n: int
) -> None:
    ends = [e for e in ends if e < n]
    assert _merge_windows(list(ends), before, after, n) == _reference_windows(
        ends, before, after, n
    )


VALUE_CHARS = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
GLUE = [" = ", "=", ": ", '="', "'", '"', "://", "@", ":", "/", " ", "\n", "_", "-", ".", "(", ")"]


def _assignment_soup(rnd: random.Random, pieces: int) -> str:
    """Keywords, glue and random values of assorted lengths: text that some rules match."""
    parts = []
    for _ in range(pieces):
        roll = rnd.random()
        if roll < 0.4:
            parts.append(rnd.choice(KEYWORDS))
        elif roll < 0.75:
            parts.append(rnd.choice(GLUE))
        else:
            parts.append("".join(rnd.choices(VALUE_CHARS, k=rnd.choice([3, 8, 16, 24, 32, 40]))))
    return "".join(parts)


def test_a_whole_set_names_the_rules_that_match_somewhere(scanner: Scanner) -> None:
    """One RE2 set pass over a text names exactly the rules whose own first search over the
    whole text finds a match (the search ``_confirm`` starts with on a whole-text window)."""
    rnd = random.Random(8)
    rules = list(scanner._rules)
    groups = [rules[i : i + 15] for i in range(0, len(rules), 15)]
    sets = [whole_set([c.rule.regex for c in group]) for group in groups]
    matched = 0
    for _ in range(150):
        data = ascii_shadow(_assignment_soup(rnd, rnd.randint(1, 120)))
        for group, rset in zip(groups, sets, strict=True):
            ids = matching_somewhere(rset, len(group), data)
            assert ids is not None
            expected = {k for k, c in enumerate(group) if first_match(c.bounds, data, 0, len(data))}
            assert ids - {len(group)} == expected, data
            matched += len(expected)
    assert matched > 150


def test_rules_that_match_nowhere_are_dropped_without_a_change(
    fingerprinter: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scanning keyword-dense text with the rules that match nowhere dropped by a set pass
    finds what running every rule finds; the set is built when a group of rules comes again."""
    rnd = random.Random(13)
    texts = []
    for _ in range(12):
        lines = [_assignment_soup(rnd, rnd.randint(3, 12)) for _ in range(rnd.randint(3, 8))]
        texts.append("\n".join(lines[i % len(lines)] for i in range(400)))
    fast = Scanner(builtin_rules(), fingerprinter)
    found = [[fast.scan(text) for _ in range(3)] for text in texts]
    assert any(isinstance(v, re2.Set) for v in fast._prefilter._whole_sets.values())
    monkeypatch.setattr(prefilter, "WHOLE_SET_RULES", 10**9)
    plain = Scanner(builtin_rules(), fingerprinter)
    for text, runs in zip(texts, found, strict=True):
        expected = plain.scan(text)
        assert all(run == expected for run in runs)
    assert sum(len(run[0]) for run in found) > 10


class _GaveUp:
    """An RE2 set whose DFA ran out of memory: it reports no match at all."""

    def Match(self, data: bytes) -> list[int]:
        return []


def test_a_kinds_of_work_set_that_gives_up_skips_nothing(
    scanner: Scanner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short text is first matched against a set of the kinds of work it may hold; when
    that set gives up, the text is scanned in full instead of being taken as clean."""
    text = "GITHUB_TOKEN=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\n"
    assert [f.code for f in scanner.scan(text)] == ["secret.github_token"]
    monkeypatch.setattr(scanner._prefilter, "_which", _GaveUp())
    assert scanner._prefilter.present(text) is None
    assert [f.code for f in scanner.scan(text)] == ["secret.github_token"]


@pytest.mark.parametrize(
    "insert",
    ["", "ghp_", "password", "\\x41", "'a' + 'b'", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY", "4111 1111"],
)
def test_a_long_text_is_found_to_hold_work_exactly_when_the_kinds_set_finds_some(
    scanner: Scanner, insert: str
) -> None:
    """Past SET_CHECK_MAX the "anything at all?" check is the keyword pass's regex and one
    small regex for the other kinds, not one alternation of all: it answers as the set of all
    kinds does (None: work somewhere; empty: none), at the start, middle or end of the text."""
    pf = scanner._prefilter
    filler = "Lorem ipsum dolor sit amet. "
    base = filler * (prefilter.SET_CHECK_MAX // len(filler) + 8)
    for at in (0, len(base) // 2, len(base)):
        text = base[:at] + insert + base[at:]
        assert len(text) > prefilter.SET_CHECK_MAX
        which = matching_somewhere(pf._which, len(pf._which_ids), lower_shadow(text))
        assert which is not None
        kinds = {pf._which_ids[i] for i in which if i < len(pf._which_ids)}
        assert pf.present(text) == (None if kinds else frozenset())
        assert bool(kinds) == bool(insert)


def test_the_keyword_alternation_matches_the_longest_keyword_at_each_leftmost_start() -> None:
    """Its matches are those of the longest-first alternation (leftmost, then longest) on text
    made of the shipped keywords run together, where prefixes and overlaps abound."""
    from domestique.detect.prefilter import keyword_alternation
    from domestique.detect.re2opts import match_spans

    keywords = sorted({k for r in builtin_rules() for k in r.keywords})
    ours = re2.compile(keyword_alternation(keywords), RE2_OPTIONS)
    longest_first = "|".join(re2.escape(k) for k in sorted(keywords, key=len, reverse=True))
    reference = re2.compile(longest_first, RE2_OPTIONS)
    assert ours.programsize < reference.programsize  # factored into a trie
    rng = random.Random(13)
    for _ in range(100):
        pieces = [rng.choice(keywords) + rng.choice(["", "", " ", "_", "x"]) for _ in range(200)]
        data = "".join(pieces).encode()
        assert match_spans(ours, data, 0, len(data)) == match_spans(reference, data, 0, len(data))
    for word in ("pass", "password", "passwd"):  # a prefix and its extensions, alone
        data = f"{word} {word}!".encode()
        assert match_spans(ours, data, 0, len(data)) == match_spans(reference, data, 0, len(data))
