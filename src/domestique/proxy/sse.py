"""Server-sent events: an incremental parser and a writer. Pure.

Bytes arrive in arbitrary pieces; :class:`SSEParser` yields complete events as soon as their
blank line arrives, normalising CRLF and CR line ends to LF. An unmodified event is written back
as it came (its lines, LF-terminated), so time to first byte and the event text do not change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SSEEvent:
    """One event: its raw lines, and the parsed ``event`` name and joined ``data``."""

    lines: list[str]
    event: str | None
    data: str | None

    def render(self) -> str:
        return "\n".join(self.lines) + "\n\n"


def make_event(event: str | None, data: str, extra: list[str] | None = None) -> SSEEvent:
    """A new event with one ``data:`` line (JSON never contains a raw newline)."""
    lines = list(extra or [])
    if event is not None:
        lines.append(f"event: {event}")
    lines.append(f"data: {data}")
    return SSEEvent(lines, event, data)


def with_data(ev: SSEEvent, data: str) -> SSEEvent:
    """``ev`` with its data replaced; ``event:``, ``id:`` and other lines kept in place."""
    lines: list[str] = []
    placed = False
    for line in ev.lines:
        if line.startswith("data:"):
            if not placed:
                lines.append(f"data: {data}")
                placed = True
            continue
        lines.append(line)
    if not placed:
        lines.append(f"data: {data}")
    return SSEEvent(lines, ev.event, data)


def _parse(lines: list[str]) -> SSEEvent:
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line or line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    return SSEEvent(lines, event, "\n".join(data) if data else None)


class SSEParser:
    """Feed bytes, get complete events. UTF-8 split across pieces is handled."""

    __slots__ = ("_buf", "_cr", "_lines", "_partial")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._lines: list[str] = []
        self._partial = ""
        self._cr = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buf += chunk
        # Decode only whole UTF-8 sequences; keep an incomplete tail for the next piece.
        cut = len(self._buf)
        for back in range(1, min(4, len(self._buf)) + 1):
            byte = self._buf[-back]
            if byte < 0x80:
                break
            if byte >= 0xC0:
                need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if back < need:
                    cut = len(self._buf) - back
                break
        text = self._buf[:cut].decode("utf-8", "replace")
        del self._buf[:cut]
        return self._feed_text(text)

    def _feed_text(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if self._cr and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split across pieces
        self._cr = text.endswith("\r")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        parts = text.split("\n")
        parts[0] = self._partial + parts[0]
        self._partial = parts.pop()
        for line in parts:
            if line == "":
                if self._lines:
                    events.append(_parse(self._lines))
                    self._lines = []
            else:
                self._lines.append(line)
        return events

    def close(self) -> list[SSEEvent]:
        """Whatever is left, as a final event (a stream that ends without a blank line)."""
        rest = self._buf.decode("utf-8", "replace")
        self._buf.clear()
        events = self._feed_text(rest)
        if self._partial:
            self._lines.append(self._partial)
            self._partial = ""
        if self._lines:
            events.append(_parse(self._lines))
            self._lines = []
        return events


_BOUNDARIES = (b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n")  # any line end, then an empty line


class EventFramer:
    """Passes bytes through whole events at a time: a cut-off event is never half sent.

    For answers forwarded without restoring: the bytes are not parsed, only held from the
    last blank line on. If the upstream then breaks off, the client's stream is still at an
    event boundary, so an error event can follow without corrupting a half-sent one.
    """

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        buf = self._pending + chunk if self._pending else chunk
        # Only the new bytes (and the three before them) can hold a new boundary.
        lo = max(0, len(self._pending) - 3)
        cut = max((buf.rfind(b, lo) + len(b) if buf.rfind(b, lo) >= 0 else 0) for b in _BOUNDARIES)
        if cut == 0:
            self._pending = buf
            return b""
        self._pending = buf[cut:]
        return buf[:cut]

    def close(self) -> bytes:
        """What is held at a normal end (a last event without its blank line)."""
        rest, self._pending = self._pending, b""
        return rest

    def abort(self) -> bytes:
        """Drop the incomplete event after a failure; nothing of it is sent."""
        self._pending = b""
        return b""
