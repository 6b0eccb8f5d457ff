"""SHA-256 and HMAC-SHA256 for the hook's path, without ``hashlib``.

``hashlib`` loads OpenSSL's ``_hashlib`` (~3–4 ms of a hook call that decides in a fresh
interpreter, where ``python -c pass`` is ~17 ms); the policy loader's signed cache and the audit
spool only need SHA-256, which CPython also ships as its own small module (``_sha256`` up to
3.11, ``_sha2`` from 3.12). The same digests as ``hashlib.sha256`` and ``hmac.new(…, sha256)``
(``tests/test_digest.py`` compares them); ``hashlib`` is the fallback where neither exists.
"""

from __future__ import annotations

from _operator import _compare_digest as compare_digest

TYPE_CHECKING = False  # not typing's: the hook's path does not load typing
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["compare_digest", "hmac_sha256", "sha256", "sha256_hex"]

_BLOCK = 64  # SHA-256's block size in bytes
_INNER = bytes(x ^ 0x36 for x in range(256))
_OUTER = bytes(x ^ 0x5C for x in range(256))


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 of ``message`` under ``key`` (RFC 2104), as ``hmac.digest(key, m, "sha256")``."""
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(key.translate(_INNER))
    inner.update(message)
    outer = sha256(key.translate(_OUTER))
    outer.update(inner.digest())
    return outer.digest()
