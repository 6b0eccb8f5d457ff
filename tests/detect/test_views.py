"""Evasion views: what they undo, and that every span maps back into the original text."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect.views import (
    View,
    concat_view,
    decoded_views,
    fold_view,
    unescape_view,
)


def test_ascii_text_needs_no_fold_view() -> None:
    """Plain ASCII costs nothing: no folded view is built."""
    assert fold_view(View("plain ascii")) is None


def test_fold_removes_invisibles_and_maps_spans_back() -> None:
    """Zero-width chars and soft hyphens vanish; a span in the view maps to the original."""
    original = "key=ab\u200bcd\u00adef"
    view = fold_view(View(original))
    assert view is not None
    assert view.text == "key=abcdef"
    s = view.text.index("abcdef")
    assert view.to_original(s, s + 6) == (4, len(original))


def test_fold_full_width_and_homoglyphs_next_to_latin() -> None:
    """NFKC look-alikes fold to ASCII; Cyrillic next to Latin folds, Russian prose does not."""
    view = fold_view(View("ｇｈｐ_x аbc"))
    assert view is not None
    assert view.text == "ghp_x abc"
    assert fold_view(View("привет мир")) is None


def test_unescape_decodes_json_url_and_html_escapes() -> None:
    """\\uXXXX, %XX and &#NN; are decoded, mapping each decoded char to its whole escape."""
    original = 'x="\\u0067h%70&#95;rest"'
    view = unescape_view(View(original))
    assert view is not None
    assert "ghp_rest" in view.text
    s = view.text.index("ghp_rest")
    start, end = view.to_original(s, s + len("ghp_rest"))
    assert original[start:end] == "\\u0067h%70&#95;rest"


def test_unescape_keeps_only_lines_with_escapes() -> None:
    """Lines without escapes are not copied again; spans after a gap still map correctly."""
    original = "plain line\nsecond\nval=%41BC\nlast"
    view = unescape_view(View(original))
    assert view is not None
    s = view.text.index("ABC")
    start, end = view.to_original(s, s + 3)
    assert original[start:end] == "%41BC"


def test_concat_view_joins_literals_and_maps_over_the_join() -> None:
    """'"ab" + "cd"' reads "abcd" in the view; the span maps back over the join."""
    original = 'first line\nx = "abcd" + "efgh"\nlast'
    view = concat_view(View(original))
    assert view is not None
    s = view.text.index("abcdefgh")
    start, end = view.to_original(s, s + 8)
    assert original[start:end] == 'abcd" + "efgh'
    assert concat_view(View("no joins here")) is None


def test_decoded_views_base64_and_hex() -> None:
    """Printable base64 and hex blobs are decoded; the whole blob is the mapped span."""
    blob = base64.b64encode(b"password=correct horse battery").decode()
    text = f"data: {blob} and {b'token=abcdefghijklmnop'.hex()}"
    views = decoded_views(View(text))
    decoded = {v.text for v in views}
    assert "password=correct horse battery" in decoded
    assert "token=abcdefghijklmnop" in decoded
    for v in views:
        start, end = v.to_original(0, 1)
        assert text[start:end] in (blob, b"token=abcdefghijklmnop".hex())


def test_decoded_views_skip_binary_and_identifiers() -> None:
    """Binary data and long identifiers that merely look like base64 are not decoded."""
    binary = base64.b64encode(bytes(range(200))).decode()
    assert decoded_views(View(binary)) == []
    assert decoded_views(View("averyveryverylongidentifiernamehere")) == []


def test_decoding_depth_is_bounded() -> None:
    """A blob nested deeper than the limit is not decoded further."""
    inner = View("x", depth=2)
    assert decoded_views(inner, max_depth=2) == []


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab =%41\\u0067\u200b\u00adｇа\n&#95;\"'+.")), max_size=60
    )
)
def test_view_spans_stay_inside_the_original(text: str) -> None:
    """Every span of every view maps to an ordered span inside the original text."""
    root = View(text)
    for view in (fold_view(root), unescape_view(root), concat_view(root)):
        if view is None:
            continue
        n = len(view.text)
        for s in range(n + 1):
            for e in range(s, min(n, s + 4) + 1):
                a, b = view.to_original(s, e)
                assert 0 <= a <= b <= len(text)
