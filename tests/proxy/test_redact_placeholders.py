"""Placeholders: typed, keyed, deterministic; spans merged; collisions fail closed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.redact import PLACEHOLDER_PATTERN, PlaceholderMaker, Span, redact_text
from domestique.redact._placeholders import PlaceholderCollision, merge_spans, placeholder_type

KEY = b"k" * 32


def test_placeholder_is_typed_and_deterministic() -> None:
    """Same key and value give the same placeholder; the type comes from the reason code."""
    a = PlaceholderMaker(KEY).placeholder("secret.github_token", "ghp_x")
    b = PlaceholderMaker(KEY).placeholder("secret.github_token", "ghp_x")
    assert a == b
    assert a.startswith("[REDACTED:github_token:")
    assert PLACEHOLDER_PATTERN.fullmatch(a)


def test_placeholder_depends_on_key_and_value() -> None:
    """Another install key or another value gives another placeholder (keyed, not a hash)."""
    m = PlaceholderMaker(KEY)
    assert m.placeholder("secret.x", "v1") != m.placeholder("secret.x", "v2")
    assert m.placeholder("secret.x", "v1") != PlaceholderMaker(b"j" * 32).placeholder(
        "secret.x", "v1"
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("secret.github_token", "github_token"),
        ("pii.email", "email"),
        ("records.customer", "customer"),
        ("cmd.destructive.rm_root", "destructive_rm_root"),
        ("weird", "weird"),
        ("x.!!", "value"),
    ],
)
def test_placeholder_type_is_safe_text(code: str, expected: str) -> None:
    """The type part is [a-z0-9_] only, so a placeholder never needs escaping."""
    assert placeholder_type(code) == expected


def test_merge_spans_unions_overlaps_and_keeps_longest_code() -> None:
    """Overlapping spans become one; the longest member names it."""
    merged = merge_spans(
        [Span(0, 4, "a"), Span(2, 10, "b"), Span(20, 25, "c"), Span(-3, 1, "d")], 22
    )
    assert merged == [Span(0, 10, "b"), Span(20, 22, "c")]


def test_collision_fails_closed() -> None:
    """A placeholder already bound to another value raises instead of restoring wrongly."""
    m = PlaceholderMaker(KEY)
    ph = m.placeholder("secret.x", "abc")
    with pytest.raises(PlaceholderCollision):
        redact_text("abc", [Span(0, 3, "secret.x")], m, {ph: "other"})


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=1, max_size=80),
    cuts=st.lists(st.tuples(st.integers(0, 80), st.integers(0, 80)), max_size=5),
)
def test_redaction_offsets_cover_exactly_the_spans(text: str, cuts: list[tuple[int, int]]) -> None:
    """Text outside the spans is kept; each span's value is in the mapping; restoring inverts."""
    spans = [Span(min(a, b), max(a, b), "secret.t") for a, b in cuts]
    mapping: dict[str, str] = {}
    out = redact_text(text, spans, PlaceholderMaker(KEY), mapping)
    merged = merge_spans(spans, len(text))
    # Rebuild from the merged spans: same result.
    expected, pos = [], 0
    for s in merged:
        expected.append(text[pos : s.start])
        expected.append(PlaceholderMaker(KEY).placeholder("secret.t", text[s.start : s.end]))
        pos = s.end
    expected.append(text[pos:])
    assert out == "".join(expected)
    restored = PLACEHOLDER_PATTERN.sub(lambda m: mapping.get(m.group(0), m.group(0)), out)
    if "[REDACTED:" not in text:
        assert restored == text
