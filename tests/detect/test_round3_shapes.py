"""Issue 17, round 3 (generated set): recall shapes and false findings, one cause per case,
each case written here (no corpus's or generated item's text)."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner

FOUND = [
    # a command's own password option
    ("redis-cli -h cache-2.corp.internal -a 'Ferry.Lamp42' info", "secret.cli_password_option",
     "Ferry.Lamp42"),
    ("mysqldump -h db -u backup -p'Qz7rTm2LxWp' shop > shop.sql", "secret.cli_password_option",
     "Qz7rTm2LxWp"),
    ('mysql -u root -p"Harbor.1999" -e "show databases"', "secret.cli_password_option",
     "Harbor.1999"),
    ("htpasswd -bc /etc/apache2/.htpasswd ops Lk3vR8qZ2m", "secret.cli_password_option",
     "Lk3vR8qZ2m"),
    ("printf 'Kettle_Drum7' | sudo -S apt-get update", "secret.cli_password_option",
     "Kettle_Drum7"),
    ("$p = ConvertTo-SecureString -String 'Q9x!Rz7Lm' -AsPlainText -Force",
     "secret.cli_password_option", "Q9x!Rz7Lm"),
    ("az login --username ops@corp-mail.net --password Wv8nQ2xLr5", "secret.cli_password_option",
     "Wv8nQ2xLr5"),
    # a literal decoded into a secret's name, or a bytes literal under it
    ('SECRET_KEY = bytes.fromhex("9c1e44b0d7a35f62e8b1a0c97d3f5e2b6a48c0d1e7f3b2a9")',
     "secret.decoded_literal_secret", "9c1e44b0d7a35f62e8b1a0c97d3f5e2b6a48c0d1e7f3b2a9"),
    ("encryption_key = b'Zq3XvR7tLm9Kp2Wn5Yc8Bh1Jd4Fg6Ts0'", "secret.decoded_literal_secret",
     "Zq3XvR7tLm9Kp2Wn5Yc8Bh1Jd4Fg6Ts0"),
    # a key stated in a message, a login pair in a message
    ("fyi the api token for staging is 7Hq2Lx9Rv4Tm8Kz1Wc5Bn3Yp6, rotate it friday",
     "secret.prose_api_key", "7Hq2Lx9Rv4Tm8Kz1Wc5Bn3Yp6"),
    ("Paste the API key `Rm4Tz8Qx2Lv7Kp1Wn9Bc3Hy5` into the form.", "secret.prose_api_key",
     "Rm4Tz8Qx2Lv7Kp1Wn9Bc3Hy5"),
    ("sign in as backup/Pelican_2024 until SSO works", "secret.prose_login_pair", "Pelican_2024"),
    ("just use ops/Tundra.77 to log in", "secret.prose_login_pair", "Tundra.77"),
    # a Twilio token after the SID's variable; a header's name/value pair (HAR files)
    ('twilio_client = Client(account_sid, "9d2f4b7a1c6e3085f4a2d9c1b7e6a350")',
     "secret.twilio_auth_token", "9d2f4b7a1c6e3085f4a2d9c1b7e6a350"),
    ('{"name": "authorization", "value": "Basic b3BzOlBlbGljYW5fMjAyNA=="}',
     "secret.http_basic_auth", "b3BzOlBlbGljYW5fMjAyNA=="),
    ('{"name": "x-api-key", "value": "Tz4Lq8Rm2Xv7Kn1Wp9Bc5Hy3"}', "secret.env_list_password",
     "Tz4Lq8Rm2Xv7Kn1Wp9Bc5Hy3"),
    # personal data in prose: an SSN after "social", phones after words of other languages
    ("his social is 536 90 4399 per the form", "pii.us_ssn", "536 90 4399"),
    ("Handy: 0172 4839201", "pii.phone", "0172 4839201"),
    ("mon portable : 07 12 48 93 60", "pii.phone", "07 12 48 93 60"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "code", "value"), FOUND)
def test_round3_shapes_are_found(scanner: Scanner, text: str, code: str, value: str) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert any(c == code and value in v for c, v in found), found


CLEAN = [
    # the option given a reference, or no value (the client asks), or a shell for sudo -s
    'redis-cli -a "$REDIS_PASSWORD" ping',
    "mysqldump -u root -p shop > shop.sql",
    'mysql -u root -p"${MYSQL_ROOT_PASSWORD}" -e "select 1"',
    "htpasswd -c /etc/apache2/.htpasswd ops",
    'echo "$SUDO_PASS" | sudo -S true',
    "echo 'apt-get update' | sudo -s",
    "$p = ConvertTo-SecureString $env:PLAIN -AsPlainText -Force",
    # decoding a variable, a bytes literal that is a word or a header's name
    'SECRET_KEY = bytes.fromhex(os.environ["SECRET_KEY_HEX"])',
    "token = b'Authorization: Bearer'",
    # a key that is not stated, a placeholder in the backticks, a path as the "password"
    "the api key is stored in vault, ask in #platform",
    "Paste the API key `<YOUR_API_KEY>` into the form.",
    "use src/login.py to log in from the shell",
    "log in with <user>/<password>",
    # a setting about the password: a template's id, a pattern (camelCase and _RE)
    'const passwordResetTemplateId = "d-5c1f0e9b7a3d4e2f8b6a1c0d9e7f5a3b"',
    "PASSWORD_RE = re.compile(r'^(?=.*[A-Z])(?=.*\\d).{10,}$')",
    # a CAPTCHA site key served to every page, a namespaced cache key, a webhook delivery id
    '<div class="h-captcha" data-sitekey="4c0f5d2a-8b1e-4f3a-9c7d-2e6b1a0f8d3c"></div>',
    "INFO  cache miss key=session:8812:flags",
    "X-GitHub-Delivery: 3f0c2a9e-7b41-4d8e-a1c6-5e2f9b0d7a14",
    # the SID's variable beside another variable; a header's name/value pair with a reference
    "client = Client(account_sid, auth_token)",
    '{"name": "x-api-key", "value": "${API_KEY}"}',
    # a Message-ID's machine-made local part names a message
    "Message-ID: <8f3e2a91c04b7d65.1739201144@mx.tidewater-clinic.org>",
    # an SSN-looking number beside "social" outside the valid range, a bare short number
    "social 901 23 4567",
    "handy 0160 rows",
]


@pytest.mark.parametrize("text", CLEAN)
def test_round3_carriers_yield_no_finding(scanner: Scanner, text: str) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == []
