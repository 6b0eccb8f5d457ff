"""Issue 17, round 12: a format's placeholder written with filler characters (a held-out
snippet set's ``AKIAXXXXXXXXXXXXXXXX`` and ``hooks.slack.com/services/TXXXXXXXX/…``), a
CloudFormation ``{{resolve:…}}`` reference and a value masked with bullets are no finding; a
real value of the same format in the same place still is."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.validators import no_filler_run

QUIET = [
    'export AWS_ACCESS_KEY_ID="AKIAXXXXXXXXXXXXXXXX"\n',
    "aws_access_key_id = ASIA0000000000000000\n",
    'webhook: "https://hooks.slack.com/services/TXXXXXXXX/BXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"\n',
    # a CloudFormation dynamic reference: the stack reads the password from Secrets Manager
    '{\n  "MasterUserPassword": "{{resolve:secretsmanager:orders-db:SecretString:password}}"\n}\n',
    "DbPassword: '{{resolve:ssm-secure:/prod/db/password:3}}'\n",
    # a value masked for display by a CLI
    "STRIPE_SECRET_KEY: sk_live_\u2022\u2022\u2022\u2022\u2022\u2022\u2022\u2022XOft\n",
]
FOUND = [
    ('export AWS_ACCESS_KEY_ID="AKIAQ3EGRT7KZB2MWX5N"\n', "secret.aws_access_key_id"),
    (
        'webhook: "https://hooks.slack.com/services/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"\n',
        "secret.slack_webhook",
    ),
    # a literal after the reference is no reference; nor a password holding braces
    ('"MasterUserPassword": "{{resolve:x}}Hq9!mP2v"\n', "secret.password_assignment"),
    ('if ("m{{h}o)p${e]nob(ody" == password) {\n', "secret.password_assignment"),
    ("STRIPE_SECRET_KEY: aB3dE5fG7hJ9kL1mN3pQ5rS7\n", "secret.service_credential"),
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
