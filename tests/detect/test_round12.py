"""Issue 17, round 12: a format's placeholder written with filler characters (a held-out
snippet set's ``AKIAXXXXXXXXXXXXXXXX`` and ``hooks.slack.com/services/TXXXXXXXX/…``) is no
finding; a real value of the same format in the same place still is."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.validators import no_filler_run

QUIET = [
    'export AWS_ACCESS_KEY_ID="AKIAXXXXXXXXXXXXXXXX"\n',
    "aws_access_key_id = ASIA0000000000000000\n",
    'webhook: "https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"\n',
]
FOUND = [
    ('export AWS_ACCESS_KEY_ID="AKIAQ3EGRT7KZB2MWX5N"\n', "secret.aws_access_key_id"),
    (
        'webhook: "https://hooks.slack.com/services/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"\n',
        "secret.slack_webhook",
    ),
]


@pytest.mark.parametrize("text", QUIET)
def test_a_placeholder_in_a_providers_format_is_not_reported(scanner: Scanner, text: str) -> None:
    assert [f.code for f in scanner.scan(text) if f.code.startswith("secret.")] == []


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_a_real_value_in_the_same_place_is_found(scanner: Scanner, text: str, code: str) -> None:
    assert code in {f.code for f in scanner.scan(text)}


@pytest.mark.parametrize(
    ("value", "passes"),
    [("AKIAXXXXXXXXXXXXXXXX", False), ("T0000000000", False), ("aaaaaaaaXYZ", True),
     ("AKIAQ3EGRT7KZB2MWX5N", True), ("XXXXXXX1", True)],
)  # fmt: skip
def test_no_filler_run(value: str, passes: bool) -> None:
    assert no_filler_run(value) is passes
