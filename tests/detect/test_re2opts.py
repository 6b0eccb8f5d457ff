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


ASCII_BYTES = st.binary(max_size=200).map(lambda b: bytes(c & 0x7F for c in b))


def test_patterns_for_ascii_find_what_the_utf8_ones_find_on_the_shadow() -> None:
    """Every shipped rule, compiled for ASCII bytes (Latin-1 where it can be), finds the same
    matches and groups as its UTF-8 compile on ASCII text holding each rule's own examples."""
    from domestique.detect.re2opts import compile_for_ascii, compile_once, match_spans
    from domestique.detect.ruleset import builtin_rules

    rules = builtin_rules()
    lines = [e for r in rules for e in (*r.examples, *r.counter_examples)]
    data = "\n".join(lines).encode("ascii", "replace")
    data += b"\nPassword = 'x\x7fy'\n\x00\x01 ~\t\r\n"
    latin1 = 0
    for rule in rules:
        utf8 = compile_once(rule.regex)
        ascii_regex = compile_for_ascii(rule.regex)
        latin1 += ascii_regex.options.encoding == re2.Options.Encoding.LATIN1
        assert list(iter_spans(ascii_regex, data)) == list(iter_spans(utf8, data)), rule.id
        bounds = compile_for_ascii(rule.regex, capture=False)
        assert match_spans(bounds, data, 0, len(data)) == [s[0] for s in iter_spans(utf8, data)]
    assert latin1 > len(rules) // 2


@settings(max_examples=200, deadline=None)
@given(ASCII_BYTES)
def test_negated_classes_and_folding_agree_on_any_ascii(data: bytes) -> None:
    from domestique.detect.re2opts import compile_for_ascii

    for pattern in (r"(?i)[^a-z0-9\s]{2,}k", r"\b[^\n:]{1,8}:\S+", r"(?i)s[^é]+", r"."):
        assert list(iter_spans(compile_for_ascii(pattern), data)) == list(
            iter_spans(re2.compile(pattern, RE2_OPTIONS), data)
        ), pattern


def test_a_pattern_past_latin1_is_compiled_as_utf8() -> None:
    from domestique.detect.re2opts import compile_for_ascii

    for pattern in ("…|x", r"[\x{2019}']s"):
        assert compile_for_ascii(pattern).options.encoding == re2.Options.Encoding.UTF8
    assert list(iter_spans(compile_for_ascii(r"[\x{2019}']s"), b"it's")) == [((2, 4),)]
