"""The scanner: prefilter + confirm, merging, evasion, fail-closed behaviour, properties."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.detect import Finding, Scanner, redact_text
from domestique.detect.confirm import looks_like_code_reference, looks_like_placeholder
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

GITHUB = "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"
AWS = "AKIAZ7VRSQ5TJN2DOWLM"
CARD = "4539 1488 0343 6467"  # Luhn-valid, not a published test number
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
    f"card {CARD} and call 0044 20 3318 0958",
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
    monkeypatch.setattr("domestique.detect.prefilter.SET_CHECK_MAX", 0)
    assert s.scan(text) == fast
    monkeypatch.setattr(s._prefilter, "present", lambda _t: None)
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


# --- URL credentials: the span is the password's, whatever the host ---------------------------

URL_CASES = [
    ("psql postgres://admin:Tr0ub4dor-x9Q@db.internal:5432/prod", "Tr0ub4dor-x9Q"),
    ("amqp://guest:s3cr3tPw9x@rabbit.internal:5672/", "s3cr3tPw9x"),
    ("redis://:Zq8pL2mN4vX7@cache.internal:6379/0", "Zq8pL2mN4vX7"),
    ("mongodb+srv://u:Kd83jfLq0Pz@cluster0.mongodb.net/db", "Kd83jfLq0Pz"),
    ("curl https://bob:Hx9pQ2wL7zK@api.corp.io/v1", "Hx9pQ2wL7zK"),
    ("mysql://root:p@ss:w0rd%40Xy9@db.corp.io:3306/app", "p@ss:w0rd%40Xy9"),
    ("postgresql+asyncpg://svc:aB3:dE6@fG9@pg.corp.io/db?sslmode=require", "aB3:dE6@fG9"),
]


@pytest.mark.parametrize(("text", "password"), URL_CASES)
def test_url_credential_span_is_the_password_only(
    scanner: Scanner, fingerprinter: Fingerprinter, text: str, password: str
) -> None:
    """The finding spans the password (up to the LAST ``@``), never the host after it.

    The e-mail rule reads ``password@host`` as an address; that misreading used to widen the
    span over the host while the preview and fingerprint were the password's.
    """
    (f,) = scanner.scan(text)
    assert f.code.startswith("secret.")
    assert text[f.start : f.end] == password
    if "%" not in password:  # a percent-escaped value is fingerprinted decoded
        assert f.fingerprint == fingerprinter.fingerprint(password)


def test_token_as_url_user_and_sentry_dsn_spans_stop_before_the_host(scanner: Scanner) -> None:
    """``https://<token>@host`` and a Sentry DSN report the key alone, not ``key@host``."""
    token = "gho_Vq8rLm2TzX4kPw9sB7nQ1dHfJ3cY6uE0aK5t"
    text = f"git clone https://{token}@github.com/acme/tools.git"
    (f,) = scanner.scan(text)
    assert text[f.start : f.end] == token
    key = "824c1c099724caf4941d4072014b3ce1"
    text = f"SENTRY_DSN=https://{key}@o123456.ingest.sentry.io/4504567"
    (f,) = scanner.scan(text)
    assert (f.code, text[f.start : f.end]) == ("secret.sentry_dsn", key)


def test_email_user_name_in_a_url_stays_a_finding_of_its_own(scanner: Scanner) -> None:
    """An address as the URL's user name is personal data outside the password: still reported."""
    text = "ftp://ops@corp.io:Zq8#pL2@m4@files.corp.io/pub"
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == [("pii.email", "ops@corp.io"), ("secret.url_basic_auth", "Zq8#pL2@m4")]


def test_password_turned_down_in_a_url_is_not_an_email_either(scanner: Scanner) -> None:
    """``user:password@host`` (a placeholder password) is no finding, and no address either."""
    assert scanner.scan("postgresql://user:password@db.internal/app") == []


def test_a_reading_around_the_whole_url_is_kept(scanner: Scanner) -> None:
    """Only misreadings that run out of the password over one edge are dropped.

    Here the URL's password (``1234``) is turned down, but the generic rule's reading of the
    whole quoted URL as a token encloses it and is still reported.
    """
    text = "api_token = 'https://kQ8zLm2VxR7pT4wN9cB3.io:1234@hF6tYb2Kq9Lm'"
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == [("secret.generic_secret", text[13:-1])]


def test_email_outside_a_url_is_still_found(scanner: Scanner) -> None:
    """Dropping misreadings is confined to the URL's own match: a nearby address is kept."""
    text = "postgres://admin:Tr0ub4dor-x9Q@db.internal/prod owner ada@analytical-engines.co.uk"
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == [
        ("secret.database_url", "Tr0ub4dor-x9Q"),
        ("pii.email", "ada@analytical-engines.co.uk"),
    ]


_PW_ALPHABET = st.sampled_from("abcXYZ0189-_.~!$&*+=@:")


@settings(max_examples=60, deadline=None)
@given(
    head=st.text("abcXYZ0189", min_size=2, max_size=4),
    rest=st.text(_PW_ALPHABET, min_size=6, max_size=24),
    host=st.from_regex(r"[a-z][a-z0-9]{1,10}\.(internal|corp\.io|prod\.net)", fullmatch=True),
)
def test_any_password_in_a_database_url_is_spanned_exactly(head: str, rest: str, host: str) -> None:
    """Passwords holding ``@``, ``:`` or ``%`` are spanned up to the last ``@`` before the host."""
    password = head + "%40" + rest + "Q7"
    text = f"DATABASE_URL=postgresql://app:{password}@{host}:5432/app"
    findings = _shared_scanner().scan(text)
    assert [(f.code, text[f.start : f.end]) for f in findings] == [
        ("secret.database_url", password)
    ]


