"""Issue 17, round 8: values that documentation shows as examples (a doctest session, a value
under "for example"), each cause with cases written here (no project's or corpus's text): the
example is quiet, the same value without its context is still found."""

from __future__ import annotations

import pytest

from domestique.detect import Scanner
from domestique.detect.doc_examples import in_doctest, under_example_marker

BCRYPT = "$2b$12$Qm7tR2vLx9Kd3Wp8Zs1NcO5yH4uJ6gF0aE2iB9lM3nV7xT1rC8kDq"
HEX_KEY = "4be1f0c2a9d87e3b56c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZGEiLCJuYW1lIjoiQWRhIEtpbmciLCJpYXQiOjE3MT"
    "YyMzkwMjJ9.Qm7tR2vLx9Kd3Wp8Zs1NcO5yH4uJ6gF0aE2iB9lM3nV"
)

QUIET = [
    # a doctest session: the hash printed as the output of the line above
    f"    >>> h = hasher.hash(\"hunter2\")\n    >>> h\n    '{BCRYPT}'\n",
    # the value on the prompt line itself, and after a continuation line
    f">>> ctx = Context(secret_key='{HEX_KEY}')\n",
    f">>> token = encode(\n...     payload, 'k')\n>>> token\n'{JWT}'\n",
    # a marker in a comment just above, with a fence and a brace in between
    f"# Example configuration\nSECRET_KEY = '{HEX_KEY}'\n",
    f'# to get a string like this run:\n# openssl rand -hex 32\nSECRET_KEY = "{HEX_KEY}"\n',
    f'The response looks like this:\n\n```json\n{{\n    "access_token": "{JWT}"\n}}\n```\n',
    "For example:\n\n    db_password = 'Wq7-Lm2xPz9'\n",
    'a password such as ``"Wq7-Lm2xPz9"``::\n\n    >>> my_password = "Wq7-Lm2xPz9"\n',
    # a name that says its data is made up
    f'fake_users_db = {{\n    "ada": {{\n        "hashed_password": "{BCRYPT}",\n    }}\n}}\n',
]

FOUND = [
    # the same values without the context
    (f"h = '{BCRYPT}'\n", "secret.password_hash"),
    (f"SECRET_KEY = '{HEX_KEY}'\n", "secret.generic_secret"),
    (f'{{"access_token": "{JWT}"}}\n', "secret.jwt"),
    ("db_password = 'Wq7-Lm2xPz9'\n", "secret.password_assignment"),
    # a session's block ends at a blank line: the value after it is no output
    (f">>> import app\n\nSECRET_KEY = '{HEX_KEY}'\n", "secret.generic_secret"),
    # a marker more than five lines above is another paragraph's
    ("# Example\n" + "x = 1\n" * 6 + f"SECRET_KEY = '{HEX_KEY}'\n", "secret.generic_secret"),
    # "example" inside a name or an address is no marker
    (f"EXAMPLE_HOST = 'api.example.com'\nSECRET_KEY = '{HEX_KEY}'\n", "secret.generic_secret"),
    (f"# copied from examples/settings.py\nSECRET_KEY = '{HEX_KEY}'\n", "secret.generic_secret"),
    ("example_users = load()\ndb_password = 'Wq7-Lm2xPz9'\n", "secret.password_assignment"),
    # a provider's key format is found in a session and under a marker alike
    (">>> stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc9b1x'\n", "secret.stripe_key"),
    ("# for example\nGITHUB_TOKEN=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\n", None),
]


@pytest.mark.parametrize("text", QUIET)
def test_a_value_documentation_shows_as_an_example_is_not_reported(
    scanner: Scanner, text: str
) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == []


@pytest.mark.parametrize(("text", "code"), FOUND)
def test_the_same_values_without_an_example_context_are_found(
    scanner: Scanner, text: str, code: str | None
) -> None:
    codes = [f.code for f in scanner.scan(text) if f.code.startswith("secret.")]
    assert codes, text
    if code is not None:
        assert code in codes


def test_a_doctest_session_is_its_prompt_lines_and_their_block() -> None:
    text = "intro\n>>> a = 1\n... b = 2\noutput line\n\nafter the blank\n"
    assert in_doctest(text, text.index("a = 1"))
    assert in_doctest(text, text.index("b = 2"))
    assert in_doctest(text, text.index("output line"))
    assert not in_doctest(text, text.index("intro"))
    assert not in_doctest(text, text.index("after the blank"))


def test_example_markers_are_words_not_parts_of_names() -> None:
    for above in ("For instance:", "e.g. this one", "# sample values", "like this:"):
        text = f"{above}\nkey = 'v'\n"
        assert under_example_marker(text, text.index("'v'")), above
    for above in ("see https://example.org/x", "EXAMPLES_DIR = 'x'", "resample(data)"):
        text = f"{above}\nkey = 'v'\n"
        assert not under_example_marker(text, text.index("'v'")), above


# A password spelled from its own user name: a CI job's or a developer's own database.
USER_SPELLED_QUIET = [
    "DATABASE_URL: postgresql+psycopg2://ciuser:ciuserpassword@127.0.0.1:15432/app",
    "export DB_URL=mysql://app:app@localhost/app",
    "mysql://tester:tester_pass@0.0.0.0/app?charset=utf8",
    "    DB_USER: ciuser\n    DB_PASSWORD: ciuserpassword\n",
    "LDAP_ADMIN_USERNAME: admin\nLDAP_ADMIN_PASSWORD: admin_password\n",
]
USER_SPELLED_FOUND = [
    # the same on another host lets anyone in there
    ("postgresql://app:app@db.corp.internal/app", "secret.database_url"),
    ("postgresql://ciuser:ciuserpassword@10.0.3.4/app", "secret.database_url"),
    # a password that only starts with the user name is the user's own choice
    ("postgresql://app:app-Wq7Lm2x@localhost/app", "secret.database_url"),
    ("DB_USER: ciuser\nDB_PASSWORD: ciuser-Wq7Lm2x\n", "secret.password_assignment"),
]


@pytest.mark.parametrize("text", USER_SPELLED_QUIET)
def test_a_password_spelled_from_its_user_name_is_not_reported(scanner: Scanner, text: str) -> None:
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == []


@pytest.mark.parametrize(("text", "code"), USER_SPELLED_FOUND)
def test_other_passwords_beside_a_user_name_are_found(
    scanner: Scanner, text: str, code: str
) -> None:
    assert code in [f.code for f in scanner.scan(text)]


@pytest.mark.parametrize(
    "text", ['    upgrade_token="schema2_upgrades",', 'auth_token_scheme = "oauth2_bearer_header"']
)
def test_snake_case_words_with_a_number_after_a_word_are_a_name(
    scanner: Scanner, text: str
) -> None:
    assert [f.code for f in scanner.scan(text)] == []


@pytest.mark.parametrize(
    "text", ['upgrade_token = "Schema2_Upgrades_9fQ"', 'api_token = "kq7_zx4_Wm9Lp2Vr8Ts"']
)
def test_a_token_with_capitals_or_random_pieces_is_still_found(scanner: Scanner, text: str) -> None:
    assert "secret.generic_secret" in [f.code for f in scanner.scan(text)]
