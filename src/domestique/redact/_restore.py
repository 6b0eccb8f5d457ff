"""Restoring placeholders in the model's answer, whole or streamed in pieces."""

from __future__ import annotations

import json
from collections.abc import Mapping

from domestique.redact._placeholders import PLACEHOLDER_PATTERN


def json_escaped(mapping: Mapping[str, str]) -> dict[str, str]:
    """The mapping for text that is JSON source (tool-call argument deltas): values escaped.

    A secret with a quote, backslash or newline (a PEM key) must go back as ``\\"``, ``\\\\``,
    ``\\n`` inside a JSON string, or the arguments the tool receives would not parse.
    """
    return {ph: json.dumps(value, ensure_ascii=False)[1:-1] for ph, value in mapping.items()}


def restore_text(text: str, mapping: Mapping[str, str]) -> str:
    """Every complete placeholder of ``mapping`` in ``text`` replaced by its value.

    Placeholder-shaped strings that are not in ``mapping`` (the model invented one, or it came
    from elsewhere) stay as they are.
    """
    if not mapping or "[REDACTED:" not in text:
        return text
    return PLACEHOLDER_PATTERN.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


class StreamRestorer:
    """Restores placeholders in text that arrives in pieces (one channel of a stream).

    ``feed`` returns what can be released now; it holds back only a tail that is still a
    proper prefix of a placeholder in the mapping (so at most one placeholder's length, and
    nothing at all when no ``[`` is pending). ``flush`` releases the held tail at the end of
    the channel.
    """

    __slots__ = ("_mapping", "_max_len", "_pending", "_prefixes")

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self._mapping = mapping
        self._pending = ""
        self._max_len = max((len(p) for p in mapping), default=0)
        # Every proper prefix of every placeholder: the held tail must be one of them.
        self._prefixes = frozenset(p[:i] for p in mapping for i in range(1, len(p)))

    @property
    def pending(self) -> str:
        return self._pending

    def feed(self, piece: str) -> str:
        if not self._mapping:
            return piece
        text = self._pending + piece if self._pending else piece
        self._pending = ""
        cut = text.rfind("[")
        if cut != -1 and len(text) - cut < self._max_len and text[cut:] in self._prefixes:
            self._pending = text[cut:]
            text = text[:cut]
        return restore_text(text, self._mapping)

    def flush(self) -> str:
        """The held tail, as is: it never became a placeholder."""
        out, self._pending = self._pending, ""
        return out
