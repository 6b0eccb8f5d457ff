"""The Finding record: its JSON shape and the evidence it gives a decision record."""

from __future__ import annotations

import dataclasses

import pytest

from domestique.detect import Finding


def test_to_json_has_exactly_the_contract_fields() -> None:
    """{"code","start","end","fingerprint","preview"}, as the CLI contract says."""
    f = Finding("pii.email", 3, 9, "hmac-sha256:ab", "a@…z")
    assert f.to_json() == {
        "code": "pii.email",
        "start": 3,
        "end": 9,
        "fingerprint": "hmac-sha256:ab",
        "preview": "a@…z",
    }


def test_evidence_carries_where_preview_and_fingerprint() -> None:
    """Evidence for a record names where, and copies the masked preview and fingerprint."""
    ev = Finding("pii.email", 0, 1, "hmac-sha256:ab", "…(1)").evidence("messages[0].content")
    assert (ev.where, ev.preview, ev.fingerprint) == (
        "messages[0].content",
        "…(1)",
        "hmac-sha256:ab",
    )


def test_finding_is_frozen() -> None:
    """Findings cross module boundaries and cannot be changed on the way."""
    f = Finding("pii.email", 0, 1, "", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.code = "x"  # type: ignore[misc]
