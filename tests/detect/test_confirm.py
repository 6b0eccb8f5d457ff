"""Adversarial cases from the round-4 security review: a real secret must never pass as an
allowed identifier (``infra.*``) or as a reference to a credential, and must be covered whole.

Every value here is random text of the documented shape, written for these tests.
"""

from __future__ import annotations

import pytest

from domestique.detect import Scanner

AKIA = "AKIANND6YZ2EMRVFTVA2"
STRIPE = "sk_live_cMz9CPVNPkNa1Hedcm4pMbXD"
GITLAB = "glpat-uCL1mHoOsFaQfDPrAJ71"


def _covering(scanner: Scanner, text: str, value: str) -> list[str]:
    """Codes of the findings that cover all of ``value`` in ``text``."""
    s = text.index(value)
    e = s + len(value)
    return [f.code for f in scanner.scan(text) if f.start <= s and e <= f.end]


@pytest.mark.parametrize("secret", [AKIA, STRIPE, GITLAB])
@pytest.mark.parametrize(
    "shape",
    [
        "arn:aws:s3:::bucket/{}",
        "arn:aws:iam::298941966085:role/{}",
        "arn:aws:secretsmanager:us-east-1:298941966085:secret:{}",
        "https://s3.amazonaws.com/{}",
        "https://{}.s3.amazonaws.com/x",
        "https://storage.googleapis.com/{}",
        "https://{}.myshopify.com",
        "REACT_APP_ADMIN_USERNAME={}",
        "VITE_USER={}",
    ],
)
def test_secret_inside_an_infra_identifier_is_reported_as_the_secret(
    scanner: Scanner, secret: str, shape: str
) -> None:
    """The merged finding over an identifier holding a secret carries the secret's code."""
    text = shape.format(secret)
    codes = _covering(scanner, text, secret)
    assert codes, text
    assert all(c.startswith("secret.") for c in codes), (text, codes)


def test_mapbox_secret_token_glued_after_a_public_token_is_not_allowed(scanner: Scanner) -> None:
    """``pk.`` is public; an ``sk.`` body glued after it is no part of the infra finding."""
    pk = "pk.eyJ1IjoibWFwcGVyNyIsImEiOiJjbHg5ZjkxNDExYjRhNmRlZDllYjM4NCJ9.APyhzAnar3ZLt4bnlz2MPK"
    text = f"{pk} {STRIPE}"
    assert _covering(scanner, text, STRIPE) == ["secret.stripe_key"]


@pytest.mark.parametrize(
    "password",
    ["$up3rS3cr3t!", "%Secr3tPass", "@dm1nPass77", "Tr0ub4dorxxx", "os.Tr0ub4dor", "getenvX9q"],
)
@pytest.mark.parametrize(
    ("shape", "code"),
    [
        ("postgres://app:{}@db.internal:5432/app", "secret.database_url"),
        ("https://bob:{}@git.internal/repo.git", "secret.url_basic_auth"),
    ],
)
def test_url_password_that_opens_like_a_reference_is_found(
    scanner: Scanner, password: str, shape: str, code: str
) -> None:
    """A password that merely starts with ``$``/``%``/``@`` or ends in ``xxx`` is a password.

    Before the review, ``credential_literal`` read any value starting with ``$x``, ``%x`` or
    ``@x`` (or ending in ``xxx``) as a reference, and these URLs passed unredacted.
    """
    text = shape.format(password)
    assert code in _covering(scanner, text, password)


@pytest.mark.parametrize(
    "text",
    [
        "postgres://app:$PGPASSWORD@db:5432/app",
        "https://bob:%GIT_PASSWORD%@git.internal/repo.git",
        "postgres://app:$(cat /run/secrets/pg)@db/app",
    ],
)
def test_url_password_that_is_a_reference_is_not_reported(scanner: Scanner, text: str) -> None:
    """The fix keeps whole-value references (``$NAME``, ``%NAME%``, ``$(cmd)``) out."""
    assert not [f for f in scanner.scan(text) if f.code.startswith("secret.")]


def test_bearer_token_with_an_inner_equals_is_covered_whole(scanner: Scanner) -> None:
    """RFC 6750 puts ``=`` only at the end, but a token with one inside must not be cut there
    (the part after the ``=`` would leave unredacted)."""
    token = "8kQ2vLz9Xp4mRt7Y==Hn3sWq6JdF0cB5aE"
    text = f"Authorization: Bearer {token}"
    assert "secret.bearer_token" in _covering(scanner, text, token)
