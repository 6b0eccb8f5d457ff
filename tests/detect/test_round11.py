"""Issue 17, round 11: a key documentation shows as an example once and then uses again in
the same text. Each case is quiet, and the same key in the same places, never marked as an
example, is still found."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.doc_examples import shown_as_example

KEY = "7c1e94b0a35d2f68e1b4c09a7d3f5e2b6a8c0d4f9e1b3a5c7d9f0e2a4b6c8d0e"

SHOWN_ONCE = (
    "A secret key should be a long random string. For example, copy the output of\n"
    "this to your config::\n\n"
    "    $ python -c 'import secrets; print(secrets.token_hex())'\n"
    f"    '{KEY}'\n\n"
    "Set several keys at once with dict.update::\n\n"
    "    app.config.update(\n"
    "        TESTING=True,\n"
    f"        SECRET_KEY='{KEY}'\n"
    "    )\n"
)

NEVER_SHOWN = (
    "Deployment notes for the orders service.\n\n"
    "    app.config.update(\n"
    "        TESTING=True,\n"
    f"        SECRET_KEY='{KEY}'\n"
    "    )\n\n"
    "The worker reads the same settings::\n\n"
    f"    SECRET_KEY = '{KEY}'\n"
)


FILLER = "".join(f"step {i}: restart the worker\n" for i in range(8))


def _secrets(scanner: Scanner, text: str) -> list[str]:
    return [f.code for f in scanner.scan(text) if f.code.startswith("secret.")]


def test_a_key_used_again_after_documentation_shows_it_as_an_example_is_quiet(
    scanner: Scanner,
) -> None:
    assert _secrets(scanner, SHOWN_ONCE) == []


def test_the_same_key_used_twice_and_never_marked_as_an_example_is_found(
    scanner: Scanner,
) -> None:
    assert _secrets(scanner, NEVER_SHOWN) == ["secret.generic_secret"] * 2


def test_a_different_key_beside_the_example_is_still_found(scanner: Scanner) -> None:
    other = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    text = SHOWN_ONCE.replace(f"SECRET_KEY='{KEY}'", f"SECRET_KEY='{other}'")
    assert _secrets(scanner, text) == ["secret.generic_secret"]


@pytest.mark.parametrize("value", ["Xk92mq", "hunter2hunter"])
def test_a_short_value_is_not_looked_for_again(value: str) -> None:
    # a short value repeats by chance: the place that is not marked keeps its finding
    text = f"For example:\n  password = '{value}'\n" + FILLER + f"real = '{value}'\n"
    start = text.rindex(value)
    assert shown_as_example(text, text.index(value), text.index(value) + len(value))
    assert not shown_as_example(text, start, start + len(value))


def test_a_long_value_is_looked_for_again() -> None:
    text = f"For example:\n  key = '{KEY}'\n" + FILLER + f"real = '{KEY}'\n"
    start = text.rindex(KEY)
    assert not shown_as_example(text, start)  # without its end, only its own place
    assert shown_as_example(text, start, start + len(KEY))


ARGON = (
    "$argon2id$v=19$m=65536,t=3,p=4$g2/AV1zwopqUntPKJavBFw$"
    "BwpRGDCyUHLvHICnwijyX8ROGoiUPwNKZ7915MeYfCE"
)
RECORD = (
    '    "alice": {\n'
    '        "username": "alice",\n'
    '        "full_name": "Alice Chains",\n'
    '        "email": "alice@example.com",\n'
    f'        "hashed_password": "{ARGON}",\n'
    '        "disabled": False,\n'
    "    },\n"
)


def test_a_hash_deep_inside_a_literal_a_made_up_name_opens_is_quiet(scanner: Scanner) -> None:
    text = "fake_users_db = {\n" + RECORD * 3 + "}\n"
    assert _secrets(scanner, text) == []


@pytest.mark.parametrize("name", ["users_db", "prod_users"])
def test_the_same_records_under_a_plain_name_are_found(scanner: Scanner, name: str) -> None:
    text = f"{name} = {{\n" + RECORD * 3 + "}\n"
    assert set(_secrets(scanner, text)) == {"secret.password_hash"}


def test_a_hash_after_the_made_up_literal_closed_is_found(scanner: Scanner) -> None:
    text = (
        "fake_users_db = {\n"
        + RECORD
        + "}\n\nusers = {\n"
        + RECORD.replace("alice", "bob").replace("BwpRGDCy", "Kq7vT2mZ")
        + "}\n"
    )
    assert _secrets(scanner, text) == ["secret.password_hash"]


TOKEN = "401f7ac837da42b97f613d789819ff93537bee6a"


def test_a_header_token_documentation_shows_for_example_is_quiet(scanner: Scanner) -> None:
    text = (
        '    """\n    Clients should authenticate by passing the token key in the "Authorization"\n'
        '    HTTP header, prepended with the string "Token ".  For example:\n\n'
        f"        Authorization: Token {TOKEN}\n"
        '    """\n'
    )
    assert _secrets(scanner, text) == []


@pytest.mark.parametrize(
    "text",
    [
        f"curl -H 'Authorization: Token {TOKEN}' https://api.internal/orders\n",
        f"Clients pass the token in the header:\n\n    Authorization: Token {TOKEN}\n",
    ],
)
def test_a_header_token_without_an_example_marker_is_found(scanner: Scanner, text: str) -> None:
    assert _secrets(scanner, text) == ["secret.bearer_token"]
