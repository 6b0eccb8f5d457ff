"""domestique.digest gives the standard library's SHA-256 and HMAC-SHA256."""

from __future__ import annotations

import hashlib
import hmac
import os

import pytest

from domestique.digest import compare_digest, hmac_sha256, sha256_hex


@pytest.mark.parametrize("key_len", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize("msg_len", [0, 1, 55, 64, 1000])
def test_hmac_matches_the_standard_library(key_len: int, msg_len: int) -> None:
    key, msg = os.urandom(key_len), os.urandom(msg_len)
    assert hmac_sha256(key, msg) == hmac.digest(key, msg, "sha256")


def test_rfc4231_case_2() -> None:
    mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?")
    assert mac.hex() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"


def test_sha256_and_compare() -> None:
    data = os.urandom(300)
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert compare_digest("ab", "ab")
    assert not compare_digest(b"ab", b"ac")
