"""Reason codes of the detection engine: every rule id and detector code is registered."""

from __future__ import annotations

from domestique.detect.codes import REASON_CODES
from domestique.detect.ruleset import builtin_rules
from domestique.reason_codes import is_known


def test_every_rule_id_and_detector_code_is_declared() -> None:
    """Rule ids come from the rule files, so a new rule cannot be emitted unregistered."""
    declared = {rc.code for rc in REASON_CODES}
    assert {r.id for r in builtin_rules()} <= declared
    assert {"secret.known_value", "records.customer"} <= declared
    assert len(declared) == len(REASON_CODES)


def test_registry_knows_the_detect_codes() -> None:
    """The global registry imports these codes (engine.detector_error is a core code)."""
    assert is_known("secret.github_token")
    assert is_known("engine.detector_error")
    assert all(rc.meaning for rc in REASON_CODES)
