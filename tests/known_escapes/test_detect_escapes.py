"""Known escapes around the detection engine (docs/known-escapes.md, "Detection engine").

Blocked or mitigated escapes have passing tests; open ones are strict xfail, so a change in
behaviour (for better or worse) fails the suite until the list is updated. The tests drive the
real engine with the built-in rules; the values are made up for these tests.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import json
import os
import zlib
from pathlib import Path

import pytest

from domestique.detect import Finding, Scanner, default_scanner
from domestique.detect.known_values import KnownValues
from domestique.detect.ruleset import builtin_rules
from domestique.detect.sources import clear_cache
from domestique.keys import Fingerprinter

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id (the rules know the format)
GITHUB = "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"  # made-up, valid checksum
KNOWN = "plum-Orchard-7731-wind"  # a made-up value of the developer's own secrets

FP = Fingerprinter(os.urandom(32))
RULES = Scanner(builtin_rules(), FP)


def secret_codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings if f.code.startswith("secret.")]


def found(text: str, scanner: Scanner = RULES) -> bool:
    return bool(secret_codes(scanner.scan(text)))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("DOMESTIQUE_HOME", str(path))
    clear_cache()
    return path


# --- splitting -------------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="open: each text (field, message) is scanned on its own")
def test_secret_split_across_two_texts_is_not_found() -> None:
    """Half a key in one message and half in the next: neither half is a finding."""
    assert found(KEY_ID[:10]) or found(KEY_ID[10:])


@pytest.mark.xfail(strict=True, reason="open: only +, . and juxtaposition joins are undone")
def test_secret_split_across_lines_of_prose_is_not_found() -> None:
    """The two halves of a token on separate lines, with words between them."""
    assert found(f"first part {GITHUB[:16]}\nand then the rest: {GITHUB[16:]}")


def test_secret_split_into_joined_string_literals_is_found() -> None:
    """Blocked: literals joined with +, . or juxtaposition are read as one (the concat view)."""
    assert found(f'token = "{GITHUB[:12]}" + "{GITHUB[12:26]}" "{GITHUB[26:]}"')


# --- formats and context ---------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="open: an unknown format needs a secret-like name nearby")
def test_custom_token_format_without_a_keyword_is_not_found() -> None:
    """An in-house token with no documented prefix, sent in a header with a neutral name."""
    assert found("curl -H 'X-Acme-Session: 4f9Qz7LmW2pR8tK3vX6nB1cY5dH0jE9a' https://acme.test/")


def test_low_entropy_password_in_prose_is_found() -> None:
    """Mitigated: a weak password stated in a sentence is found when it has digits or symbols."""
    assert found("ssh to the box as admin, the password is hunter22 for now")


@pytest.mark.xfail(strict=True, reason="open: a plain word stated as the password in prose")
def test_plain_word_password_in_prose_is_not_found() -> None:
    """A dictionary word as the password in a sentence reads like prose, so it is not taken."""
    assert found("ssh to the box as admin, the password is lantern for now")


@pytest.mark.xfail(strict=True, reason="open: placeholder words filter the generic rules")
def test_real_password_that_contains_a_placeholder_word_is_not_found() -> None:
    """The generic rules drop values with placeholder words; a real one may contain them."""
    assert found('db_password = "example-Pr0d-42!"')


def test_password_with_a_placeholder_word_in_a_provider_format_is_found() -> None:
    """Mitigated: provider rules have no placeholder filter; only the generic rules are fooled."""
    assert found(f"GITHUB_TOKEN={GITHUB}  # example")


# --- encodings -------------------------------------------------------------------------------


def test_escaped_base64_and_hex_wrapped_secrets_are_found() -> None:
    """Blocked: JSON/URL/HTML escapes are decoded, base64 and hex blobs decoded and scanned."""
    escaped = json.dumps({"k": KEY_ID}).replace("AKIA", "\\u0041KIA")
    assert found(escaped)
    assert found("blob " + base64.b64encode(f"aws {KEY_ID}".encode()).decode())
    assert found("hex " + f"id={KEY_ID}".encode().hex())
    assert found("url a%3D" + KEY_ID.replace("A", "%41"))


@pytest.mark.xfail(strict=True, reason="open: ROT13 is not decoded")
def test_rot13_secret_is_not_found() -> None:
    """ROT13 of a token."""
    assert found("note: " + codecs.encode(GITHUB, "rot13"))


@pytest.mark.xfail(strict=True, reason="open: reversed text is not read backwards")
def test_reversed_secret_is_not_found() -> None:
    """A token written backwards."""
    assert found("note: " + GITHUB[::-1])


@pytest.mark.xfail(strict=True, reason="open: compressed data is not inflated")
def test_gzip_then_base64_secret_is_not_found() -> None:
    """gzip, then base64: the base64 decodes to binary, which is dropped."""
    assert found("blob " + base64.b64encode(gzip.compress(KEY_ID.encode())).decode())


@pytest.mark.xfail(strict=True, reason="open: spaced-out characters are not rejoined")
def test_character_spaced_secret_is_not_found() -> None:
    """One space (or dash) between every character of a key."""
    assert found("id: " + " ".join(KEY_ID))


# --- look-alike characters -------------------------------------------------------------------


def test_invisible_characters_and_nfkc_lookalikes_are_seen_through() -> None:
    """Blocked: zero-width characters, soft hyphens, full-width letters, Cyrillic next to Latin."""
    assert found(KEY_ID[:6] + "\u200b" + KEY_ID[6:])
    assert found(KEY_ID[:6] + "\u00ad" + KEY_ID[6:])
    assert found("".join(chr(ord(c) + 0xFEE0) for c in KEY_ID))  # full-width forms
    assert found(KEY_ID.replace("A", "\u0410"))  # Cyrillic capital A


@pytest.mark.xfail(strict=True, reason="open: look-alikes beyond NFKC and the fold table")
def test_cherokee_lookalike_letter_is_not_folded() -> None:
    """CHEROKEE LETTER GO (U+13AA) looks like A; NFKC keeps it and the fold table lacks it."""
    assert found("\u13aa" + KEY_ID[1:])


# --- binary documents ------------------------------------------------------------------------


@pytest.mark.xfail(strict=True, reason="open: images and PDFs are not decoded or OCR'd")
def test_secret_in_a_compressed_pdf_stream_is_not_found() -> None:
    """A PDF whose page stream (FlateDecode) draws the key: the text holds only deflate bytes."""
    stream = zlib.compress(f"BT /F1 12 Tf 72 712 Td ({KEY_ID}) Tj ET".encode())
    pdf = b"%PDF-1.4\n4 0 obj << /Filter /FlateDecode >> stream\n" + stream + b"\nendstream"
    assert found(pdf.decode("latin-1"))


# --- known values ----------------------------------------------------------------------------


def test_known_value_is_found_in_any_format_and_when_wrapped() -> None:
    """Blocked: a known value is found wherever it appears, also base64-wrapped or %-escaped."""
    s = Scanner(builtin_rules(), FP, [KnownValues(FP, [KNOWN])])
    assert "secret.known_value" in secret_codes(s.scan(f"x={KNOWN};"))
    wrapped = base64.b64encode(f"v {KNOWN}".encode()).decode()
    assert "secret.known_value" in secret_codes(s.scan(f"blob {wrapped}"))
    assert "secret.known_value" in secret_codes(s.scan(KNOWN.replace("-", "%2D")))


@pytest.mark.xfail(strict=True, reason="open: known values are matched exactly (case included)")
def test_known_value_in_another_case_is_not_found() -> None:
    """The same value upper-cased."""
    s = Scanner(builtin_rules(), FP, [KnownValues(FP, [KNOWN])])
    assert "secret.known_value" in secret_codes(s.scan(KNOWN.upper()))


@pytest.mark.xfail(strict=True, reason="open: a value with no 3-character piece has no anchor")
def test_known_value_made_of_short_pieces_is_not_registered() -> None:
    """``a#b!c@d$e%f`` has no delimiter-free piece of 3+ characters to look it up by."""
    value = "a#b!c@d$e%f^g"
    s = Scanner(builtin_rules(), FP, [KnownValues(FP, [value])])
    assert "secret.known_value" in secret_codes(s.scan(f"pw {value} end"))