# --- resource identifiers are not secrets -----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "aws secretsmanager describe-secret --secret-id "
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        "secret_arn = arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
        'SecretId: "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:x-AbCdEf"',
        "token: arn:aws:iam::123456789012:role/deploy-token",
        "kms_key = arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        "secret: ocid1.vaultsecret.oc1.iad.amaaaaaa3ryzuaaaqtjw6xkwyqe7vzjnyryjh7xvzf3x5fq",
        "key_vault_secret = https://myvault.vault.azure.net/secrets/db-pass/"
        "0123456789abcdef0123456789abcdef",
        "secret = projects/acme-prod/secrets/db-password/versions/latest",
    ],
)
def test_resource_identifiers_are_not_generic_secrets(scanner: Scanner, text: str) -> None:
    """An ARN, OCID, Key Vault URL or Secret Manager name names a secret; it is not one.

    An ARN is reported as what it is, an infrastructure identifier (infra.aws_arn).
    """
    assert [f.code for f in scanner.scan(text)] in ([], ["infra.aws_arn"])


def test_secret_next_to_an_arn_is_still_found(scanner: Scanner) -> None:
    """Only the identifier is skipped: a generic secret on the same line is still reported."""
    text = (
        "secret_arn=arn:aws:secretsmanager:us-east-1:123456789012:secret:db "
        "client_secret=h7Kq2Lm9xPw4Rt"
    )
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == [
        ("infra.aws_arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:db"),
        ("secret.generic_secret", "h7Kq2Lm9xPw4Rt"),
    ]


def test_arn_shaped_prefix_does_not_hide_a_secret_glued_after_a_space(scanner: Scanner) -> None:
    """A value that is not wholly an ARN-shaped identifier is judged as usual."""
    text = 'api_key = "arn-h7Kq2Lm9xPw4Rt8Zc"'
    assert codes(scanner.scan(text)) == ["secret.generic_secret"]


# --- firewall placeholders are not scanned ----------------------------------------------------


def test_placeholder_shaped_text_is_never_a_finding(scanner: Scanner) -> None:
    """``[REDACTED:<type>:<8 hex>]`` holds no secret: nothing is reported inside or across one."""
    text = (
        "api_key=[REDACTED:aws_access_key_id:deadbeef]\n"
        'password: "[REDACTED:password_assignment:0123abcd]"\n'
        "The secret: [REDACTED:generic_secret:89abcdef] is rotated\n"
        "postgres://app:[REDACTED:database_url:00ff00ff]@db.internal/app\n"
    )
    assert scanner.scan(text) == []


def test_secret_beside_a_placeholder_is_still_found(scanner: Scanner) -> None:
    """A real token glued to or after a placeholder is found, its span outside the placeholder."""
    text = f"x [REDACTED:aws_access_key_id:deadbeef]{AWS} and token {GITHUB}"
    found = [(f.code, text[f.start : f.end]) for f in scanner.scan(text)]
    assert found == [("secret.aws_access_key_id", AWS), ("secret.github_token", GITHUB)]


@pytest.mark.parametrize(
    "fake",
    [
        "[REDACTED:aws_access_key_id:DEADBEEF]",  # upper-case hex
        "[REDACTED:aws_access_key_id:deadbee]",  # 7 hex digits
        "[REDACTED:Aws:deadbeef]",  # upper-case type
        f"[REDACTED:aws_access_key_id:{AWS}]",  # a secret where the hash goes
        "[REDACTED:not_a_rule_of_ours:deadbeef]",  # a type no code of the scanner has
    ],
)
def test_only_the_exact_placeholder_shape_is_skipped(scanner: Scanner, fake: str) -> None:
    """Near-misses of the shape are scanned like any text: a secret put inside one is found."""
    text = f"api_key = {fake} {AWS}"
    assert "secret.aws_access_key_id" in codes(scanner.scan(text))


class _Substring:
    """A detector that reports each occurrence of one value (as known values do)."""

    code = "secret.known_value"
    priority = 95

    def __init__(self, value: str) -> None:
        self.value = value

    def find(self, text: str) -> list[tuple[int, int, str]]:
        out, at = [], text.find(self.value)
        while at >= 0:
            out.append((at, at + len(self.value), self.value))
            at = text.find(self.value, at + 1)
        return out


def test_a_secret_cannot_hide_in_the_type_of_a_placeholder(fingerprinter: Fingerprinter) -> None:
    """Only the types of the scanner's own codes are skipped: a value put as the type is scanned."""
    secret = "plum_orchard_7731_wind"
    s = Scanner(builtin_rules(), fingerprinter, detectors=[_Substring(secret)])
    text = f"[REDACTED:{secret}:deadbeef]"
    assert [(f.code, text[f.start : f.end]) for f in s.scan(text)] == [
        ("secret.known_value", secret)
    ]
    assert s.scan("[REDACTED:known_value:deadbeef] [REDACTED:github_token:0123abcd]") == []


def test_placeholder_types_match_the_redactors() -> None:
    """The engine skips exactly the types the firewall writes (same rule as domestique.redact)."""
    from domestique.detect.merge import placeholder_type
    from domestique.redact._placeholders import placeholder_type as redact_type

    for code in [r.id for r in builtin_rules()] + ["secret.known_value", "pii.customer_record"]:
        assert placeholder_type(code) == redact_type(code)
