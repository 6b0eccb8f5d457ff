"""Issue 17, round 9: names and made-up values that application code and its documentation
print where a key goes. Each cause with cases written here (no project's or corpus's text):
the case is quiet, and the same value in a place that states a credential is still found."""

from __future__ import annotations

import base64
import json

import pytest

from domestique.detect import Scanner
from domestique.detect.validators import jwt_structure, not_made_up_jwt, not_word_identifier

SIGNATURE = "Qm7tR2vLx9Kd3Wp8Zs1NcO5yH4uJ6gF0aE2iB9lM3nV"


def _jwt(payload: dict[str, object]) -> str:
    def part(obj: dict[str, object]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(payload)}.{SIGNATURE}"


# expired before JWTs existed (1970-01-02), and expired before it was issued
JWT_1970 = _jwt({"user_pk": 7, "token_type": "access", "exp": 123456, "jti": "4f1c9e"})
JWT_BEFORE_IAT = _jwt({"sub": "ada", "iat": 1716239022, "exp": 1716230000})
# a token that was valid once (expired in 2019) and one with no exp claim
JWT_2019 = _jwt({"user_id": "9a1c", "aud": "app:auth", "exp": 1571504193})
JWT_NO_EXP = _jwt({"sub": "ada", "name": "Ada King", "iat": 1716239022})
# an issuer that wrote iat in milliseconds: the exp (seconds) may well be live
JWT_IAT_MS = _jwt({"sub": "ada", "iat": 1716239022000, "exp": 1716242622})
TWILIO_HEX = "a83f0c9e2b71d4f00a9e1c2d3e4f5a6b"

QUIET = [
    # a JWT expired when made: a page's made-up token, as a response body or a bearer header
    f'  {{\n    "access": "{JWT_1970}"\n  }}\n',
    f'curl -H "Authorization: Bearer {JWT_1970}" http://127.0.0.1:8000/api/\n',
    f'{{"token": "{JWT_BEFORE_IAT}"}}\n',
    # the class an import statement brings in from a service's package
    "from twilio.rest.api.v2010 import A2PBrandRegistrationList\n",
    "from twilio.rest.api.v2010.account import A2PBrandRegistrationList, CallList\n",
    # the package a pip requirement's URL installs
    "-e git+https://github.com/acme/s3transfer.git@develop#egg=s3transfer\n",
    # a value whose own name says it is an identifier, right before it
    "# /complete/twilio/?AccountSid=ACc65ea16c9ebd4d4684edf814995b27\n",
    'plivo settings, "user_id": "9mFiSka6TXkd6zpSv7CXFcgv"\n',
    # names of words ending in a model's code, listed after a service's name in a string
    "models = ['mobile_phone_reader', 'simulated_stripe_s700', 'simulated_stripe_s710']\n",
    # printed output written under the call that prints it
    '    print(model.model_dump_json())\n    #> {"password":"Wq7-Lm2xPz9"}\n',
    '#> {"api_secret": "4be1f0c2a9d87e3b56c1d0e9f8a7b6c5"}\n',
    # the query of a status badge's image URL, embedded in a README for every visitor
    "[![cov](https://cov.acme.dev/gh/o/r/branch/main/graph/badge.svg?token=Yq7x3mkz0a)](x)\n",
    '<img src="https://ci.acme.dev/badges/build.svg?token=Yq7x3mkz0a">\n',
    "https://ci.acme.dev/badge?branch=main&token=Yq7x3mkz0a\n",
]

FOUND = [
    # a JWT that was valid once, or says nothing of its expiry, is still a JWT
    (f'{{"access_token": "{JWT_2019}"}}\n', "secret.jwt"),
    (f'{{"access_token": "{JWT_NO_EXP}"}}\n', "secret.jwt"),
    (f"Authorization: Bearer {JWT_2019}\n", "secret.jwt"),
    # the same service key assigned, not imported
    (f'twilio_token = "{TWILIO_HEX}"\n', "secret.twilio_key"),
    (f"from twilio.rest import Client; twilio_auth = '{TWILIO_HEX}'\n", "secret.twilio_key"),
    ("ipinfo token = 'a83f0c9e2b71d4'\n", "secret.named_service_key"),
    ('plivo settings, "auth": "9mFiSka6TXkd6zpSv7CXFcgv"\n', "secret.named_service_key"),
    # a key with a letter and digits at its end is no name of words
    ("STRIPE_SECRET = 'Lm4Pz7Rt5Wv8Yb3k9Xq2_s700'\n", "secret.service_credential"),
    # "#>" opening a line's output; elsewhere on a line (or with no space after it) it is not
    ('x = 1  #> {"password":"Wq7-Lm2xPz9"}\n', "secret.password_assignment"),
    ('# {"password":"Wq7-Lm2xPz9"}\n', "secret.password_assignment"),
    # a token in the query of a URL that is no badge image
    ('curl "https://api.acme.dev/v1/report?token=Yq7x3mkz0a"\n', "secret.generic_secret"),
    ("https://acme.dev/badge_upload?token=Yq7x3mkz0a\n", "secret.generic_secret"),
    ("https://acme.dev/badges/x/y?token=Yq7x3mkz0a\n", "secret.generic_secret"),
]


@pytest.mark.parametrize("text", QUIET)
def test_a_name_or_a_made_up_value_where_a_key_goes_is_not_reported(
    scanner: Scanner, text: str
) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert [c for c, _ in found if c.startswith("secret.")] == []


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_the_same_shapes_as_credentials_are_still_found(
    scanner: Scanner, text: str, code: str
) -> None:
    codes = {f.code for f in scanner.scan(text)}
    assert code in codes


@pytest.mark.parametrize(
    ("token", "live"),
    [
        (JWT_1970, False),
        (JWT_BEFORE_IAT, False),
        (JWT_2019, True),
        (JWT_NO_EXP, True),
        (JWT_IAT_MS, True),
    ],
)
def test_a_jwt_expired_when_made_is_not_taken(token: str, live: bool) -> None:
    assert jwt_structure(token) is live
    assert not_made_up_jwt(token) is live


def test_not_made_up_jwt_passes_any_other_token() -> None:
    assert not_made_up_jwt("4be1f0c2a9d87e3b56c1d0e9f8a7b6c5")
    assert not_made_up_jwt("a.b.c")
    # a payload that is not base64 or not JSON says nothing of an expiry
    assert not_made_up_jwt("eyJhbGciOiJIUzI1NiJ9.eyJ!!!.sig")
    assert not_made_up_jwt(
        "eyJhbGciOiJIUzI1NiJ9." + base64.urlsafe_b64encode(b'{"exp": "soon"}').decode() + ".s"
    )


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("simulated_stripe_s700", True),
        ("verifone_reader_m425", True),
        ("engine1_upgrades", True),
        ("simulated_stripe_s70000", False),
        ("k9Xq2Lm4Pz7Rt5Wv8Yb3_s700", False),
        ("s700", False),
    ],
)
def test_words_ending_in_a_model_code_read_as_a_name(value: str, name: bool) -> None:
    assert not_word_identifier(value) is not name
