"""Typed, keyed, deterministic placeholders and span replacement."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass

# The hex part is 8 characters (32 bits): collisions inside one request are checked and fail
# closed (see PlaceholderMaker.placeholder), so the length only has to keep them rare.
PLACEHOLDER_HEX = 8
PLACEHOLDER_PATTERN = re.compile(r"\[REDACTED:[a-z0-9_]{1,40}:[0-9a-f]{8}\]")
_TYPE_CLEAN = re.compile(r"[^a-z0-9_]+")
_DERIVE_LABEL = b"domestique/redact/placeholder/v1"


class PlaceholderCollision(ValueError):
    """Two different values got the same placeholder; restoring would be ambiguous."""


def placeholder_type(code: str) -> str:
    """``secret.github_token`` -> ``github_token``; ``pii.email`` -> ``email``.

    The first segment of a reason code is its family; the rest names the kind of value. Only
    ``[a-z0-9_]`` remains, so a placeholder never needs escaping inside JSON or SSE.
    """
    rest = code.split(".", 1)[1] if "." in code else code
    cleaned = _TYPE_CLEAN.sub("_", rest.lower()).strip("_")[:40]
    return cleaned or "value"


class PlaceholderMaker:
    """Makes placeholders under a key derived from the install key. Holds no values."""

    __slots__ = ("_key",)

    def __init__(self, install_key: bytes) -> None:
        # A separate derived key: placeholders are shown to the model, fingerprints go to the
        # audit log; neither can be matched against the other.
        self._key = hmac.new(install_key, _DERIVE_LABEL, hashlib.sha256).digest()

    def placeholder(self, code: str, value: str) -> str:
        digest = hmac.new(
            self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()
        return f"[REDACTED:{placeholder_type(code)}:{digest[:PLACEHOLDER_HEX]}]"


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range ``[start, end)`` of a text to replace, with its code."""

    start: int
    end: int
    code: str


def merge_spans(spans: Iterable[Span], length: int) -> list[Span]:
    """Clip to ``[0, length)``, sort, and merge overlapping or touching spans.

    A merged span keeps the code of its longest member (first on ties): two detectors that
    see one value from different angles give one placeholder, not two overlapping ones.
    """
    clipped = sorted(
        (Span(max(0, s.start), min(length, s.end), s.code) for s in spans),
        key=lambda s: (s.start, -(s.end - s.start)),
    )
    out: list[Span] = []
    best_len: list[int] = []
    for span in clipped:
        if span.end <= span.start:
            continue
        if out and span.start < out[-1].end:
            last = out[-1]
            code = last.code
            if span.end - span.start > best_len[-1]:
                code, best_len[-1] = span.code, span.end - span.start
            out[-1] = Span(last.start, max(last.end, span.end), code)
        else:
            out.append(span)
            best_len.append(span.end - span.start)
    return out


def redact_text(
    text: str,
    spans: Iterable[Span],
    maker: PlaceholderMaker,
    mapping: MutableMapping[str, str],
) -> str:
    """``text`` with each span replaced by its placeholder; ``mapping`` gains placeholder->value.

    Raises :class:`PlaceholderCollision` if a placeholder already maps to a different value:
    the caller fails closed rather than restore the wrong secret.
    """
    merged = merge_spans(spans, len(text))
    if not merged:
        return text
    parts: list[str] = []
    pos = 0
    for span in merged:
        value = text[span.start : span.end]
        ph = maker.placeholder(span.code, value)
        known = mapping.get(ph)
        if known is not None and known != value:
            raise PlaceholderCollision("two values share one placeholder")
        mapping[ph] = value
        parts.append(text[pos : span.start])
        parts.append(ph)
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts)
