"""The placeholder vault for OpenAI Responses ``previous_response_id``.

With ``previous_response_id`` the client does not resend the earlier turns, so the request no
longer holds the values behind placeholders the model may repeat. The vault keeps, per response
id, the mapping placeholder -> value that was in force for that response, on local disk only:

* encrypted with AES-256-GCM (``cryptography``), under a key derived with HKDF-SHA256 from the
  install key, the response id as associated data (a file cannot be moved to another id);
* named by an HMAC of the response id, so file names do not reveal ids;
* expiring: each entry carries its expiry; expired or undecryptable entries are deleted on read
  and by :meth:`PlaceholderVault.sweep`.

Plain files, one per response, so several proxy workers share it without coordination.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

DEFAULT_TTL_S = 30 * 24 * 3600  # OpenAI keeps stored responses 30 days by default
_NONCE = 12


class PlaceholderVault:
    """Encrypted, expiring storage of placeholder mappings by response id."""

    def __init__(self, directory: Path, install_key: bytes, ttl_s: int = DEFAULT_TTL_S) -> None:
        self._dir = directory
        self._ttl = ttl_s
        derived = HKDF(
            algorithm=hashes.SHA256(), length=64, salt=None, info=b"domestique/proxy/vault/v1"
        ).derive(install_key)
        self._aead = AESGCM(derived[:32])
        self._name_key = derived[32:]

    def _path(self, response_id: str) -> Path:
        name = hmac.new(self._name_key, response_id.encode(), hashlib.sha256).hexdigest()[:40]
        return self._dir / f"{name}.bin"

    def put(self, response_id: str, mapping: Mapping[str, str], now: float | None = None) -> None:
        """Store ``mapping`` for ``response_id`` (atomic replace; file mode 0600)."""
        if not mapping:
            return
        self._dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        expires = int((now if now is not None else time.time()) + self._ttl)
        plain = json.dumps({"expires": expires, "mapping": dict(mapping)}).encode()
        nonce = os.urandom(_NONCE)
        blob = nonce + self._aead.encrypt(nonce, plain, response_id.encode())
        path = self._path(response_id)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        tmp.replace(path)

    def get(self, response_id: str, now: float | None = None) -> dict[str, str]:
        """The mapping stored for ``response_id``; empty when none, expired or damaged.

        Raises ``OSError`` only when the vault cannot be read at all (the caller records it).
        """
        path = self._path(response_id)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            plain = self._aead.decrypt(blob[:_NONCE], blob[_NONCE:], response_id.encode())
            data = json.loads(plain)
        except (InvalidTag, ValueError):
            path.unlink(missing_ok=True)
            return {}
        if int(data.get("expires", 0)) < (now if now is not None else time.time()):
            path.unlink(missing_ok=True)
            return {}
        mapping = data.get("mapping", {})
        return {str(k): str(v) for k, v in mapping.items()}

    def sweep(self, now: float | None = None) -> int:
        """Delete entries older than the TTL by file time (the proxy runs it at start).

        An entry can only be decrypted with its response id (associated data), which the
        sweep does not know, so it judges age by the file's modification time; ``get`` checks
        the expiry inside and removes expired or damaged entries when they are asked for.
        """
        limit = (now if now is not None else time.time()) - self._ttl
        removed = 0
        if not self._dir.is_dir():
            return 0
        for path in self._dir.glob("*.bin"):
            try:
                if path.stat().st_mtime < limit:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed
