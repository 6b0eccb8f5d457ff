"""The guard's faster forms agree with the plain ones they replace.

Masking, the credential hint test and the glued-operator test were rewritten for speed; each
must give exactly what its plain reference gives, on any text.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.guard import judge, simple
from domestique.guard.rules import common
from domestique.keys import mask_preview

# The masking pattern as one plain regex (the reference the two fast patterns must equal).
_REFERENCE_MASK = re.compile(
    r"(?i)(?P<k>(?:[\w.-]*(?:api[_-]?key|token|secret|passw(?:or)?d|passwd|pwd|"
    r"credential|auth)[\w.-]*)\s*[=:]\s*|(?:--?(?:password|passwd|token|api-key|secret)"
    r"[= ]\s*)|bearer\s+|basic\s+|-p(?=\S{4,}))(?P<v>['\"]?[^\s'\"&;|]{4,})|"
    r"(?P<u>[a-z][\w+.-]*://[^/\s:@]+:)(?P<pw>[^@\s/]{3,})(?=@)"
)


def _reference_mask(text: str) -> str:
    if not any(h in text.lower() for h in judge._MASK_HINTS):
        return text

    def sub(m: re.Match[str]) -> str:
        if m.group("pw") is not None:
            return m.group("u") + mask_preview(m.group("pw"))
        value = m.group("v")
        quote = value[0] if value[:1] in "'\"" else ""
        return m.group("k") + quote + mask_preview(value[len(quote) :])

    return _REFERENCE_MASK.sub(sub, text)


# Pieces that exercise the masking pattern: keywords glued to word runs, separators, schemes.
_PIECES = st.sampled_from(
    [
        "key", "API_KEY", "Api-Key", "token", "SECRET", "password", "passwd", "pwd", "cred",
        "credential", "auth", "Bearer ", "basic ", "-p", "-P", "--password ", "--token=", "@",
        "://", "https://", "u:", "x", "ab", "abcd", "12345", "=", ":", " ", "'", '"', "&", ";",
        "|", ".", "-", "_", "+", "/", "\t", "\u00e9", "\u0130", "\u212a", "\U0001f600",
    ]
)  # fmt: skip
_MIXED = st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=16).map("".join)


@settings(max_examples=600, deadline=None)
@given(_MIXED)
def test_mask_matches_the_single_pattern(text: str) -> None:
    """The two fast masking patterns mask exactly what the one plain pattern masks."""
    assert judge._heuristic_mask(text) == _reference_mask(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(common.CRED_HINTS), st.text(max_size=3)), max_size=8))
def test_credential_hint_is_a_substring_test(parts: list[str]) -> None:
    """The Aho-Corasick hint search says yes exactly when a hint is a substring (any case)."""
    text = "".join(parts)
    assert common.cred_hint(text) == any(h in text.lower() for h in common.CRED_HINTS)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=" |&;ab\n(", max_size=12))
def test_glued_operator_pattern(text: str) -> None:
    """An operator character next to one that is neither a blank nor an operator."""
    plain = re.search(r"[^ |&;][|&;]|[|&;][^ |&;]", text) is not None
    assert (simple._GLUED_OPERATOR.search(text) is not None) is plain