def test_known_value_added_later_is_found_by_the_next_default_scanner(
    home: Path, tmp_path: Path
) -> None:
    """Mitigated: default_scanner() re-reads a changed .env, so callers that ask per request
    (the hook daemon, the CLI) see a value added after start."""
    project = tmp_path / "p"
    project.mkdir()
    before = default_scanner(home, env={}, cwd=project)
    (project / ".env").write_text(f"SERVICE_TOKEN={KNOWN}\n")
    assert secret_codes(before.scan(KNOWN)) == []
    after = default_scanner(home, env={}, cwd=project)
    assert secret_codes(after.scan(KNOWN)) == ["secret.known_value"]


@pytest.mark.xfail(strict=True, reason="open: a scanner keeps the values it was built with")
def test_a_scanner_held_since_start_misses_a_value_added_later(home: Path, tmp_path: Path) -> None:
    """A long-lived holder of one scanner object (built before the value existed) misses it."""
    project = tmp_path / "p"
    project.mkdir()
    held = default_scanner(home, env={}, cwd=project)
    (project / ".env").write_text(f"SERVICE_TOKEN={KNOWN}\n")
    assert secret_codes(held.scan(KNOWN)) == ["secret.known_value"]


@pytest.mark.xfail(strict=True, reason="open: only env variables and .env files are read")
def test_secret_only_in_another_credentials_file_is_not_known(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A password kept in ~/.netrc (no provider format) is not a known value."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(f"machine git.example.org login me password {KNOWN}\n")
    s = default_scanner(home, env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert secret_codes(s.scan(f"the value is {KNOWN} ok")) != []


# --- identifiers and placeholders --------------------------------------------------------------


@pytest.mark.xfail(
    strict=True, reason="open: a value shaped as a whole resource identifier is skipped"
)
def test_secret_dressed_as_an_arn_is_not_found() -> None:
    """A made-up password written as the last part of an ARN reads as an identifier."""
    assert found("api_key = arn:aws:s3:::Zk8qW3vN7pL2xR9tYb4M")


@pytest.mark.xfail(
    strict=True, reason="open: a value behind an SSH public key's prefix or a Twilio SID's shape"
)
def test_secret_dressed_as_a_public_key_or_a_sid_is_not_found() -> None:
    """A made-up service key after the service's bare name, behind the base64 prefix of an
    ssh-ed25519 public key or in a Twilio SID's shape (two capitals, 32 hex), reads as public."""
    assert found("zendesk = AAAAC3NzaC1lZDI1NTE5Zk8qW3vN7pL2xR9tYb4M")
    assert found("zendesk = ZD9f2c4e6a8b0d1f3e5a7c9b2d4f6e8a0c")


def test_secret_glued_to_a_fake_placeholder_is_found() -> None:
    """Placeholder-shaped text is skipped, but its fixed shape holds no secret: the rest is read."""
    assert found(f"[REDACTED:aws_access_key_id:deadbeef]{KEY_ID}")
    assert found(f"token: [REDACTED:github_token:0123abcd] {GITHUB}")


@pytest.mark.xfail(strict=True, reason="open: a lower-case IBAN needs the word IBAN before it")
def test_lower_case_iban_without_the_word_iban_is_not_found() -> None:
    """An IBAN written in lower case after "account" only (the mod-97 check holds)."""
    text = "refund to account de75 5121 0800 1245 1261 99 (J. Doe)"
    assert "pii.iban" in [f.code for f in RULES.scan(text)]


def test_lower_case_iban_after_the_word_iban_is_found() -> None:
    text = "refund to iban: de75 5121 0800 1245 1261 99 (J. Doe)"
    assert "pii.iban" in [f.code for f in RULES.scan(text)]


@pytest.mark.xfail(strict=True, reason="open: a value that only looks generated needs a name")
def test_example_secret_in_documentation_is_still_found() -> None:
    """A generated-looking key that documentation prints as its example is reported like a
    real one (false finding kept: the shape alone cannot tell them apart)."""
    assert not found(
        "# generate one with: openssl rand -hex 32\nSECRET_KEY = "
        '"9f1c2e7a4b8d06f3a5c9e2d1b7f4a6c8e0d3b5f7a9c1e2d4f6b8a0c3e5d7f9b1"'
    )


@pytest.mark.xfail(strict=True, reason="open: a doctest session's values are documentation's")
def test_generic_password_typed_into_an_interactive_session_is_found() -> None:
    """A real password typed at a ``>>>`` prompt reads as a doctest example and is not
    reported by the generic rules (round 8's cost; provider formats are still found)."""
    assert found('>>> conn = connect(host="db.corp.internal", password="Wq7-Lm2xPz9")')
