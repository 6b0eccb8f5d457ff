"""Where Domestique keeps its state, and how judged values are fingerprinted and masked.

``DOMESTIQUE_HOME`` (default: the platform's user state directory) holds the audit store, the
per-install key and the per-user policy. Values are fingerprinted with HMAC-SHA256 under the
per-install key (file mode 0600, created on first use), so the audit log can say "the same secret
again" without holding anything that could be brute-forced back into the secret.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

KEY_BYTES = 32
FINGERPRINT_HEX = 32  # 128 bits of the HMAC: ample to tell values apart, short in records


def domestique_home() -> Path:
    """``$DOMESTIQUE_HOME``, else the platform's per-user state directory."""
    env = os.environ.get("DOMESTIQUE_HOME")
    if env:
        return Path(env).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "domestique"
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state else Path.home() / ".local" / "state"
    return base / "domestique"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` if missing, and every missing parent, each with mode 0700; return it.

    ``Path.mkdir(parents=True)`` would give the parents it creates the default mode, leaving
    ``DOMESTIQUE_HOME`` itself readable by others when only a subfolder was asked for.
    """
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)
    return path


def _read_or_create_key(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = _create_key(path)
    if len(data) != KEY_BYTES:
        # A damaged file: refuse rather than fingerprint under a key that changes.
        raise KeyFileError(f"{path}: install key is {len(data)} bytes, expected {KEY_BYTES}")
    return data


def _create_key(path: Path) -> bytes:
    """Create the key atomically: readers see no file or the whole key, never a partial one.

    The key is written to a private temporary file and hard-linked into place; ``link`` fails if
    another process won the race, and then its key is used so fingerprints agree.
    """
    ensure_private_dir(path.parent)
    key = os.urandom(KEY_BYTES)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return path.read_bytes()
        return key
    finally:
        tmp.unlink(missing_ok=True)


class KeyFileError(OSError):
    """The per-install key is missing, unreadable or damaged."""


_KEY_CACHE: dict[Path, bytes] = {}
ORG_KEY_NAME = "org-fingerprint.key"
# The organisation key of each install key loaded in this process (enrolled endpoints).
_ORG_OF_INSTALL: dict[bytes, bytes] = {}
# install fingerprint -> organisation fingerprint, for the values fingerprinted lately in this
# process (fingerprints only, never a value); bounded, the oldest go first.
_ORG_FINGERPRINTS: dict[str, str] = {}
ORG_MEMORY = 1 << 15
_ORG_LOCK = threading.Lock()


def install_key(home: Path | None = None) -> bytes:
    """The per-install HMAC key under ``home`` (created on first use, mode 0600).

    On an endpoint enrolled with the fleet hub, the organisation's fingerprint key
    (``keys/org-fingerprint.key``, written at enrolment) is loaded with it: every
    :class:`Fingerprinter` under this install key then also fingerprints under it."""
    path = (home or domestique_home()) / "keys" / "fingerprint.key"
    key = _KEY_CACHE.get(path)
    if key is None:
        key = _read_or_create_key(path)
        _KEY_CACHE[path] = key
        try:
            org = path.with_name(ORG_KEY_NAME).read_bytes()
        except OSError:
            org = b""
        if len(org) == KEY_BYTES:
            _ORG_OF_INSTALL[key] = org
    return key


def org_fingerprint_of(fingerprint: str) -> str:
    """The organisation fingerprint of the value whose install fingerprint this is, when this
    process fingerprinted it lately under an enrolled install key; '' otherwise."""
    return _ORG_FINGERPRINTS.get(fingerprint, "")


def _remember(fingerprint: str, org: str) -> None:
    with _ORG_LOCK:
        _ORG_FINGERPRINTS.pop(fingerprint, None)
        _ORG_FINGERPRINTS[fingerprint] = org
        while len(_ORG_FINGERPRINTS) > ORG_MEMORY:
            del _ORG_FINGERPRINTS[next(iter(_ORG_FINGERPRINTS))]


class Fingerprinter:
    """Keyed fingerprints of values. Hold one per process; it holds the key, never values."""

    __slots__ = ("_key", "_org")

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._org = _ORG_OF_INSTALL.get(key)

    @classmethod
    def for_home(cls, home: Path | None = None) -> Fingerprinter:
        return cls(install_key(home))

    def digest(self, value: str | bytes) -> bytes:
        import hmac  # hashlib with OpenSSL: only when a secret is fingerprinted, not at import

        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
        return hmac.digest(self._key, data, "sha256")

    def fingerprint(self, value: str | bytes) -> str:
        """``hmac-sha256:<32 hex>`` of ``value``; stable for one install key. On an enrolled
        endpoint the organisation fingerprint is remembered with it (:func:`org_fingerprint_of`)
        for the record's evidence."""
        fp = "hmac-sha256:" + self.digest(value).hex()[:FINGERPRINT_HEX]
        if self._org is not None:
            import hmac

            data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
            org = hmac.digest(self._org, data, "sha256").hex()[:FINGERPRINT_HEX]
            _remember(fp, "hmac-sha256:" + org)
        return fp


def mask_preview(value: str) -> str:
    """A preview that shows a value's shape, not the value: ``AKIA…MPLE``.

    Long values keep 4 characters at each end, medium ones 2, short ones (under 8 characters,
    where any shown part is a large share of the secret) show only their length.
    """
    n = len(value)
    if n >= 20:
        return f"{value[:4]}…{value[-4:]}"
    if n >= 8:
        return f"{value[:2]}…{value[-2:]}"
    return f"…({n})"
