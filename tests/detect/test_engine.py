"""The scanner: prefilter + confirm, merging, evasion, fail-closed behaviour, properties."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import Finding, Scanner, redact_text
from domestique.detect.engine import looks_like_code_reference, looks_like_placeholder
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

GITHUB = "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"
AWS = "AKIAZ7VRSQ5TJN2DOWLM"
CARD = "4111 1111 1111 1111"
SAMPLES = [GITHUB, AWS, CARD, "ada.lovelace@analytical-engines.co.uk", "SSN 536-90-4399"]


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def test_clean_text_has_no_findings(scanner: Scanner) -> None:
    """Ordinary prose and code produce nothing."""
    text = "def tokenize(text):\n    # split on spaces\n    return text.split()\n" * 20
    assert scanner.scan(text) == []
    assert scanner.scan("") == []


def test_finding_span_preview_and_fingerprint(
    scanner: Scanner, fingerprinter: Fingerprinter
) -> None:
    """The span covers the secret; the preview is masked; the fingerprint is the keyed HMAC."""
    text = f"export GITHUB_TOKEN={GITHUB}\n"
    (f,) = scanner.scan(text)
    assert f.code == "secret.github_token"
    assert text[f.start : f.end] == GITHUB
    assert f.preview == "ghp_…m1IL"
    assert f.fingerprint == fingerprinter.fingerprint(GITHUB)
    assert GITHUB not in json.dumps(f.to_json())


def test_specific_rule_wins_over_generic(scanner: Scanner) -> None:
    """A GitHub token assigned to ``token =`` is one github_token finding, not a generic one."""
    findings = scanner.scan(f'api_token = "{GITHUB}"')
    assert codes(findings) == ["secret.github_token"]


def test_overlapping_findings_are_merged(scanner: Scanner) -> None:
    """A password in a database URL is one finding (the URL rule), not an e-mail too."""
    findings = scanner.scan("postgresql://app:Tr0ub4dor-3x@db.internal.example.net:5432/app")
    assert codes(findings) == ["secret.database_url"]


def test_every_sample_found_in_a_larger_text(scanner: Scanner) -> None:
    """Secrets and personal data in the middle of a long prompt are each found once."""
    filler = " The quick brown fox jumps over the lazy dog. " * 200
    text = filler.join(SAMPLES)
    found = scanner.scan(text)
    assert len(found) == len(SAMPLES)
    assert sorted(codes(found)) == sorted(
        [
            "secret.github_token",
            "secret.aws_access_key_id",
            "pii.credit_card",
            "pii.email",
            "pii.us_ssn",
        ]
    )


@pytest.mark.parametrize(
    "disguised",
    [
        GITHUB[:8] + "\u200b" + GITHUB[8:],  # zero-width space
        GITHUB[:8] + "\u00ad" + GITHUB[8:],  # soft hyphen
        GITHUB[:8] + "\u2060\ufeff" + GITHUB[8:],  # word joiner + BOM
        "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in GITHUB),  # full-width
        GITHUB.replace("K", "\u041a"),  # Cyrillic capital Ka
        json.dumps(GITHUB).replace("g", "\\u0067"),  # JSON escape
        "%67%68%70%5F" + GITHUB[4:],  # URL escape
        "&#103;&#x68;p_" + GITHUB[4:],  # HTML entities
        base64.b64encode(f"token={GITHUB}".encode()).decode(),  # base64-wrapped
        base64.urlsafe_b64encode(f"t={GITHUB}!".encode()).decode().rstrip("="),
        GITHUB.encode().hex(),  # hex-wrapped
        base64.b64encode(base64.b64encode(GITHUB.encode())).decode(),  # twice wrapped
        f'"{GITHUB[:12]}" + "{GITHUB[12:]}"',  # split across concatenated literals
        f"'{GITHUB[:12]}' . '{GITHUB[12:]}'",  # PHP concatenation
    ],
)
def test_evasions_are_seen_through_with_spans_in_the_original(
    scanner: Scanner, disguised: str
) -> None:
    """Each disguise still yields secret.github_token, reported over the disguised text."""
    text = f"before {disguised} after"
    findings = scanner.scan(text)
    assert codes(findings) == ["secret.github_token"]
    (f,) = findings
    assert text[f.start : f.end].strip() == disguised.strip("\"'")
    assert "before" not in text[f.start : f.end]


def test_jwt_in_json_escape_and_private_key_with_literal_newlines(scanner: Scanner) -> None:
    """A PEM key inside a JSON string (literal \\n) is found as one private_key finding."""
    pem = (
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n"
        "BKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\n"
    )
    text = '{"type": "x", "private_key": "' + pem + '"}'
    assert "secret.private_key" in codes(scanner.scan(text))


class _Boom:
    code = "secret.known_value"
    priority = 100

    def find(self, text: str) -> list[tuple[int, int, str]]:
        raise RuntimeError("kaboom")


def test_a_crashing_detector_is_a_detector_error_never_clean(fingerprinter: Fingerprinter) -> None:
    """A detector that raises yields engine.detector_error over the whole text; others still run."""
    s = Scanner(builtin_rules(), fingerprinter, [_Boom()])
    text = f"x {AWS} y"
    found = s.scan(text)
    assert "secret.aws_access_key_id" in codes(found)
    err = [f for f in found if f.code == "engine.detector_error"]
    assert len(err) == 1
    assert (err[0].start, err[0].end) == (0, len(text))
    assert "kaboom" not in err[0].preview


def test_scan_of_a_non_string_is_a_detector_error(scanner: Scanner) -> None:
    """A wrong input type does not raise: it reports engine.detector_error."""
    found = scanner.scan(b"bytes")  # type: ignore[arg-type]
    assert codes(found) == ["engine.detector_error"]


def test_keyword_dense_text_stays_correct(scanner: Scanner) -> None:
    """Thousands of keyword hits (one merged window) still find exactly the real secrets."""
    line = "password = None  # token secret api_key\n"
    text = line * 3000 + "db_password = 'h7Kq2Lm9xP'\n" + line * 10
    assert codes(scanner.scan(text)) == ["secret.password_assignment"]


def test_placeholder_and_reference_filters() -> None:
    """Placeholders and code references are not secrets; literals are."""
    assert looks_like_placeholder("your-api-key-here")
    assert looks_like_placeholder("${API_KEY}")
    assert looks_like_placeholder("EXAMPLE_KEY")
    assert not looks_like_placeholder("h7Kq2Lm9xP")
    assert looks_like_code_reference("os.environ['X']", quoted=False)
    assert looks_like_code_reference("new_password", quoted=False)
    assert not looks_like_code_reference("Admin", quoted=True)
    assert not looks_like_code_reference("h7Kq2Lm9xP", quoted=False)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_scanning_arbitrary_unicode_never_raises(text: str) -> None:
    """Any unicode, lone surrogates included, scans without raising or erroring."""
    s = _shared_scanner()
    for f in s.scan(text):
        assert f.code != "engine.detector_error"
        assert 0 <= f.start < f.end <= len(text)


_PIECES = st.sampled_from(
    [
        *SAMPLES,
        " ",
        "\n",
        "password = ",
        "\u200b",
        "é",
        "%41",
        "\\u0041",
        "ｇ",
        "token",
        "@",
        "0123456789",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_spans_inside_input_and_redaction_leaves_nothing(pieces: list[str]) -> None:
    """Spans lie inside the text; every inserted secret is covered; redacting all findings
    leaves no finding behind."""
    s = _shared_scanner()
    text = "".join(pieces)
    found = s.scan(text)
    for f in found:
        assert 0 <= f.start < f.end <= len(text)
    pos = 0
    for piece in pieces:
        end = pos + len(piece)
        apart = (pos == 0 or not text[pos - 1].isalnum()) and (
            end == len(text) or not text[end].isalnum()
        )
        if piece in (GITHUB, AWS) and apart:
            assert any(f.start <= pos and end <= f.end for f in found)
        pos = end
    assert s.scan(redact_text(text, found)) == []


_SCANNER: list[Scanner] = []


def _shared_scanner() -> Scanner:
    if not _SCANNER:
        _SCANNER.append(Scanner(builtin_rules(), Fingerprinter(bytes(32))))
    return _SCANNER[0]


def _token(payload: str) -> str:
    import zlib

    from domestique.detect.validators import base62_encode

    return "ghp_" + payload + base62_encode(zlib.crc32(payload.encode()), 6)


def _disguise(token: str, how: str, at: int) -> str:
    i = 4 + at % (len(token) - 4)
    if how == "zero-width":
        return token[:i] + "\u200b" + token[i:]
    if how == "soft-hyphen":
        return token[:i] + "\u00ad" + token[i:]
    if how == "full-width":
        return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in token)
    if how == "json-escape":
        return token[:i] + f"\\u{ord(token[i]):04x}" + token[i + 1 :]
    if how == "url-escape":
        return token[:i] + f"%{ord(token[i]):02X}" + token[i + 1 :]
    return base64.b64encode(f"key={token}".encode()).decode()


@settings(max_examples=60, deadline=None)
@given(
    payload=st.text(
        alphabet="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        min_size=30,
        max_size=30,
    ),
    how=st.sampled_from(
        ["zero-width", "soft-hyphen", "full-width", "json-escape", "url-escape", "base64"]
    ),
    at=st.integers(min_value=0, max_value=100),
    before=st.text(alphabet=" \nabc.,:=", max_size=20),
)
def test_any_disguised_token_is_found_over_its_disguise(
    payload: str, how: str, at: int, before: str
) -> None:
    """Whatever the payload and disguise, the token is found and its span covers the disguise."""
    disguised = _disguise(_token(payload), how, at)
    text = f"{before} {disguised} end"
    found = _shared_scanner().scan(text)
    start = len(before) + 1
    assert any(
        f.code == "secret.github_token" and f.start <= start and start + len(disguised) <= f.end
        for f in found
    ), (how, [(f.code, f.start, f.end) for f in found])


class _Fixed:
    """A detector that reports one fixed value wherever it occurs."""

    code = "secret.known_value"
    priority = 100

    def __init__(self, value: str) -> None:
        self.value = value

    def find(self, text: str) -> list[tuple[int, int, str]]:
        i = text.find(self.value)
        return [] if i < 0 else [(i, i + len(self.value), self.value)]


def test_text_with_nothing_to_look_at_still_runs_the_detectors(
    fingerprinter: Fingerprinter,
) -> None:
    """Prose with no keyword, escape, join, blob or digit run skips the rules, not the detectors."""
    s = Scanner(builtin_rules(), fingerprinter, [_Fixed("plum-Orchard-wind")])
    assert codes(s.scan("we met by the old plum-Orchard-wind gate")) == ["secret.known_value"]
    assert s.scan("we met by the old gate") == []


SKIP_CASES = [
    "plain words only",
    f'tok = "{GITHUB[:10]}" + "{GITHUB[10:]}"',
    json.dumps({"k": f"{GITHUB}"}).replace("ghp", "\\u0067hp"),
    "blob " + base64.b64encode(f"aws {AWS} here".encode()).decode(),
    f"card {CARD} and call 0044 20 7946 0958",
    f"mixed {AWS} %41%4B and 'a' + 'b' and 1234-5678-9012",
]


@pytest.mark.parametrize("text", SKIP_CASES)
def test_skipping_absent_kinds_of_work_changes_no_result(
    text: str, fingerprinter: Fingerprinter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short ASCII texts skip the passes for what they do not contain; the findings are the same
    as with every pass run (the long-text path, forced here by a zero size limit)."""
    s = Scanner(builtin_rules(), fingerprinter)
    fast = s.scan(text)
    monkeypatch.setattr("domestique.detect.engine.SET_CHECK_MAX", 0)
    assert s.scan(text) == fast
    monkeypatch.setattr(s, "_present", lambda _t: None)
    assert s.scan(text) == fast


def test_sparse_and_dense_keywords_find_the_same(scanner: Scanner) -> None:
    """A keyword-dense prefix switches the keyword pass to the whole-text automaton; a secret
    far after it is still found, exactly once."""
    dense = "token key secret pass auth " * 400
    text = dense + "\n" + "x" * 5000 + f"\nexport GH={GITHUB}\n"
    assert codes(scanner.scan(text)) == ["secret.github_token"]


def test_derived_scanner_shares_rules_with_its_own_key_and_detectors(
    fingerprinter: Fingerprinter, scanner: Scanner
) -> None:
    """derive() keeps the compiled rules, swaps the key (fingerprints) and the detectors."""
    other_key = Fingerprinter(bytes(32))
    d = scanner.derive(other_key, [_Fixed("plum-Orchard-wind")])
    text = f"{AWS} plum-Orchard-wind"
    mine, theirs = scanner.scan(text), d.scan(text)
    assert codes(mine) == ["secret.aws_access_key_id"]
    assert codes(theirs) == ["secret.aws_access_key_id", "secret.known_value"]
    assert mine[0].fingerprint != theirs[0].fingerprint
    assert d.rules == scanner.rules
