"""Signed policy bundles: the organisation's policy layer, pushed from the hub to endpoints.

A bundle is a JSON envelope::

    {"format": 1, "key": "<base64 Ed25519 public key>", "signature": "<base64>",
     "payload": "<base64 of canonical JSON {org, revision, created, policy, keys}>"}

``policy`` is the TOML text of the organisation layer, validated at publish time exactly as a
local policy file is. ``keys`` lists the public keys the endpoint trusts from this bundle on
(key rotation: a bundle signed by the old key names the new one). The signature covers the
payload bytes as sent, so nothing is re-serialised before verifying.

:func:`verify_bundle` checks, in order: the envelope parses, the signing key is pinned, the
signature verifies, the payload parses, the organisation is the pinned one. Each failure raises
:class:`BundleRejected` with its own reason code; the caller keeps the last good bundle.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from domestique.records import canonical_json, utc_now_iso

FORMAT = 1
MAX_BUNDLE_BYTES = 2 * 1024 * 1024


class BundleRejected(Exception):
    """A bundle that must not be installed: ``code`` is its reason code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Bundle:
    """A verified bundle's content."""

    org: str
    revision: int
    created: str
    policy: str
    keys: tuple[str, ...]
    signed_by: str

    @property
    def policy_sha256(self) -> str:
        return hashlib.sha256(self.policy.encode("utf-8")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise BundleRejected("hub.bundle.unreadable", f"bundle {what} is not text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BundleRejected("hub.bundle.unreadable", f"bundle {what} is not base64") from None


# -- keys -----------------------------------------------------------------------------------


def generate_key(path: Path) -> str:
    """Write a new Ed25519 private key to ``path`` (0600, PEM); return its public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from domestique.keys import ensure_private_dir

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    return public_key_of(path)


def _load_private(path: Path) -> object:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} is not an Ed25519 private key")
    return key


def public_key_of(path: Path) -> str:
    """The base64 raw public key of the private key file at ``path``."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = _load_private(path)
    assert isinstance(key, Ed25519PrivateKey)
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _b64(raw)


def check_public_key(text: str) -> str:
    """``text`` if it is a base64 raw Ed25519 public key; ValueError otherwise."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not a base64 public key") from None
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return text.strip()


# -- signing and verifying --------------------------------------------------------------------


def sign_bundle(
    *, policy: str, org: str, revision: int, key_path: Path, keys: tuple[str, ...] = ()
) -> str:
    """The signed envelope (JSON text) for ``policy``. ``keys``: keys to trust from now on
    (default: the signing key itself)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = _load_private(key_path)
    assert isinstance(key, Ed25519PrivateKey)
    public = public_key_of(key_path)
    payload = canonical_json(
        {
            "org": org,
            "revision": revision,
            "created": utc_now_iso(),
            "policy": policy,
            "keys": list(keys or (public,)),
        }
    )
    envelope = {
        "format": FORMAT,
        "key": public,
        "signature": _b64(key.sign(payload)),
        "payload": _b64(payload),
    }
    return orjson.dumps(envelope, option=orjson.OPT_SORT_KEYS).decode("ascii")


def verify_bundle(raw: bytes | str, *, pinned: tuple[str, ...], org: str | None) -> Bundle:
    """The bundle in ``raw`` if it is intact, signed by a pinned key and for ``org``.

    ``org`` None skips the organisation check (the hub checking its own publish).
    Raises :class:`BundleRejected`.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    if len(data) > MAX_BUNDLE_BYTES:
        raise BundleRejected("hub.bundle.unreadable", "bundle larger than 2 MiB")
    try:
        env = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise BundleRejected("hub.bundle.unreadable", "bundle is not JSON") from None
    if not isinstance(env, dict) or env.get("format") != FORMAT:
        raise BundleRejected("hub.bundle.unreadable", "not a format-1 bundle envelope")
    key_text = env.get("key")
    if not isinstance(key_text, str) or key_text not in pinned:
        raise BundleRejected(
            "hub.bundle.bad_signature", "bundle signed by a key this endpoint does not trust"
        )
    key_raw = _unb64(key_text, "key")
    signature = _unb64(env.get("signature"), "signature")
    payload = _unb64(env.get("payload"), "payload")
    try:
        Ed25519PublicKey.from_public_bytes(key_raw).verify(signature, payload)
    except (InvalidSignature, ValueError):
        raise BundleRejected(
            "hub.bundle.bad_signature", "bundle signature does not verify"
        ) from None
    try:
        body = orjson.loads(payload)
        revision = body["revision"]
        policy = body["policy"]
        keys = tuple(check_public_key(k) for k in body["keys"])
        bundle_org = body["org"]
        created = body["created"]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        raise BundleRejected("hub.bundle.unreadable", "bundle payload is malformed") from None
    if type(revision) is not int or revision < 1 or not isinstance(policy, str):
        raise BundleRejected("hub.bundle.unreadable", "bundle revision or policy malformed")
    if not isinstance(bundle_org, str) or not isinstance(created, str) or not keys:
        raise BundleRejected("hub.bundle.unreadable", "bundle org, time or keys malformed")
    if org is not None and bundle_org != org:
        raise BundleRejected(
            "hub.bundle.wrong_org", f"bundle is for organisation {bundle_org[:40]!r}, not {org}"
        )
    return Bundle(bundle_org, revision, created, policy, keys, key_text)


def validate_policy_text(text: str, *, filename: str) -> list[str]:
    """Validation errors (``file:line:col: …``) for an organisation layer, with the builtin
    layers merged under it exactly as an endpoint would; empty when it is valid."""
    import tempfile

    from domestique.policy import LayerFile, build_policy, discover_layers

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / Path(filename).name
        path.write_text(text, encoding="utf-8")
        layers = discover_layers(home=home, project_dir=None, policy_file=None, system_file=None)
        layers.append(LayerFile("organisation", path, required=True))
        policy = build_policy(layers)
    return [e.replace(str(path), filename) for e in policy.errors]
