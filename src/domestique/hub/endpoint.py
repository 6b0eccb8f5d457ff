"""The endpoint's side of the fleet: enrolment, uploading records, installing policy bundles.

State lives under ``$DOMESTIQUE_HOME/hub/`` (every file 0600, the folder 0700):

- ``endpoint.json``: the hub URL, this endpoint's id, the organisation, the pinned bundle
  signing keys, whether the organisation requires a bundle, the CA file for the hub;
- ``credential``: the per-endpoint credential (the hub keeps only its hash);
- ``sync.json``: the acknowledgement (the sequence number and hash of the last record the hub
  acknowledged), the last sync, the installed bundle's ETag, and the last bundle rejections;
- ``bundle.json``: the last good signed bundle, read by the policy loader as the organisation
  layer (verified again there).

Records are never deleted from the audit log: acknowledgement only moves ``acked_seq``. A
killed or failed sync leaves it where it was, so the next sync re-sends (the hub skips what it
already holds): nothing is lost and nothing is stored twice. If the record at ``acked_seq`` is
no longer the one the hub acknowledged (the log was cut or rewritten), the next sync starts from
the beginning again and sends the endpoint's current head, so the hub sees the break.

TLS: the hub's certificate is always verified (system roots, or ``--ca FILE``); plain http is
accepted only to a loopback hub unless enrolment said ``--insecure-http`` explicitly.
"""

from __future__ import annotations

import ipaddress
import json
import os
import platform
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from domestique.keys import domestique_home, ensure_private_dir

ENDPOINT_NAME = "endpoint.json"
CREDENTIAL_NAME = "credential"
SYNC_NAME = "sync.json"
BUNDLE_NAME = "bundle.json"
BATCH_RECORDS = 500
BATCH_BYTES = 4 * 1024 * 1024
MAX_REJECTIONS = 20
TIMEOUT_S = 30.0


class SyncError(Exception):
    """Enrolment or sync failed; the message says why (never a credential)."""


def hub_dir(home: Path) -> Path:
    return home / "hub"


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600."""
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _write_json(path: Path, value: object) -> None:
    write_private(path, (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def _read_json(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path} is not a JSON object")
    return value


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    hub: str
    endpoint_id: str
    org: str
    signing_keys: tuple[str, ...]
    require_bundle: bool
    ca: str | None
    insecure_http: bool

    @classmethod
    def load(cls, home: Path) -> EndpointConfig | None:
        path = hub_dir(home) / ENDPOINT_NAME
        if not path.exists():
            return None
        data = _read_json(path)
        return cls(
            hub=str(data["hub"]),
            endpoint_id=str(data["endpoint_id"]),
            org=str(data["org"]),
            signing_keys=tuple(str(k) for k in data["signing_keys"]),
            require_bundle=bool(data.get("require_bundle", False)),
            ca=str(data["ca"]) if data.get("ca") else None,
            insecure_http=bool(data.get("insecure_http", False)),
        )

    def save(self, home: Path) -> None:
        _write_json(
            hub_dir(home) / ENDPOINT_NAME,
            {
                "hub": self.hub,
                "endpoint_id": self.endpoint_id,
                "org": self.org,
                "signing_keys": list(self.signing_keys),
                "require_bundle": self.require_bundle,
                "ca": self.ca,
                "insecure_http": self.insecure_http,
            },
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_hub_url(url: str, *, insecure_http: bool) -> str:
    """The hub base URL without a trailing slash; SyncError for one we must not talk to."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise SyncError(f"hub URL must be https://HOST[:PORT]: {url!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise SyncError("hub URL must carry no credentials, query or fragment")
    if parts.scheme == "http" and not _is_loopback(parts.hostname) and not insecure_http:
        raise SyncError(
            "plain http to a hub that is not on this machine: use https (or --insecure-http)"
        )
    return url.rstrip("/")


def _client(base: str, ca: str | None) -> Any:
    import httpx

    # Certificate errors are never ignored: the default context verifies host and chain.
    context = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
    return httpx.Client(base_url=base, verify=context, timeout=TIMEOUT_S, trust_env=False)


def _error_of(response: Any) -> str:
    try:
        body = response.json()
        return f"{body.get('error', '?')}: {body.get('message', '')}"
    except ValueError:
        return f"HTTP {response.status_code}"


def _request(call: Any, what: str) -> Any:
    import httpx

    try:
        return call()
    except httpx.ConnectError as exc:
        cause = exc.__context__ or exc.__cause__
        if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE" in str(exc):
            raise SyncError(f"{what}: the hub's certificate does not verify ({exc})") from None
        raise SyncError(f"{what}: cannot reach the hub ({exc})") from None
    except httpx.HTTPError as exc:
        raise SyncError(f"{what}: {type(exc).__name__}: {exc}") from None


# -- enrolment ----------------------------------------------------------------------------------


