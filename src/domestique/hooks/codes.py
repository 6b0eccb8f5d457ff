"""Reason codes of the agent hooks."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode("hook.malformed_input", "The host's hook input was empty, not JSON or missing fields."),
)
