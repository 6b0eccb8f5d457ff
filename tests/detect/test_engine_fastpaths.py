"""The engine's shortcuts find exactly what the plain way finds (issue 3, scan speed).

Each shortcut is checked against the slow, obvious computation it replaces, on inputs built to
stress it: keyword soups from the real rule set (overlapping and crossing keywords), escapes and
string joins on the same lines, repeated lines whose matches are read once.
"""

from __future__ import annotations

import random

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import Scanner
from domestique.detect.re2opts import (
    NO_CAPTURE_OPTIONS,
    RE2_OPTIONS,
    groups_at,
    iter_spans,
    match_spans,
    search_from,
)
from domestique.detect.ruleset import builtin_rules
from domestique.detect.views import (
    _CONCAT_TRIGGER_RE,
    _ESCAPE_TRIGGER_RE,
    ascii_shadow,
    lower_shadow,
    trigger_lines,
)

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
        expected = list(scanner._automaton.iter(lower.decode("ascii")))  # type: ignore[union-attr]
        assert scanner._keyword_hits(lower) == expected, text


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
