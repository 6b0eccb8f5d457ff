"""Validators: checksums and structure checks that keep look-alikes out."""

from __future__ import annotations

import base64
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import validators as v


def _github(prefix: str, payload: str) -> str:
    return prefix + payload + v.base62_encode(zlib.crc32(payload.encode()), 6)


def test_github_crc32_accepts_a_correct_checksum_and_rejects_one_flipped_char() -> None:
    """The last six base62 chars must be the CRC32 of the 30-char payload."""
    token = _github("ghp_", "zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ")
    assert v.github_crc32(token)
    assert not v.github_crc32(token[:-1] + ("A" if token[-1] != "A" else "B"))
    assert not v.github_crc32("ghp_" + "x" * 36)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=v.BASE62, min_size=30, max_size=30))
def test_github_crc32_holds_for_any_payload(payload: str) -> None:
    """Any payload with its own checksum validates."""
    assert v.github_crc32(_github("gho_", payload))


def test_base62_encode_pads_to_width() -> None:
    """Small numbers are left-padded with zeros, as GitHub's checksum is."""
    assert v.base62_encode(0, 6) == "000000"
    assert v.base62_encode(61, 2) == "0z"
    assert v.base62_encode(62, 2) == "10"


@pytest.mark.parametrize(
    ("number", "ok"),
    [
        ("4111 1111 1111 1111", True),
        ("378282246310005", True),
        ("5555-5555-5555-4444", True),
        ("4111 1111 1111 1112", False),
        ("0000 0000 0000 0000", False),
        ("12345", False),
    ],
)
def test_luhn(number: str, ok: bool) -> None:
    """Luhn mod 10 over 12-19 digits; one repeated digit is not a card."""
    assert v.luhn(number) is ok


@pytest.mark.parametrize(
    ("iban", "ok"),
    [
        ("DE89 3704 0044 0532 0130 00", True),
        ("GB82WEST12345698765432", True),
        ("FR1420041010050500013M02606", True),
        ("DE89 3704 0044 0532 0130 01", False),
        ("GB82WEST1234569876543", False),  # wrong length for GB
        ("ZZ00 1234 5678 9012 34", False),  # unknown country
    ],
)
def test_iban_mod97(iban: str, ok: bool) -> None:
    """Country length plus ISO 7064 mod 97-10."""
    assert v.iban_mod97(iban) is ok


@pytest.mark.parametrize(
    ("ssn", "ok"),
    [
        ("536-90-4399", True),
        ("000-12-3456", False),
        ("666-12-3456", False),
        ("912-34-5678", False),
        ("536-00-4399", False),
        ("536-90-0000", False),
        ("078-05-1120", False),
        ("111-11-1111", False),
    ],
)
def test_us_ssn_ranges(ssn: str, ok: bool) -> None:
    """Area 000/666/9xx, group 00, serial 0000 and published examples are not SSNs."""
    assert v.us_ssn(ssn) is ok


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def test_jwt_structure() -> None:
    """Header must be JSON with alg, payload a JSON object; anything else fails quietly."""
    token = _b64url({"alg": "HS256"}) + "." + _b64url({"sub": "1"}) + ".c2ln"
    assert v.jwt_structure(token)
    assert not v.jwt_structure(_b64url({"typ": "JWT"}) + "." + _b64url({"a": 1}) + ".x")
    assert not v.jwt_structure("eyJ!!!.eyJ???.x")
    assert not v.jwt_structure("a.b")


def test_basic_auth_needs_user_colon_password() -> None:
    """``Authorization: Basic`` counts only when it decodes to user:password."""
    assert v.basic_auth_b64(base64.b64encode(b"u:p4ss").decode())
    assert not v.basic_auth_b64(base64.b64encode(b"nocolon").decode())
    assert not v.basic_auth_b64(base64.b64encode(b"browser:").decode())
    assert v.basic_auth_b64(base64.b64encode(b"sk_live_0123456789abcdef:").decode())
    assert not v.basic_auth_b64("!!!")


def test_entropy_and_repetition() -> None:
    """Entropy is bits per char; repeated units are rejected."""
    assert v.shannon_entropy("") == 0.0
    assert v.shannon_entropy("aaaa") == 0.0
    assert v.shannon_entropy("abcd") == pytest.approx(2.0)
    assert not v.not_repetitive("abababab")
    assert v.not_repetitive("ab1cd2ef")


