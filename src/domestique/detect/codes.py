"""Reason codes of the detection engine. Rule ids in the rule files are added by the engine."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode("secret.known_value", "A value of the developer's own secrets (env, .env files)."),
    ReasonCode("records.customer", "Two or more fields of one registered customer record."),
)
