"""The lean RE2 helpers agree with the re2 module's own API."""

from __future__ import annotations

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect.re2opts import RE2_OPTIONS, found, iter_spans, search_from

WORD = re2.compile(r"([a-z]+)(\d)?", RE2_OPTIONS)


def test_iter_spans_gives_every_group_span() -> None:
    """Spans of the whole match and of each group; (-1, -1) for a group that did not match."""
    assert list(iter_spans(WORD, b"ab1 cd")) == [
        ((0, 3), (0, 2), (2, 3)),
        ((4, 6), (4, 6), (-1, -1)),
    ]


def test_empty_matches_advance() -> None:
    """A pattern that can match empty still terminates and reports each position once."""
    spans = [s[0] for s in iter_spans(re2.compile("x*", RE2_OPTIONS), b"axx")]
    assert spans == [(0, 0), (1, 3), (3, 3)]


def test_found_and_search_from() -> None:
    """found() is search() is not None; search_from starts at the given offset."""
    assert found(WORD, "!! ok")
    assert not found(WORD, "!! 12")
    assert found(WORD, "é ok")  # non-ASCII goes through the module's own search
    assert search_from(WORD, b"ab cd", 1) == (1, 2)
    assert search_from(WORD, b"ab cd", 6) is None


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ab1 9", max_size=40))
def test_iter_spans_matches_finditer(text: str) -> None:
    """On any ASCII input, iter_spans and the module's finditer report the same matches."""
    data = text.encode("ascii")
    expected = [tuple(m.span(g) for g in range(WORD.groups + 1)) for m in WORD.finditer(data)]
    assert list(iter_spans(WORD, data)) == expected
