"""Restoring placeholders: whole texts and streams split anywhere, buffering only prefixes."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.redact import PlaceholderMaker, StreamRestorer, json_escaped, restore_text

M = PlaceholderMaker(b"k" * 32)
VALUES = ["ghp_Secret1", 'quo"te\\back\nline', "ünï"]
MAPPING = {M.placeholder("secret.t", v): v for v in VALUES}
PHS = list(MAPPING)


def test_restore_text_replaces_known_placeholders_only() -> None:
    """Known placeholders become values; an unknown placeholder-shaped string stays."""
    unknown = "[REDACTED:t:00000000]"
    assert restore_text(f"a {PHS[0]} b {unknown}", MAPPING) == f"a {VALUES[0]} b {unknown}"


def test_json_escaped_values_are_valid_inside_json_strings() -> None:
    """In JSON source (argument deltas), a value with quotes and newlines is escaped."""
    src = '{"cmd": "' + PHS[1] + '"}'
    assert json.loads(restore_text(src, json_escaped(MAPPING))) == {"cmd": VALUES[1]}


def test_one_character_pieces_are_reassembled() -> None:
    """A placeholder streamed one character at a time comes out as its value."""
    text = f"x {PHS[0]} y [not {PHS[2]}] ["
    r = StreamRestorer(MAPPING)
    out = "".join(r.feed(ch) for ch in text) + r.flush()
    assert out == restore_text(text, MAPPING)


def test_only_a_possible_prefix_is_held_back() -> None:
    """Text is released at once unless its tail could still become a known placeholder."""
    r = StreamRestorer(MAPPING)
    assert r.feed("hello [") == "hello "
    assert r.pending == "["
    assert r.feed("x") == "[x"  # "[x" is no placeholder prefix: released
    assert r.feed("[REDACTED:t") == ""
    assert r.feed(" nope") == "[REDACTED:t nope"
    assert r.pending == ""


def test_empty_mapping_holds_nothing() -> None:
    """With nothing redacted, the restorer is a pass-through."""
    r = StreamRestorer({})
    assert r.feed("[REDACTED:") == "[REDACTED:"


@settings(max_examples=80, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(st.text(alphabet="ab[]:RED_ACT0123456789 ", max_size=8), st.sampled_from(PHS)),
        max_size=12,
    ),
    data=st.data(),
)
def test_any_split_restores_like_the_whole(pieces: list[str], data: st.DataObject) -> None:
    """However the answer is split, the stream restores exactly as the whole text would."""
    text = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    chunks, pos = [], 0
    for c in [*cuts, len(text)]:
        chunks.append(text[pos:c])
        pos = c
    r = StreamRestorer(MAPPING)
    out = "".join(r.feed(c) for c in chunks) + r.flush()
    assert out == restore_text(text, MAPPING)
    assert len(r.pending) == 0
