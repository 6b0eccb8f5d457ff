"""The SSE parser: events complete at their blank line, whatever the piece boundaries."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.proxy.sse import EventFramer, SSEParser, make_event, with_data

STREAM = 'event: a\ndata: {"x": "é"}\n\n: comment\ndata: 1\ndata: 2\n\nid: 7\nevent: b\ndata: z\n\n'


def _all(pieces: list[bytes]) -> list[tuple[str | None, str | None]]:
    p = SSEParser()
    events = [e for piece in pieces for e in p.feed(piece)] + p.close()
    return [(e.event, e.data) for e in events]


def test_events_parse_with_names_and_joined_data() -> None:
    """event:, multi-line data:, comments and ids are read as the SSE spec says."""
    assert _all([STREAM.encode()]) == [("a", '{"x": "é"}'), (None, "1\n2"), ("b", "z")]


def test_crlf_and_cr_line_ends_are_normalised() -> None:
    """CRLF and bare CR end lines too, also when a CRLF is split between pieces."""
    crlf = STREAM.replace("\n", "\r\n").encode()
    assert _all([crlf[i : i + 1] for i in range(len(crlf))]) == _all([STREAM.encode()])
    assert _all([STREAM.replace("\n", "\r").encode()]) == _all([STREAM.encode()])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, len(STREAM.encode())), max_size=12))
def test_any_byte_split_gives_the_same_events(cuts: list[int]) -> None:
    """Pieces cut anywhere, inside UTF-8 sequences included, give the same events."""
    raw = STREAM.encode()
    pieces, pos = [], 0
    for c in sorted(cuts):
        pieces.append(raw[pos:c])
        pos = c
    pieces.append(raw[pos:])
    assert _all(pieces) == _all([raw])


def test_stream_without_final_blank_line_is_flushed_on_close() -> None:
    """A last event without its blank line still comes out at close."""
    assert _all([b"data: last"]) == [(None, "last")]


def test_unmodified_event_renders_as_it_came_and_with_data_keeps_other_lines() -> None:
    """Rendering keeps the lines; replacing data keeps event: and id: in place."""
    p = SSEParser()
    (ev,) = p.feed(b"id: 3\nevent: e\ndata: old\n\n")
    assert ev.render() == "id: 3\nevent: e\ndata: old\n\n"
    assert with_data(ev, "new").render() == "id: 3\nevent: e\ndata: new\n\n"
    assert make_event("x", "{}").render() == "event: x\ndata: {}\n\n"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=len(STREAM.encode())), max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_framer_passes_whole_events_only(cuts: list[int], eol: str) -> None:
    """Whatever the pieces, the framer sends whole events, and everything by the end."""
    raw = STREAM.replace("\n", eol).encode()
    bounds = sorted({0, len(raw), *(min(c, len(raw)) for c in cuts)})
    framer = EventFramer()
    sent = b""
    for a, b in itertools.pairwise(bounds):
        out = framer.feed(raw[a:b])
        sent += out
        if sent:
            assert sent.endswith((b"\n\n", b"\r\r", b"\r\n\r\n"))
            assert raw.startswith(sent)
    assert sent + framer.close() == raw


def test_framer_sees_mixed_line_ends() -> None:
    """An LF line end followed by a CRLF empty line also ends an event."""
    framer = EventFramer()
    assert framer.feed(b"data: 1\n\r\ndata: 2") == b"data: 1\n\r\n"
    assert framer.close() == b"data: 2"


def test_framer_drops_a_cut_off_event_on_abort() -> None:
    """After a failure, the half-received event is never sent."""
    framer = EventFramer()
    assert framer.feed(b'data: 1\n\ndata: {"tex') == b"data: 1\n\n"
    assert framer.abort() == b""
    assert framer.close() == b""
