"""Whether a streamed answer reached its provider's terminal event. Pure.

An upstream that hangs up mid-answer on a close-delimited stream (no ``Content-Length``, no
chunked framing) looks to an HTTP client exactly like a stream that ended normally. The
providers' own protocols say when an answer is complete, so the firewall watches for that:

- Anthropic Messages: ``message_stop`` (or an ``error`` event the upstream sent itself);
- OpenAI Chat and Completions: ``data: [DONE]`` (or a chunk holding an ``error`` object);
- OpenAI Responses: ``response.completed``, ``response.incomplete``, ``response.failed`` or
  ``error``;
- Gemini SSE: a chunk whose candidate carries ``finishReason``, a ``promptFeedback`` with a
  ``blockReason`` (the prompt was refused: no candidates follow), or Google's ``error`` object;
- Gemini's JSON-array stream: the array is closed and parses as JSON.

A stream that ends without one is *cut*: the relay then ends it with the provider's error event
and records ``proxy.upstream_error``. An operation with no known terminal event is never called
cut (there is nothing to judge it by).
"""

from __future__ import annotations

import json
import re

from domestique.proxy.routes import Operation
from domestique.proxy.sse import SSEParser

_RESPONSES_END = frozenset(
    {"response.completed", "response.incomplete", "response.failed", "error"}
)
_ANTHROPIC_END = frozenset({"message_stop", "error"})
# The ``type`` of an event whose ``event:`` line is missing: the first key of its JSON object.
_TYPE = re.compile(r'^\s*\{\s*"type"\s*:\s*"([^"\\]{1,64})"')
# JSON-escaped model text cannot hold this (its quotes are escaped), so a match is a real key.
_ERROR_KEY = re.compile(r'^\s*\{\s*"error"\s*:')

_SSE_OPERATIONS = frozenset(
    {
        Operation.ANTHROPIC_MESSAGES,
        Operation.OPENAI_CHAT,
        Operation.OPENAI_COMPLETIONS,
        Operation.OPENAI_RESPONSES,
        Operation.GEMINI_STREAM,
    }
)


class StreamEnd:
    """Feed the upstream's bytes as relayed; ``complete`` says whether the answer finished.

    ``array`` is Gemini's JSON-array stream (``streamGenerateContent`` without ``alt=sse``):
    its bytes are kept and parsed whole at the end, the only exact test of a closed array.
    """

    __slots__ = ("_array", "_done", "_judged", "_operation", "_parser")

    def __init__(self, operation: Operation, *, array: bool = False) -> None:
        self._operation = operation
        self._judged = array or operation in _SSE_OPERATIONS
        self._parser = SSEParser() if not array else None
        self._array: bytearray | None = bytearray() if array else None
        self._done = False

    def feed(self, chunk: bytes) -> None:
        if not self._judged:
            return
        if self._array is not None:
            self._array += chunk
            return
        assert self._parser is not None
        for ev in self._parser.feed(chunk):
            if self._terminal(ev.event, ev.data):
                self._done = True

    @property
    def complete(self) -> bool:
        """True once a terminal event arrived, or when there is no way to tell."""
        if not self._judged or self._done:
            return True
        if self._array is not None:
            try:
                value = json.loads(self._array)
            except ValueError:
                return False
            return isinstance(value, list)
        assert self._parser is not None
        # A last event the upstream closed without its blank line still counts.
        return any(self._terminal(ev.event, ev.data) for ev in self._parser.close())

    def _terminal(self, event: str | None, data: str | None) -> bool:
        op = self._operation
        if op is Operation.ANTHROPIC_MESSAGES:
            return event in _ANTHROPIC_END or _type(data) in _ANTHROPIC_END
        if op is Operation.OPENAI_RESPONSES:
            return event in _RESPONSES_END or _type(data) in _RESPONSES_END
        if data is None:
            return False
        if _ERROR_KEY.match(data):
            return True
        if op is Operation.GEMINI_STREAM:
            return '"finishReason"' in data or '"blockReason"' in data
        return data.strip() == "[DONE]"


def _type(data: str | None) -> str | None:
    if data is None:
        return None
    m = _TYPE.match(data)
    return m.group(1) if m else None
