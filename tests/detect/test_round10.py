"""Issue 17, round 10: public and made-up values a held-out set of snippets put where a key
goes. Each cause with cases written here: the case is quiet, and a credential in the same
place is still found."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.validators import holds_a_digit, placeholder_phrase

# the base64 of an SSH public key's wire format (a made-up key body after the real prefix)
ED25519_PUB = "AAAAC3NzaC1lZDI1NTE5AAAAIH7qK2mXv9pL4sR8tW1yZ3bN6cD0fG5hJ2kM9nQ4rT7u"
RSA_PUB = "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vQ2mXk9pL4sR8tW1yZ3bN6cD0fG5hJ2kM9nQ4rT7uVw8xYz1aBcDeFgH"
TWILIO_SID = "AC4dae7842172ceba30a5cdcdb28cab88c"
MESSAGING_SID = "MG1f6e615684eadf4ba513dc15e4cb5d40"

QUIET = [
    # known_hosts and authorized_keys lines: a service's name, then its public key
    f"github.com ssh-ed25519 {ED25519_PUB}\n",
    f"gitlab.example.com ssh-rsa {RSA_PUB}\n",
    f"heroku_deploy_key: ssh-ed25519 {ED25519_PUB} deploy@ci\n",
    # Twilio SIDs name the account and a messaging service; the token is read from elsewhere
    f"TWILIO_ACCOUNT_SID={TWILIO_SID}\nTWILIO_MESSAGING_SERVICE_SID={MESSAGING_SID}\n"
    "TWILIO_AUTH_TOKEN=${TWILIO_AUTH_TOKEN}\n",
    # interface text under a key-named translation key
    '{\n  "settings.api_key.title": "API keys",\n'
    '  "settings.api_key.create": "Create new secret key"\n}\n',
    # a test's stand-in password
    "await request(app).post('/login').send({ user: 'test-user', password: 'test-password' });\n",
    "login(username='alice', password='dummy_password')\n",
    # keyring's service name, the first of three arguments
    'keyring.set_password("orders-cli", getpass.getuser(), token)\n',
    # a Slack token that says it is none
    'client = WebClient(token="xoxb-not-a-real-token-this-will-not-work")\n',
]


@pytest.mark.parametrize("text", QUIET)
def test_a_public_or_stand_in_value_where_a_key_goes_is_not_reported(
    scanner: Scanner, text: str
) -> None:
    found = [f.code for f in scanner.scan(text) if f.code.startswith("secret.")]
    assert found == []


FOUND = [
    ("SLACK_BOT_TOKEN=xoxb-2210535565-2210535571-Ue9P3C4DSA7Lc360a9Y6yNd1\n", "secret.slack_token"),
    # the auth token beside the SID that no longer counts
    (
        f"TWILIO_ACCOUNT_SID={TWILIO_SID}\nTWILIO_AUTH_TOKEN=9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c\n",
        "secret.twilio_key",
    ),
    ("zendesk_token = 'Qm7tR2vLx9Kd3Wp8Zs1NcO5yH4uJ6gF0aE'\n", "secret.service_credential"),
    ("password: 'Maple%0671Falcon'\n", "secret.password_assignment"),
    ("password = 'fancy password'\n", "secret.password_assignment"),
    ('api_secret = "Qm7tR2vLx9Kd3Wp8Zs1NcO5y"\n', "secret.generic_secret"),
    # a setter's one argument is the password
    ('user.set_password("Tr0ub4dor&3x")\n', "secret.password_assignment"),
    ('account.setPassword("Xk92!mqLw7");\n', "secret.password_assignment"),
    # two "words" with a space, the second a token: not interface text
    ('acmeToken := "Bearer qwhtnLPeXrZbmoKjUUYaTiRr"\n', "secret.generic_secret"),
]


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_the_same_places_with_a_credential_are_still_found(
    scanner: Scanner, text: str, code: str
) -> None:
    assert code in {f.code for f in scanner.scan(text)}


@pytest.mark.parametrize(
    ("value", "stand_in"),
    [
        ("test-password", True),
        ("dummy_token", True),
        ("demo secret", True),
        ("fancy password", False),  # two words that may well be the password
        ("test-Hunter2", False),
        ("irc_pass", False),
    ],
)
def test_a_stand_in_word_before_the_field_word_is_a_placeholder(value: str, stand_in: bool) -> None:
    assert placeholder_phrase(value) is stand_in


def test_holds_a_digit() -> None:
    assert holds_a_digit("xoxb-2210535565-abc")
    assert not holds_a_digit("xoxb-not-a-real-token")