def enroll(
    url: str,
    token: str,
    *,
    home: Path | None = None,
    ca: str | None = None,
    insecure_http: bool = False,
) -> EndpointConfig:
    """Register this endpoint with the hub; store its credential and the pinned keys."""
    from domestique import __version__
    from domestique.keys import Fingerprinter
    from domestique.records import current_user_and_host

    home = home if home is not None else domestique_home()
    base = check_hub_url(url, insecure_http=insecure_http)
    if ca is not None:
        ca = str(Path(ca).expanduser().resolve())
        if not os.path.isfile(ca):
            raise SyncError(f"CA file not found: {ca}")
    user, host = current_user_and_host()
    info = {
        "token": token,
        "host": host[:256],
        "user": user[:256],
        "os": f"{platform.system()} {platform.release()}"[:256],
        "version": __version__,
        "install_key_fingerprint": Fingerprinter.for_home(home).fingerprint(
            "domestique endpoint enrolment"
        ),
    }
    with _client(base, ca) as client:
        response = _request(lambda: client.post("/v1/enroll", json=info), "enrolment")
    if response.status_code != 200:
        raise SyncError(f"enrolment refused: {_error_of(response)}")
    try:
        body = response.json()
        config = EndpointConfig(
            hub=base,
            endpoint_id=str(body["endpoint_id"]),
            org=str(body["org"]),
            signing_keys=tuple(str(k) for k in body["signing_keys"]),
            require_bundle=bool(body.get("require_bundle", False)),
            ca=ca,
            insecure_http=insecure_http,
        )
        credential = str(body["credential"])
    except (ValueError, KeyError, TypeError):
        raise SyncError("enrolment answer is malformed") from None
    org_key = _org_key(body)
    write_private(hub_dir(home) / CREDENTIAL_NAME, credential.encode("ascii") + b"\n")
    if org_key is not None:
        # The organisation's fingerprint key, beside the install key: evidence is then
        # fingerprinted under both (keys.Fingerprinter), and the hub can follow one value
        # across the fleet. Applies to processes started from now on.
        from domestique.keys import ORG_KEY_NAME

        write_private(home / "keys" / ORG_KEY_NAME, org_key)
    config.save(home)
    # A new enrolment starts with nothing acknowledged: everything in the log goes up.
    _write_json(hub_dir(home) / SYNC_NAME, {"acked_seq": 0, "acked_hash": None})
    return config


def _org_key(body: dict[str, Any]) -> bytes | None:
    """The organisation's fingerprint key in the enrolment answer (64 hex), or None (an older
    hub). A malformed one is an error: a wrong key would silently break correlation."""
    text = body.get("fingerprint_key")
    if text is None:
        return None
    try:
        key = bytes.fromhex(str(text))
    except ValueError:
        raise SyncError("enrolment answer is malformed (fingerprint key)") from None
    if len(key) != 32:
        raise SyncError("enrolment answer is malformed (fingerprint key)")
    return key


# -- sync state ---------------------------------------------------------------------------------


def load_state(home: Path) -> dict[str, Any]:
    try:
        return _read_json(hub_dir(home) / SYNC_NAME)
    except (OSError, ValueError):
        return {"acked_seq": 0, "acked_hash": None}


def save_state(home: Path, state: dict[str, Any]) -> None:
    _write_json(hub_dir(home) / SYNC_NAME, state)


def _start_seq(store: Any, state: dict[str, Any]) -> int:
    """Where the next upload starts: after the acknowledged record if it is still the same."""
    acked = int(state.get("acked_seq") or 0)
    if acked <= 0:
        return 0
    row = next(iter(store.rows(after_seq=acked - 1, limit=1)), None)
    if row is None or row.seq != acked or row.hash != state.get("acked_hash"):
        return 0  # the log changed under the acknowledgement: send it all, the hub judges
    return acked


def pending(home: Path) -> int:
    """Records in the log the hub has not acknowledged."""
    from domestique.audit import AuditStore, AuditStoreError

    try:
        with AuditStore.open(home, create=False) as store:
            start = _start_seq(store, load_state(home))
            head, _ = store.head()
    except AuditStoreError:
        return 0
    return max(0, head - start)


