"""The named-service rule (rules/named.toml) and its random_token validator."""

from __future__ import annotations

import re
import secrets
import string

import pytest

from domestique.detect import Scanner
from domestique.detect.ruleset import builtin_rules
from domestique.detect.validators import VALIDATORS, random_token

NAMED = next(r for r in builtin_rules() if r.id == "secret.named_service_key")


def _names_in_regex(regex: str) -> set[str]:
    match = re.search(r"\(\?:\^\|\[\^a-z0-9\]\)\(\?:([a-z0-9|]+)\)", regex)
    assert match is not None
    return set(match.group(1).split("|"))


def _code(scanner: Scanner, text: str) -> list[str]:
    return [f.code for f in scanner.scan(text)]


def test_keywords_are_exactly_the_names_the_regex_starts_with() -> None:
    """The name table is written twice (prefilter keywords, regex): the two lists agree."""
    assert set(NAMED.keywords) == _names_in_regex(NAMED.regex)
    assert len(NAMED.keywords) == len(set(NAMED.keywords))


def test_names_are_long_enough_to_be_cheap_keywords() -> None:
    """Short names fire everywhere in code; only a whole-word "mux" is allowed below 4 chars."""
    assert [k for k in NAMED.keywords if len(k) < 4] == ["mux"]


def test_random_token_is_registered() -> None:
    """The validator is reachable by name from rule files."""
    assert VALIDATORS["random_token"] is random_token


@pytest.mark.parametrize(
    "value",
    [
        "3fa0c9e2b71d4e",
        "vs3wn2cv445sk5v8",
        "K7q2X9m4LdP0wR8s",
        "c401f3eb-8827-4b8a-ad15-f5dda326e35a",
    ],
)
def test_random_token_accepts_generated_values(value: str) -> None:
    """Hex, base62 and UUID values with letters and digits interleaved pass."""
    assert random_token(value)


@pytest.mark.parametrize(
    "value",
    [
        "configuration",  # a word
        "9734741337193905",  # a bare number
        "base64encode",  # a code word with digits
        "sha256_digest",
        "2024-06-20T10:00",  # a date
        "v1.22.3-beta4",  # a version
        "api.example.com",  # a host
        "msg01274.html",  # a file
        "0x7f3a9b2c4d5e",  # a hex literal
        "your-key-1234abcd",  # a placeholder
        "a1b1a1b1a1b1a1b1",  # a repeated unit
        "abcdefgh12345678",  # an alphabet run
        "00000000-0000-0000-0000-000000000000",
    ],
)
def test_random_token_rejects_look_alikes(value: str) -> None:
    """Words, numbers, code words, dates, versions, hosts, files, placeholders are not keys."""
    assert not random_token(value)


def test_a_random_value_after_each_name_is_found(scanner: Scanner) -> None:
    """Every 7th name in the table, with a fresh random value, is found (by this rule, or by
    secret.service_credential for the names both tables hold: it has the higher priority)."""
    alphabet = string.ascii_letters + string.digits
    for name in NAMED.keywords[::7]:
        value = "k7" + "".join(secrets.choice(alphabet) for _ in range(22)) + "9Q"
        codes = _code(scanner, f'{name}_api_key = "{value}"')
        assert {NAMED.id, "secret.service_credential"} & set(codes), name


def test_value_on_the_next_line_is_not_taken(scanner: Scanner) -> None:
    """The value must be on the name's line: a key two lines below belongs to something else."""
    assert NAMED.id not in _code(scanner, "metabase settings\n\nvs3wn2cv445sk5v8q0m1x")


def test_identifier_names_are_not_credentials(scanner: Scanner) -> None:
    """A name ending in id / name / url / account names an identifier, not a secret."""
    for text in (
        "pusher_app_id = 'k7Q2x9M4Ld3P'",
        "clicksendAccountName: 'k7Q2x9M4Ld3P'",
        "cloudinary.project = 'k7Q2x9M4Ld3P'",
    ):
        assert NAMED.id not in _code(scanner, text), text


def test_a_short_value_needs_an_assignment(scanner: Scanner) -> None:
    """8-15 characters only after = : | or a quote; after bare words it takes 16+."""
    assert NAMED.id in _code(scanner, "ipinfo token = '3fa0c9e2b71d'")
    assert NAMED.id not in _code(scanner, "ipinfo returns 3fa0c9e2b71d for this")


def test_a_very_long_token_is_read_whole(scanner: Scanner) -> None:
    """A token longer than the rule's window is still found, over its whole length."""
    alphabet = string.ascii_letters + string.digits + "-_"
    value = ".".join("".join(secrets.choice(alphabet) for _ in range(300)) for _ in range(3))
    value = "A1" + value
    text = f"tallyfy token = '{value}'"
    found = [f for f in scanner.scan(text) if f.code == NAMED.id]
    assert found
    assert found[0].end - found[0].start == len(value)
