"""Issue 13, round 5: a rule's first search through its regex with the upper bounds of its counted
repetitions dropped (``re2opts.counts_relaxed``, ``CompiledRule.first_match``), and the long-text
presence check asking for keywords first. Both change how much RE2 compiles and builds in a
fresh process, never what is found."""

from __future__ import annotations

import random

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import Scanner
from domestique.detect.confirm import CompiledRule
from domestique.detect.prefilter import SET_CHECK_MAX, Prefilter
from domestique.detect.re2opts import (
    RELAX_MIN_SAVING,
    compile_for_ascii,
    counts_relaxed,
    first_match,
)
from domestique.detect.ruleset import Rule, builtin_rules
from domestique.keys import Fingerprinter


def test_upper_bounds_dropped_lower_bounds_kept() -> None:
    assert counts_relaxed(r"a{2,50}b") == r"a{2,}b"
    assert counts_relaxed(r"x[^\s]{0,40}?y") == r"x[^\s]*?y"  # lazy stays lazy
    assert counts_relaxed(r"k{1,30}") == r"k+"
    # fixed and open counts are kept as written: dropping nothing from them
    assert counts_relaxed(r"[0-9a-f]{32}-v{3,}z{1,40}") == r"[0-9a-f]{32}-v{3,}z+"


def test_braces_that_are_no_repetition_are_left_alone() -> None:
    # an escaped brace, a brace in a class, \x{...} and \p{...}, a brace RE2 reads literally
    assert counts_relaxed(r"\{1,40\}") is None
    assert counts_relaxed(r"[{1,40}]x") is None
    assert counts_relaxed(r"[]{1,40}]") is None
    assert counts_relaxed(r"[[:alpha:]{1,40}]") is None
    assert counts_relaxed(r"\x{2019}\p{Greek}a{,40}") is None
    assert counts_relaxed(r"\x{2019}{2,40}") == r"\x{2019}{2,}"
    assert counts_relaxed(r"[{]{2,40}\}") == r"[{]{2,}\}"


def test_small_savings_and_quoted_text_are_not_relaxed() -> None:
    assert counts_relaxed(r"x:{1,3}=a{8,}") is None  # two optional copies: not worth a compile
    assert counts_relaxed(f"a{{1,{RELAX_MIN_SAVING + 1}}}") == "a+"
    assert counts_relaxed(r"\Qa{1,40}\E") is None


def _ranges(data: bytes, rng: random.Random) -> list[tuple[int, int]]:
    n = len(data)
    out = [(0, n)]
    for _ in range(40):
        a = rng.randrange(n + 1)
        out.append((a, rng.randrange(a, n + 1)))
    return out


def test_gated_first_match_is_the_regex_first_match_for_every_shipped_rule() -> None:
    """For every shipped rule: wherever the relaxed regex finds nothing the rule's regex finds
    nothing, and the gated first match of a range is the regex's own (examples, counter-
    examples and near misses, whole text and random ranges, fresh rules each time)."""
    rules = builtin_rules()
    lines = [e for r in rules for e in (*r.examples, *r.counter_examples)]
    # near misses: every example cut short and doubled, so bounds are crossed both ways
    lines += [e[: len(e) // 2] for e in lines] + [e + e[len(e) // 3 :] for e in lines]
    data = "\n".join(lines).encode("ascii", "replace")
    rng = random.Random(13)
    ranges = _ranges(data, rng)
    gated = 0
    for rule in rules:
        relaxed = counts_relaxed(rule.regex)
        bounds = compile_for_ascii(rule.regex, capture=False)
        if relaxed is not None:
            gated += 1
            loose = compile_for_ascii(relaxed, capture=False)
            for a, b in ranges:
                want = first_match(bounds, data, a, b)
                got = first_match(loose, data, a, b)
                if want is not None:
                    assert got is not None, rule.id
                    assert got[0] <= want[0], rule.id
        for a, b in ranges:
            crule = CompiledRule(rule)  # its own regex not compiled yet: the gate searches
            assert crule.first_match(data, a, b) == first_match(bounds, data, a, b), rule.id
    assert gated >= 10  # the shipped rules do have wide counted repetitions


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="abk =:'\"\n_-x0129AZ/+{}", min_size=0, max_size=120), st.data())
def test_gate_agrees_on_any_ascii(text: str, data: st.DataObject) -> None:
    """A pattern of wide counted repetitions, the gated search against the regex alone."""
    pattern = r"(?i)(?:^|[^a-z0-9])k[a-z_\-]{0,30}[ \t]*[=:][ \t]*['\"]?([a-z0-9/+]{3,40})\b"
    blob = text.encode("ascii")
    a = data.draw(st.integers(0, len(blob)))
    b = data.draw(st.integers(a, len(blob)))
    relaxed = counts_relaxed(pattern)
    assert relaxed is not None
    exact = re2.compile(pattern)
    want = exact.search(blob, a, b)
    loose = compile_for_ascii(relaxed, capture=False).search(blob, a, b)
    if want is not None:
        assert loose is not None
        assert loose.start() <= want.start()

    rule = Rule(id="test.gate", description="", regex=pattern, keywords=("k",), examples=("k=abc",))
    assert CompiledRule(rule).first_match(blob, a, b) == (None if want is None else want.span())


def _scanner() -> Scanner:
    return Scanner(builtin_rules(), Fingerprinter(b"k" * 32))


def test_scans_with_and_without_the_gate_find_the_same() -> None:
    """The same texts through a scanner whose rules first search relaxed and one whose rules
    never do (gate off): identical findings, in order."""
    rules = builtin_rules()
    texts = [e for r in rules for e in (*r.examples, *r.counter_examples)]
    joined = "\n".join(texts)
    texts += [joined, joined[: len(joined) // 2], "x = 1\n" * 9000 + joined]
    gated = _scanner()
    plain = _scanner()
    for crule in plain._rules:
        crule._gate = False
    for text in texts:
        assert gated.scan(text) == plain.scan(text)
    assert any(c._gate not in (None, False) for c in gated._rules)  # the gate did run


def test_long_text_presence_keywords_first() -> None:
    """Over SET_CHECK_MAX, a text with a keyword, with only another kind of work, or with
    nothing is told apart as before (None, None, empty)."""
    pf = Prefilter(builtin_rules())
    filler = "lorem ipsum dolor sit amet " * (SET_CHECK_MAX // 20)
    assert pf.present(filler) == frozenset()
    assert pf.present(filler + " password ") is None
    assert pf.present("password " + filler) is None
    assert pf.present(filler + " QUJDREVGR0hJSktMTU5PUFFSU1RVVldY ") is None  # a blob, no keyword
    assert pf.present(filler + " 4111 1111 1111 1111 ") is None  # a digit run