def _batches(store: Any, start: int) -> Iterator[list[dict[str, object]]]:
    batch: list[dict[str, object]] = []
    size = 0
    for row in store.rows(after_seq=start):
        item = {"seq": row.seq, "prev_hash": row.prev_hash, "hash": row.hash, "record": row.record}
        if batch and (len(batch) >= BATCH_RECORDS or size + len(row.record) > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += len(row.record) + 200
    if batch:
        yield batch


@dataclass
class SyncResult:
    uploaded: int = 0
    acknowledged_seq: int = 0
    alerts: int = 0
    bundle_revision: int | None = None
    bundle_installed: bool = False
    bundle_rejected: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.bundle_rejected is None


def sync(home: Path | None = None) -> SyncResult:
    """Upload every unacknowledged record, then fetch and install the policy bundle.

    Never raises for a hub or network problem: the result's ``error`` says what failed and
    the records stay until acknowledged.
    """

    home = home if home is not None else domestique_home()
    result = SyncResult()
    config = EndpointConfig.load(home)
    if config is None:
        result.error = "this endpoint is not enrolled (domestique enroll URL --token T)"
        return result
    import fcntl

    credential = (hub_dir(home) / CREDENTIAL_NAME).read_text(encoding="ascii").strip()
    headers = {"Authorization": f"Bearer {credential}"}
    # One sync at a time per home (the proxy, the hook daemon and a person may all start one).
    lock_fd = os.open(hub_dir(home) / "sync.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        return _sync_locked(home, config, headers, result)
    finally:
        os.close(lock_fd)


def _sync_locked(
    home: Path, config: EndpointConfig, headers: dict[str, str], result: SyncResult
) -> SyncResult:
    from domestique.audit import AuditStore, AuditStoreError
    from domestique.hub.batch import encode_batch
    from domestique.records import utc_now_iso

    state = load_state(home)
    try:
        with _client(config.hub, config.ca) as client:
            try:
                store = AuditStore.open(home)
            except AuditStoreError as exc:
                result.error = str(exc)
                return result
            with store:
                start = _start_seq(store, state)
                result.acknowledged_seq = start
                head = store.head()
                for rows in _batches(store, start):
                    body = encode_batch(config.endpoint_id, head, rows)
                    response = _request(
                        lambda body=body: client.post(
                            "/v1/records",
                            content=body,
                            headers={**headers, "Content-Encoding": "gzip"},
                        ),
                        "upload",
                    )
                    if response.status_code != 200:
                        raise SyncError(f"upload refused: {_error_of(response)}")
                    answer = response.json()
                    acked = int(answer["acknowledged_seq"])
                    last = rows[-1]
                    if acked != last["seq"]:
                        raise SyncError("the hub acknowledged a different record than it was sent")
                    state["acked_seq"], state["acked_hash"] = acked, last["hash"]
                    save_state(home, state)
                    result.uploaded += len(rows)
                    result.acknowledged_seq = acked
                    result.alerts += len(answer.get("alerts", ()))
                if start == head[0] and head[0] > 0:
                    # Nothing new, but the hub must still see our head (a cut tail shows here).
                    body = encode_batch(config.endpoint_id, head, [])
                    response = _request(
                        lambda: client.post(
                            "/v1/records",
                            content=body,
                            headers={**headers, "Content-Encoding": "gzip"},
                        ),
                        "upload",
                    )
                    if response.status_code != 200:
                        raise SyncError(f"upload refused: {_error_of(response)}")
                    result.alerts += len(response.json().get("alerts", ()))
            _upload_doctor(client, headers=headers, state=state)
            _fetch_bundle(
                client, headers=headers, home=home, config=config, state=state, result=result
            )
    except SyncError as exc:
        result.error = str(exc)
    except (ValueError, KeyError, TypeError) as exc:
        result.error = f"the hub's answer is malformed ({type(exc).__name__})"
    state["last_attempt"] = utc_now_iso()
    if result.error is None:
        state["last_sync"] = state["last_attempt"]
        state.pop("last_error", None)
    else:
        state["last_error"] = result.error
    save_state(home, state)
    return result


# -- doctor -------------------------------------------------------------------------------------

DOCTOR_EVERY_S = 3600.0


def doctor_hosts(home_dir: Path | None = None) -> list[dict[str, Any]]:
    """``domestique doctor --json --all`` for this user: each agent host, whether the guard is
    installed, fail-closed and answering."""
    from domestique.hooks.doctor import examine
    from domestique.hooks.hosts import HOSTS

    home_dir = home_dir if home_dir is not None else Path.home()
    return [examine(h, home_dir, None).to_json() for h in HOSTS]


def _upload_doctor(client: Any, *, headers: dict[str, str], state: dict[str, Any]) -> None:
    """At most once an hour: the doctor's results to the hub (its Endpoints page). Never
    fails the sync: a hub without the route or a doctor that cannot run is noted only."""
    import time

    if time.time() - float(state.get("doctor_at") or 0) < DOCTOR_EVERY_S:
        return
    try:
        hosts = doctor_hosts()
    except Exception as exc:  # noqa: BLE001 - the doctor is informative, never a sync failure
        state["doctor_error"] = f"doctor failed: {type(exc).__name__}"
        return
    try:
        response = _request(
            lambda: client.post("/v1/doctor", json={"hosts": hosts}, headers=headers), "doctor"
        )
    except SyncError as exc:  # a network failure here must not fail the records' sync
        state["doctor_error"] = f"doctor upload failed: {exc}"
        return
    if response.status_code == 200:
        state["doctor_at"] = time.time()
        state.pop("doctor_error", None)
    else:
        state["doctor_error"] = f"doctor upload refused: {_error_of(response)}"


# -- bundles ------------------------------------------------------------------------------------


def installed_bundle(home: Path, config: EndpointConfig) -> Any:
    """The installed bundle, verified; None when there is none (or it no longer verifies)."""
    from domestique.hub.bundle import BundleRejected, verify_bundle

    path = hub_dir(home) / BUNDLE_NAME
    try:
        return verify_bundle(path.read_bytes(), pinned=config.signing_keys, org=config.org)
    except (OSError, BundleRejected):
        return None


def _reject(home: Path, state: dict[str, Any], code: str, message: str) -> None:
    from domestique.records import utc_now_iso

    rejections = list(state.get("bundle_rejections", []))[-(MAX_REJECTIONS - 1) :]
    rejections.append({"time": utc_now_iso(), "code": code, "message": message})
    state["bundle_rejections"] = rejections


def install_bundle(
    raw: bytes, *, home: Path, config: EndpointConfig, state: dict[str, Any]
) -> tuple[int | None, str | None]:
    """Verify and install ``raw``; return (installed revision, None) or (None, reason code).

    Checks the signature against the pinned keys, the organisation, that the revision is not
    older than the installed one (no rollback), and that the policy validates. Anything else
    keeps the last good bundle in force and is recorded in ``sync.json``.
    """
    from domestique.hub.bundle import BundleRejected, validate_policy_text, verify_bundle

    current = installed_bundle(home, config)
    try:
        bundle = verify_bundle(raw, pinned=config.signing_keys, org=config.org)
        if current is not None and bundle.revision < current.revision:
            raise BundleRejected(
                "hub.bundle.rollback",
                f"bundle revision {bundle.revision} is older than the installed {current.revision}",
            )
        if current is not None and bundle.revision == current.revision:
            return current.revision, None
        errors = validate_policy_text(bundle.policy, filename=f"bundle-r{bundle.revision}.toml")
        if errors:
            raise BundleRejected("hub.bundle.invalid_policy", errors[0])
    except BundleRejected as exc:
        _reject(home, state, exc.code, exc.message)
        return None, exc.code
    write_private(hub_dir(home) / BUNDLE_NAME, raw)
    if bundle.keys != config.signing_keys:
        # Key rotation: a bundle signed by a trusted key names the keys to trust from now on.
        import dataclasses

        dataclasses.replace(config, signing_keys=bundle.keys).save(home)
    return bundle.revision, None


def _fetch_bundle(
    client: Any,
    *,
    headers: dict[str, str],
    home: Path,
    config: EndpointConfig,
    state: dict[str, Any],
    result: SyncResult,
) -> None:
    current = installed_bundle(home, config)
    ask = dict(headers)
    if current is not None:
        ask["X-Domestique-Bundle-Revision"] = str(current.revision)
        if state.get("bundle_etag"):
            ask["If-None-Match"] = str(state["bundle_etag"])
    response = _request(lambda: client.get("/v1/bundle", headers=ask), "bundle")
    require = response.headers.get("X-Domestique-Require-Bundle")
    if require in ("yes", "no") and (require == "yes") != config.require_bundle:
        import dataclasses

        config = dataclasses.replace(config, require_bundle=require == "yes")
        config.save(home)
    result.bundle_revision = current.revision if current is not None else None
    if response.status_code in (204, 304):
        return
    if response.status_code != 200:
        raise SyncError(f"bundle fetch refused: {_error_of(response)}")
    revision, rejected = install_bundle(response.content, home=home, config=config, state=state)
    if rejected is not None:
        result.bundle_rejected = rejected
        return
    result.bundle_installed = revision != result.bundle_revision
    result.bundle_revision = revision
    state["bundle_etag"] = response.headers.get("ETag")


def status(home: Path | None = None) -> dict[str, Any]:
    """``sync --status --json``: enrolment, pending records, last sync, bundle revision."""
    home = home if home is not None else domestique_home()
    config = EndpointConfig.load(home)
    state = load_state(home)
    bundle = installed_bundle(home, config) if config is not None else None
    return {
        "endpoint_id": config.endpoint_id if config else None,
        "hub": config.hub if config else None,
        "org": config.org if config else None,
        "enrolled": config is not None,
        "pending": pending(home) if config else 0,
        "acknowledged_seq": int(state.get("acked_seq") or 0),
        "last_sync": state.get("last_sync"),
        "last_error": state.get("last_error"),
        "bundle_revision": bundle.revision if bundle is not None else None,
        "require_bundle": config.require_bundle if config else False,
        "bundle_rejections": state.get("bundle_rejections", []),
    }