def test_phone_and_card_layout() -> None:
    """Phones have 7-15 digits; cards are printed ungrouped or in 4-4-4-4 / 4-6-5 groups."""
    assert v.phone_digits("+44 20 7946 0958")
    assert not v.phone_digits("1234567")
    assert v.card_layout("4111 1111 1111 1111")
    assert v.card_layout("3782 822463 10005")
    assert not v.card_layout("41 11111 111 111111")


def test_aws_key_id_alphabet() -> None:
    """After the 4-char prefix, AWS key ids use base32 (A-Z, 2-7) only."""
    assert v.aws_key_id("AKIAZ7VRSQ5TJN2DOWLM")
    assert not v.aws_key_id("AKIA1234567890123456")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_validators_never_raise(value: str) -> None:
    """A validator fails a malformed value; it never raises."""
    for check in v.VALIDATORS.values():
        assert isinstance(check(value), bool)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("secret", True),
        ("open_sesame", True),
        ("Rrhh1234", True),
        ("7`D'}/vYR)T;W\\5]EB$%r", True),
        ("$Password", False),
        ("%nothing%", False),
        ("${DB_PASSWORD}", False),
        ("<password>", False),
        ("***", False),
        ("****abcd", False),
        ("sk-live…", False),
        ("sk-xxx", False),
        ("x***Q7", True),
        ("XXX%40000000Q7", True),
        ("SOME_PASSWORD", False),
        ("password", False),
        ("os.environ['PW']", False),
        ("%s", False),
        # a real password that merely opens with a reference's sigil or ends in xxx is literal
        ("$up3rS3cr3t!", True),
        ("$(whoami)x", True),
        ("%Secr3tPass", True),
        ("@dm1nPass77", True),
        ("Tr0ub4dorxxx", True),
        ("os.Tr0ub4dor", True),
        ("getenvX9q", True),
        ("$DB_PASSWORD", False),
        ("$env:DB_PASSWORD", False),
        ("$cred.Password", False),
        ("$(cat /run/secrets/pw)", False),
        ("%DB_PASSWORD%", False),
        ("@password", False),
        ("getenv('PW')", False),
        ("token_xxx", False),
    ],
)
def test_credential_literal(value: str, want: bool) -> None:
    """In a structure that proves a credential, words count; references and templates do not."""
    assert v.credential_literal(value) is want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("open_sesame", True),
        ("self.password", False),
        ("getpass.getpass()", False),
        ("x[0]", False),
    ],
)
def test_not_code(value: str, want: bool) -> None:
    """A dotted name, a call or a subscript is code referring to a value, not the value."""
    assert v.not_code(value) is want


@pytest.mark.parametrize(
    "value",
    [
        "claude-code-20250219",
        "interleaved-thinking-2025-05-14",
        "output-128k-2025-02-19",
        "max-tokens-3-5-sonnet-2024-07-15",
    ],
)
def test_dated_feature_names_are_not_keys(value: str) -> None:
    """API beta flags and model names stamped with a date (Claude Code's own anthropic-beta
    header on every request) are names, not generated keys."""
    assert not v.VALIDATORS["not_dated_name"](value)


@pytest.mark.parametrize(
    "value",
    ["8b0e7153-bf7c-3706-d85c-524e44006655", "cTlN99mhWp708DwGw5HqXDgLVXZx3scB", "k-20250219x"],
)
def test_generated_values_are_not_dated_names(value: str) -> None:
    """A UUID, a random token, or a date that does not end the value does not count."""
    assert v.VALIDATORS["not_dated_name"](value)


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [("a secret", True), ("my%20password", True), ("The+Token", True), ("123 456", True),
     ("1234567890", True), ("abcdefghijklmnopqrstuvwxyzABCDEF", True), ("a secret sauce", False),
     ("12345", False), ("h7Kq2Lm9xP", False), ("my_password", False), ("314159", False),
     ("[password]]", True), ("[[username]", True), ("[h7Kq2Lm9xP]", False)],
)  # fmt: skip
def test_placeholder_phrase(value: str, placeholder: bool) -> None:
    """An article and the field's word, the word in brackets, or a counting run of 6+ stands in
    for a value."""
    assert v.placeholder_phrase(value) is placeholder


@pytest.mark.parametrize(
    ("value", "ok"),
    [("deadbeef12346", False), ("0xCAFEBABE", False), ("tok-8BADF00D-x", False),
     ("9f8e7d6c5b4a39281706f5e4", True), ("dead-beef", True)],
)  # fmt: skip
def test_not_hexspeak(value: str, ok: bool) -> None:
    """Hexspeak words (the hex placeholders of examples) are turned down; hex otherwise kept."""
    assert v.not_hexspeak(value) is ok
