"""Reason codes of the detection engine: every rule id in ``rules/*.toml`` plus the detectors'.

The rule ids are read from the rule files themselves, so a new rule is registered by writing it.
"""

from __future__ import annotations

from domestique.detect.ruleset import builtin_rules
from domestique.reason_codes import ReasonCode

_DETECTOR_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "secret.known_value",
        "A value of the developer's own secrets (secret-named env vars, .env files) appears.",
    ),
    ReasonCode(
        "records.customer",
        "Values from two or more fields of one registered customer record appear together.",
    ),
)

REASON_CODES: tuple[ReasonCode, ...] = _DETECTOR_CODES + tuple(
    ReasonCode(rule.id, rule.description) for rule in builtin_rules()
)
