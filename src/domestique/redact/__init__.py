"""Deterministic placeholders for redacted values, and restoring them in text and streams.

Pure: no I/O. A value is replaced by ``[REDACTED:<type>:<8 hex>]`` where the hex is a keyed HMAC
of the value, so the same value gives the same placeholder in every request (prompt caching and
Anthropic's thinking-prefix check keep working) and nobody without the install key can test a
guess against it. Restoring maps placeholders back to values in the model's answer, including
answers that arrive one character at a time.
"""

from __future__ import annotations

from domestique.redact._placeholders import (
    PLACEHOLDER_PATTERN,
    PlaceholderMaker,
    Span,
    redact_text,
)
from domestique.redact._restore import StreamRestorer, json_escaped, restore_text

__all__ = [
    "PLACEHOLDER_PATTERN",
    "PlaceholderMaker",
    "Span",
    "StreamRestorer",
    "json_escaped",
    "redact_text",
    "restore_text",
]
