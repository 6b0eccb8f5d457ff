"""The hub's central store: endpoints, enrolment tokens, records, integrity alerts, bundles.

Everything the hub knows lives in the database (PostgreSQL, or the embedded SQLite default), so
any number of hub processes can serve the same fleet behind a load balancer.

**Chain verification on arrival** (:meth:`HubStore.ingest`). For each endpoint the hub keeps the
head of the chain it holds (``head_seq``, ``head_hash``). Each uploaded link is checked against
it, in sequence order, inside one transaction that also locks the endpoint's row:

- its own hash must match ``sha256("<seq>:<prev_hash>:" + record)`` — else
  ``hub.integrity.bad_hash`` (the record was edited after it was chained; the edited copy is
  kept in the alert, not counted as a decision);
- an id the hub already holds: the same content at the same place is a harmless re-send
  (at-least-once delivery; skipped), different content is ``hub.integrity.rewrite``, the same
  content at another place ``hub.integrity.replay``; neither is stored twice;
- a new record must follow the head: ``seq = head_seq + 1`` and ``prev_hash = head_hash``.
  A higher ``seq`` is ``hub.integrity.gap``; a ``seq`` the hub already passed, or a
  ``prev_hash`` that is not the head, is ``hub.integrity.fork`` (the log was cut or rewritten
  and carried on). The record is stored all the same (it is a real decision) and the head
  follows it, so one break raises one alert;
- the endpoint's own head, sent with every batch, must not be behind the hub's: a log that
  now ends before records the hub holds is ``hub.integrity.truncated`` (a cut tail with an old
  checkpoint put back verifies locally; the hub still holds the records that were cut).

Alerts are stored (deduplicated, so a re-sent batch raises nothing twice) and never stop the
batch: the records are acknowledged so the endpoint can move on, and the alert stays for the
report. Counters per endpoint, hour, action and code are kept in the same transaction, exact,
so ``hub report`` reads a few thousand rows instead of every record.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from domestique.audit import GENESIS_HASH
from domestique.hub._db import Database, HubDatabaseError, Tx
from domestique.hub._schema import migrate, month_partition
from domestique.hub.batch import Batch, Item, Refusal, normalise_time
from domestique.hub.web._facts import DIMENSIONS, Row, add_rows
from domestique.records import utc_now_iso

__all__ = [
    "EndpointInfo",
    "HubDatabaseError",
    "HubStore",
    "IngestResult",
    "Refusal",
]

MAX_FIELD = 256
MAX_MESSAGE = 500


def _hash_secret(secret: str) -> str:
    # Tokens and credentials are 256-bit random values: one sha256 is enough to store them
    # without keeping anything that would let a reader of the database authenticate.
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _clean(value: object, name: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_FIELD or not value.isprintable():
        raise Refusal(400, "hub.batch.malformed", f"{name} must be printable text up to 256")
    return value


def _iso_after(seconds: float) -> str:
    return utc_now_iso(time.time_ns() + int(seconds * 1e9))


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """What an endpoint says about itself at enrolment."""

    host: str
    user: str
    os: str
    version: str
    install_key_fingerprint: str

    @classmethod
    def from_json(cls, data: object) -> EndpointInfo:
        if not isinstance(data, dict):
            raise Refusal(400, "hub.batch.malformed", "enrolment must be a JSON object")
        return cls(
            host=_clean(data.get("host"), "host"),
            user=_clean(data.get("user"), "user"),
            os=_clean(data.get("os"), "os"),
            version=_clean(data.get("version"), "version"),
            install_key_fingerprint=_clean(
                data.get("install_key_fingerprint"), "install_key_fingerprint"
            ),
        )


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one accepted batch did. ``acknowledged_seq``: the endpoint may forget up to it."""

    acknowledged_seq: int
    stored: int
    duplicates: int
    alerts: tuple[dict[str, Any], ...]
    head_seq: int

    def to_json(self) -> dict[str, Any]:
        return {
            "acknowledged_seq": self.acknowledged_seq,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "alerts": list(self.alerts),
            "head_seq": self.head_seq,
        }


_Alert = tuple[str, int | None, str | None, str, str]  # code, seq, record id, message, detail


@dataclass
class _Chain:
    """A batch's records followed along the chain the hub holds (pure: no store access)."""

    new: list[Item]
    duplicates: int
    alerts: list[_Alert]
    head_seq: int
    head_hash: str


def _follow_chain(
    items: Sequence[Item], head_seq: int, head_hash: str, held: dict[str, tuple[int, str, str]]
) -> _Chain:
    """Which records are new, which were held already (duplicates, replays, rewrites), and
    every break of the chain (a bad hash, a gap, a fork), in the batch's order."""
    alerts: list[_Alert] = []
    new: list[Item] = []
    duplicates = 0
    for item in items:
        before = held.get(item.id)
        if before is not None:
            seq, link, record = before
            if link == item.hash and record == item.record and seq == item.seq:
                duplicates += 1
            elif record == item.record:
                alerts.append(
                    (
                        "hub.integrity.replay",
                        item.seq,
                        item.id,
                        f"record {item.id} (held at seq {seq}) was sent again at seq {item.seq}",
                        item.record,
                    )
                )
            else:
                alerts.append(
                    (
                        "hub.integrity.rewrite",
                        item.seq,
                        item.id,
                        f"record {item.id} at seq {item.seq} arrived with content different "
                        "from the copy the hub holds",
                        item.record,
                    )
                )
            continue
        if not item.hash_ok:
            alerts.append(
                (
                    "hub.integrity.bad_hash",
                    item.seq,
                    item.id,
                    f"record {item.id} at seq {item.seq}: its hash does not match its "
                    "content (edited on the endpoint)",
                    item.record,
                )
            )
            # Not stored (its content is not what was decided) and not counted; the chain
            # goes on from its claimed hash, which the next record links to.
            head_seq, head_hash = max(head_seq, item.seq), item.hash
            continue
        if item.seq > head_seq + 1:
            alerts.append(
                (
                    "hub.integrity.gap",
                    item.seq,
                    item.id,
                    f"records {head_seq + 1}..{item.seq - 1} never arrived: the chain "
                    f"jumps from {head_seq} to {item.seq}",
                    "",
                )
            )
        elif item.seq <= head_seq or item.prev_hash != head_hash:
            alerts.append(
                (
                    "hub.integrity.fork",
                    item.seq,
                    item.id,
                    f"record {item.id} at seq {item.seq} does not continue the chain the "
                    f"hub holds (head {head_seq}): the log was cut or rewritten and "
                    "carried on",
                    "",
                )
            )
        new.append(item)
        held[item.id] = (item.seq, item.hash, item.record)
        head_seq, head_hash = item.seq, item.hash
    return _Chain(new, duplicates, alerts, head_seq, head_hash)


class HubStore:
    """The hub's store over a :class:`Database`. Thread-safe; hold one per process."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._months: set[str] = set()

    @classmethod
    def open(cls, url: str | None, home: Path, *, migrate_now: bool = True) -> HubStore:
        """Open the database at ``url`` (None: SQLite under ``home``) and bring it up to date."""
        store = cls(Database(url, home))
        if migrate_now:
            store.migrate()
        return store

    def migrate(self) -> list[int]:
        return migrate(self.db)

    def close(self) -> None:
        self.db.close()

    # -- settings ---------------------------------------------------------------------------
    def setting(self, name: str) -> str | None:
        with self.db.tx() as tx:
            row = tx.one("SELECT value FROM settings WHERE name = %s", (name,))
        return str(row[0]) if row else None

    def set_setting(self, name: str, value: str) -> None:
        with self.db.tx() as tx:
            tx.run(
                "INSERT INTO settings (name, value) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    def setting_or_create(self, name: str, value: str) -> str:
        """The setting; ``value`` is stored first if it has none (first writer wins)."""
        with self.db.tx() as tx:
            tx.run(
                "INSERT INTO settings (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (name, value),
            )
            row = tx.one("SELECT value FROM settings WHERE name = %s", (name,))
        assert row is not None
        return str(row[0])

    def org_id(self) -> str:
        return self.setting_or_create("org_id", "org_" + secrets.token_hex(8))

    def org_fingerprint_key(self) -> bytes:
        """The organisation's fingerprint key (32 bytes, made once): given to each endpoint
        at enrolment, so evidence fingerprints under it match across the fleet."""
        return bytes.fromhex(self.setting_or_create("org_fingerprint_key", secrets.token_hex(32)))

    def signing_keys(self) -> list[str]:
        """The organisation's trusted bundle-signing public keys (base64 raw Ed25519)."""
        raw = self.setting("signing_keys")
        keys = orjson.loads(raw) if raw else []
        return [str(k) for k in keys]

    def trust_key(self, public_key: str, *, replace: bool = False) -> list[str]:
        """Add ``public_key`` to the trusted keys (``replace``: make it the only one)."""
        with self.db.tx() as tx:
            if tx.postgres:
                tx.run("SELECT pg_advisory_xact_lock(%s)", (0x6B657973,))
            row = tx.one("SELECT value FROM settings WHERE name = 'signing_keys'")
            keys = [] if replace or row is None else [str(k) for k in orjson.loads(row[0])]
            if public_key not in keys:
                keys.append(public_key)
            tx.run(
                "INSERT INTO settings (name, value) VALUES ('signing_keys', %s) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (orjson.dumps(keys).decode(),),
            )
        return keys

    def require_bundle(self) -> bool:
        return self.setting("require_bundle") == "yes"

    # -- enrolment ----------------------------------------------------------------------------
    def create_enroll_token(self, *, expires_s: float, uses: int) -> str:
        token = "det_" + secrets.token_urlsafe(32)
        with self.db.tx() as tx:
            tx.run(
                "INSERT INTO enroll_tokens (token_hash, created_at, expires_at, uses_left) "
                "VALUES (%s, %s, %s, %s)",
                (_hash_secret(token), utc_now_iso(), _iso_after(expires_s), uses),
            )
        return token

    def enroll(self, token: str, info: EndpointInfo) -> tuple[str, str]:
        """Register an endpoint with a token; return (endpoint id, credential).

        Raises :class:`Refusal` (``hub.enroll.bad_token``) for an unknown, expired or used-up
        token. The credential is returned once and stored only as a hash.
        """
        endpoint_id = "ep_" + secrets.token_hex(10)
        secret = secrets.token_urlsafe(32)
        with self.db.tx() as tx:
            changed = tx.run(
                "UPDATE enroll_tokens SET uses_left = uses_left - 1 "
                "WHERE token_hash = %s AND uses_left > 0 AND expires_at > %s",
                (_hash_secret(token), utc_now_iso()),
            )
            if changed != 1:
                raise Refusal(401, "hub.enroll.bad_token", "unknown, expired or used-up token")
            tx.run(
                "INSERT INTO endpoints (id, host, os_user, os, version, install_key_fp, "
                "credential_hash, enrolled_at, head_seq, head_hash) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 0, %s)",
                (
                    endpoint_id,
                    info.host,
                    info.user,
                    info.os,
                    info.version,
                    info.install_key_fingerprint,
                    _hash_secret(secret),
                    utc_now_iso(),
                    GENESIS_HASH,
                ),
            )
        return endpoint_id, f"{endpoint_id}.{secret}"

    def authenticate(self, credential: str | None) -> str:
        """The endpoint id a credential belongs to. Raises :class:`Refusal` (401)."""
        if not credential:
            raise Refusal(401, "hub.auth.missing", "no endpoint credential")
        endpoint_id, _, secret = credential.partition(".")
        if not endpoint_id or not secret or len(credential) > 200:
            raise Refusal(401, "hub.auth.invalid", "malformed endpoint credential")
        with self.db.tx() as tx:
            row = tx.one(
                "SELECT credential_hash, revoked_at FROM endpoints WHERE id = %s", (endpoint_id,)
            )
        if row is None or not hmac.compare_digest(str(row[0]), _hash_secret(secret)):
            raise Refusal(401, "hub.auth.invalid", "unknown endpoint or wrong credential")
        if row[1] is not None:
            raise Refusal(401, "hub.auth.revoked", f"endpoint {endpoint_id} is revoked")
        return endpoint_id

    def revoke(self, endpoint_id: str) -> bool:
        with self.db.tx() as tx:
            return (
                tx.run(
                    "UPDATE endpoints SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                    (utc_now_iso(), endpoint_id),
                )
                == 1
            )

    def record_refusal(
        self, code: str, message: str, *, endpoint_id: str | None = None, remote: str = ""
    ) -> None:
        """Keep a refused call for the report. Never raises (a refusal must still answer)."""
        try:
            with self.db.tx() as tx:
                tx.run(
                    "INSERT INTO refusals (time, code, endpoint_id, remote, message) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    (utc_now_iso(), code, endpoint_id, remote[:100], message[:MAX_MESSAGE]),
                )
        except HubDatabaseError:
            return

    def endpoint_id_claimed(self, credential: str | None) -> str | None:
        """The endpoint id part of a credential that failed, if it names a known endpoint."""
        if not credential:
            return None
        endpoint_id = credential.partition(".")[0]
        with self.db.tx() as tx:
            row = tx.one("SELECT id FROM endpoints WHERE id = %s", (endpoint_id,))
        return str(row[0]) if row else None

    def note_bundle(self, endpoint_id: str, revision: int | None) -> None:
        with self.db.tx() as tx:
            tx.run(
                "UPDATE endpoints SET bundle_revision = %s, last_sync = %s WHERE id = %s",
                (revision, utc_now_iso(), endpoint_id),
            )

    # -- records -----------------------------------------------------------------------------
    def _ensure_months(self, items: Sequence[Item]) -> None:
        months = {item.time[:7] for item in items} - self._months
        for month in sorted(months):
            with self.db.tx() as tx:
                month_partition(tx, month)
            self._months.add(month)

    def ingest(self, endpoint_id: str, batch: Batch) -> IngestResult:
        """Verify and store one batch in one transaction; see the module docstring.

        Raises :class:`Refusal` for a batch naming another endpoint than the credential's.
        """
        if batch.endpoint_id != endpoint_id:
            raise Refusal(
                403,
                "hub.batch.wrong_endpoint",
                f"batch claims endpoint {batch.endpoint_id[:40]!r}, credential is {endpoint_id}",
            )
        if self.db.postgres and batch.items:
            self._ensure_months(batch.items)
        with self.db.tx() as tx:
            return self._ingest(tx, endpoint_id, batch)

    def _ingest(self, tx: Tx, endpoint_id: str, batch: Batch) -> IngestResult:
        head_seq, head_hash, held = self._held(tx, endpoint_id, batch)
        now = utc_now_iso()
        chain = _follow_chain(batch.items, head_seq, head_hash, held)
        head_seq, head_hash = self._check_head(tx, endpoint_id, batch, chain)
        counted = self._store_records(tx, endpoint_id, chain.new, now)
        stored_alerts, out_alerts = self._store_alerts(tx, endpoint_id, chain.alerts, now)
        self._advance(
            tx,
            endpoint_id,
            counted=counted,
            head=(head_seq, head_hash),
            now=now,
            stored=(len(chain.new), stored_alerts),
        )
        acknowledged = batch.items[-1].seq if batch.items else batch.head_seq
        return IngestResult(
            acknowledged, len(chain.new), chain.duplicates, tuple(out_alerts), head_seq
        )

    def _held(
        self, tx: Tx, endpoint_id: str, batch: Batch
    ) -> tuple[int, str, dict[str, tuple[int, str, str]]]:
        """The endpoint's head (seq, hash), locked on PostgreSQL, and the batch's records the
        hub already holds (id -> (seq, hash, record)); a revoked endpoint is refused."""
        lock = " FOR UPDATE" if tx.postgres else ""
        ids = [item.id for item in batch.items]
        with tx.pipeline():  # the endpoint's row and the ids already held: one round trip
            head_cur = tx.start(
                f"SELECT head_seq, head_hash, revoked_at FROM endpoints WHERE id = %s{lock}",  # noqa: S608
                (endpoint_id,),
            )
            held_cur = None
            if ids and tx.postgres:
                held_cur = tx.start(
                    "SELECT id, seq, hash, record FROM records "
                    "WHERE endpoint_id = %s AND id = ANY(%s)",
                    (endpoint_id, ids),
                )
            elif ids:
                marks = ", ".join("?" for _ in ids)
                query = f"SELECT id, seq, hash, record FROM records WHERE endpoint_id = ? AND id IN ({marks})"  # noqa: E501, S608 - placeholders only
                held_cur = tx.start(query, (endpoint_id, *ids))
            row = head_cur.fetchone()
            got = held_cur.fetchall() if held_cur is not None else []
        if row is None or row[2] is not None:
            raise Refusal(401, "hub.auth.revoked", f"endpoint {endpoint_id} is revoked")
        head_seq, head_hash = int(row[0]), str(row[1])
        held: dict[str, tuple[int, str, str]] = {
            str(r[0]): (int(r[1]), str(r[2]), str(r[3])) for r in got
        }
        return head_seq, head_hash, held

    def _check_head(self, tx: Tx, endpoint_id: str, batch: Batch, chain: _Chain) -> tuple[int, str]:
        """The endpoint's claimed head against the chain the hub holds: a head behind it (cut)
        or beside it (rewritten) is an alert, and the chain re-anchors on the endpoint's head."""
        head_seq, head_hash, alerts = chain.head_seq, chain.head_hash, chain.alerts
        if batch.head_seq < head_seq or (
            batch.head_seq == head_seq and batch.head_hash != head_hash
        ):
            claimed = tx.one(
                "SELECT 1 FROM records WHERE endpoint_id = %s AND seq = %s AND hash = %s",
                (endpoint_id, batch.head_seq, batch.head_hash),
            )
            if batch.head_seq < head_seq:
                code = "hub.integrity.truncated"
                message = (
                    f"the endpoint's log now ends at seq {batch.head_seq} but the hub holds "
                    f"records up to {head_seq}: records after {batch.head_seq} were cut "
                    + ("(an old head put back)" if claimed else "and the head rewritten")
                )
            else:
                code = "hub.integrity.fork"
                message = (
                    f"the endpoint's head at seq {head_seq} is not the record the hub holds "
                    "there: its log was rewritten"
                )
            alerts.append(
                (
                    code,
                    batch.head_seq,
                    None,
                    message,
                    f"{batch.head_seq}:{batch.head_hash}:{head_seq}:{head_hash}",
                )
            )
            # Re-anchor on the endpoint's head: decisions it records from now on continue
            # from there without raising the same break again.
            head_seq, head_hash = batch.head_seq, batch.head_hash
        return head_seq, head_hash

    def _store_records(
        self, tx: Tx, endpoint_id: str, new: list[Item], now: str
    ) -> list[tuple[tuple[str, str, str], int]]:
        """Store the batch's new records (COPY) and their web rollups; return the hourly
        counters to add, in a fixed order (concurrent upserts never deadlock)."""
        counts: Counter[tuple[str, str, str]] = Counter()
        counted: list[tuple[tuple[str, str, str], int]] = []
        if new:
            # The web report's dimensions of each record (hub/web/_facts.py).
            rows = [
                Row(endpoint_id, i.id, i.time, i.component, i.action, i.codes, i.dims) for i in new
            ]
            tx.copy_rows(
                "records",
                (
                    "endpoint_id",
                    "seq",
                    "id",
                    "time",
                    "component",
                    "action",
                    "codes",
                    "prev_hash",
                    "hash",
                    "record",
                    "received_at",
                    *DIMENSIONS,
                ),
                [
                    (
                        endpoint_id,
                        i.seq,
                        i.id,
                        i.time,
                        i.component,
                        i.action,
                        " ".join(i.codes),
                        i.prev_hash,
                        i.hash,
                        i.record,
                        now,
                        r.dims.developer,
                        r.dims.repository,
                        r.dims.agent,
                        r.dims.destination,
                    )
                    for i, r in zip(new, rows, strict=True)
                ],
            )
            add_rows(tx, rows)
            for i in new:
                hour = i.time[:13]
                counts[(hour, "a", i.action)] += 1
                for code in i.codes:
                    counts[(hour, "c", code)] += 1
            counted = sorted(counts.items())  # a fixed order: concurrent upserts never deadlock
        return counted

    def _store_alerts(
        self, tx: Tx, endpoint_id: str, alerts: list[_Alert], now: str
    ) -> tuple[int, list[dict[str, Any]]]:
        """Store each alert once (deduplicated by its content); return how many were new and
        every alert as the endpoint is told of it."""
        stored_alerts = 0
        out_alerts: list[dict[str, Any]] = []
        for code, at_seq, rid, message, detail in alerts:
            dedupe = hashlib.sha256(
                f"{endpoint_id}\0{code}\0{at_seq}\0{rid}\0{detail}".encode()
            ).hexdigest()
            stored_alerts += tx.run(
                "INSERT INTO alerts (time, endpoint_id, code, seq, record_id, message, detail, "
                "dedupe) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (dedupe) DO NOTHING",
                (now, endpoint_id, code, at_seq, rid, message[:MAX_MESSAGE], detail, dedupe),
            )
            out_alerts.append({"code": code, "seq": at_seq, "record_id": rid, "message": message})
        return stored_alerts, out_alerts

    def _advance(
        self,
        tx: Tx,
        endpoint_id: str,
        *,
        counted: list[tuple[tuple[str, str, str], int]],
        head: tuple[int, str],
        now: str,
        stored: tuple[int, int],
    ) -> None:
        """Add the counters and move the endpoint's head (and its record and alert counts:
        ``stored``), in one round trip."""
        head_seq, head_hash = head
        records, stored_alerts = stored
        with tx.pipeline():  # counters and the endpoint's head go out together
            if counted and tx.postgres:
                # One statement for every counter of the batch (a batch can span many hours).
                tx.start(
                    "INSERT INTO counts (endpoint_id, hour, kind, key, n) "
                    "SELECT %s, h, k, c, n FROM unnest(%s::text[], %s::text[], %s::text[], "
                    "%s::bigint[]) AS t(h, k, c, n) ON CONFLICT (endpoint_id, hour, kind, key) "
                    "DO UPDATE SET n = counts.n + excluded.n",
                    (
                        endpoint_id,
                        [h for (h, _, _), _ in counted],
                        [k for (_, k, _), _ in counted],
                        [c for (_, _, c), _ in counted],
                        [n for _, n in counted],
                    ),
                )
            elif counted:
                tx.many(
                    "INSERT INTO counts (endpoint_id, hour, kind, key, n) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (endpoint_id, hour, kind, key) "
                    "DO UPDATE SET n = counts.n + excluded.n",
                    [(endpoint_id, h, k, key, n) for (h, k, key), n in counted],
                )
            tx.start(
                "UPDATE endpoints SET head_seq = %s, head_hash = %s, last_sync = %s, "
                "records = records + %s, alerts = alerts + %s WHERE id = %s",
                (head_seq, head_hash, now, records, stored_alerts, endpoint_id),
            )

    # -- bundles ------------------------------------------------------------------------------
    def latest_bundle(self) -> tuple[int, str, str] | None:
        """(revision, sha256, envelope JSON) of the newest bundle, or None."""
        with self.db.tx() as tx:
            row = tx.one(
                "SELECT revision, sha256, envelope FROM bundles ORDER BY revision DESC LIMIT 1"
            )
        return (int(row[0]), str(row[1]), str(row[2])) if row else None

    def store_bundle(self, revision: int, envelope: str) -> None:
        """Store a signed bundle. Raises ValueError unless ``revision`` is above every one held."""
        digest = hashlib.sha256(envelope.encode("utf-8")).hexdigest()
        with self.db.tx() as tx:
            if tx.postgres:
                tx.run("LOCK TABLE bundles IN EXCLUSIVE MODE")
            row = tx.one("SELECT max(revision) FROM bundles")
            top = int(row[0]) if row and row[0] is not None else 0
            if revision <= top:
                raise ValueError(f"revision {revision} is not above the newest published ({top})")
            tx.run(
                "INSERT INTO bundles (revision, created_at, sha256, envelope) "
                "VALUES (%s, %s, %s, %s)",
                (revision, utc_now_iso(), digest, envelope),
            )

    def next_revision(self) -> int:
        with self.db.tx() as tx:
            row = tx.one("SELECT max(revision) FROM bundles")
        return (int(row[0]) if row and row[0] is not None else 0) + 1

    # -- report -------------------------------------------------------------------------------
    def report(
        self, *, since: str | None = None, silent_after_s: float = 86400.0
    ) -> dict[str, Any]:
        """Fleet totals (exact): records by action and code, per endpoint, alerts, refusals.

        ``since``: an ISO UTC time; whole hours after it come from the counters, the part of
        its own hour from the records themselves.
        """
        since_n = normalise_time(since) if since else None
        with self.db.tx() as tx:
            per: dict[tuple[str, str, str], int] = Counter()
            if since_n is None:
                rows = tx.q(
                    "SELECT endpoint_id, kind, key, sum(n) FROM counts GROUP BY endpoint_id, "
                    "kind, key"
                )
            else:
                rows = tx.q(
                    "SELECT endpoint_id, kind, key, sum(n) FROM counts WHERE hour > %s "
                    "GROUP BY endpoint_id, kind, key",
                    (since_n[:13],),
                )
                rows += self._partial_hour(tx, since_n)
            for endpoint_id, kind, key, n in rows:
                per[(str(endpoint_id), str(kind), str(key))] += int(n)
            endpoints = tx.q(
                "SELECT id, host, os_user, os, version, enrolled_at, revoked_at, last_sync, "
                "head_seq, bundle_revision FROM endpoints ORDER BY id"
            )
            alert_rows = tx.q("SELECT endpoint_id, code, count(*) FROM alerts GROUP BY 1, 2")
            refusal_rows = tx.q("SELECT code, count(*) FROM refusals GROUP BY code")
            latest = tx.one("SELECT max(revision) FROM bundles")
        by_action: Counter[str] = Counter()
        by_code: Counter[str] = Counter()
        per_endpoint: Counter[str] = Counter()
        for (endpoint_id, kind, key), n in per.items():
            if kind == "a":
                by_action[key] += n
                per_endpoint[endpoint_id] += n
            else:
                by_code[key] += n
        alerts_by_endpoint: Counter[str] = Counter()
        alerts_by_code: Counter[str] = Counter()
        for endpoint_id, code, n in alert_rows:
            alerts_by_endpoint[str(endpoint_id)] += int(n)
            alerts_by_code[str(code)] += int(n)
        silent_before = utc_now_iso(time.time_ns() - int(silent_after_s * 1e9))
        out_endpoints = []
        for eid, host, user, os_name, version, enrolled, revoked, last, head, rev in endpoints:
            out_endpoints.append(
                {
                    "id": eid,
                    "host": host,
                    "user": user,
                    "os": os_name,
                    "version": version,
                    "enrolled_at": enrolled,
                    "revoked": revoked is not None,
                    "records": per_endpoint.get(eid, 0),
                    "last_sync": last,
                    "silent": last is None or str(last) < silent_before,
                    "head_seq": int(head),
                    "bundle_revision": rev,
                    "integrity_alerts": alerts_by_endpoint.get(eid, 0),
                }
            )
        return {
            "since": since_n,
            "records": sum(by_action.values()),
            "by_action": dict(sorted(by_action.items())),
            "by_code": dict(sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0]))),
            "endpoints": out_endpoints,
            "integrity_alerts": sum(alerts_by_code.values()),
            "alerts_by_code": dict(sorted(alerts_by_code.items())),
            "refusals": {str(c): int(n) for c, n in sorted(refusal_rows)},
            "bundle_revision": int(latest[0]) if latest and latest[0] is not None else None,
        }

    def _partial_hour(self, tx: Tx, since: str) -> list[tuple[Any, ...]]:
        """Counter rows for the records in ``since``'s own hour at or after ``since``."""
        hour_end = _next_hour(since)
        if tx.postgres:
            got = tx.q(
                "SELECT endpoint_id, action, codes FROM records "
                "WHERE time >= %s::timestamptz AND time < %s::timestamptz",
                (since, hour_end),
            )
        else:
            got = tx.q(
                "SELECT endpoint_id, action, codes FROM records WHERE time >= %s AND time < %s",
                (since, hour_end),
            )
        out: list[tuple[Any, ...]] = []
        for endpoint_id, action, codes in got:
            out.append((endpoint_id, "a", action, 1))
            out.extend((endpoint_id, "c", code, 1) for code in str(codes).split())
        return out

    def alerts(self, endpoint_id: str | None = None) -> list[dict[str, Any]]:
        with self.db.tx() as tx:
            where = "WHERE endpoint_id = %s " if endpoint_id else ""
            rows = tx.q(
                "SELECT time, endpoint_id, code, seq, record_id, message FROM alerts "  # noqa: S608 - fixed text
                f"{where}ORDER BY id",
                (endpoint_id,) if endpoint_id else (),
            )
        keys = ("time", "endpoint_id", "code", "seq", "record_id", "message")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def endpoint_rows(self) -> list[dict[str, Any]]:
        """Every endpoint: id, host, user, version."""
        with self.db.tx() as tx:
            rows = tx.q("SELECT id, host, os_user, version FROM endpoints ORDER BY id")
        return [{"id": r[0], "host": r[1], "user": r[2], "version": r[3]} for r in rows]

    def stream_records(self, *, since: str | None = None) -> Iterator[Sequence[bytes | memoryview]]:
        """[endpoint id, developer, record JSON] (UTF-8) of every stored record at or after
        ``since``, streamed (bounded memory), in no particular order. One read transaction."""
        where, params = "", tuple[str, ...]()
        if since is not None:
            cast = "::timestamptz" if self.db.postgres else ""
            where, params = f" WHERE time >= %s{cast}", (normalise_time(since),)
        with self.db.tx() as tx:
            yield from tx.copy_out(
                f"SELECT endpoint_id, developer, record FROM records{where}",  # noqa: S608 - fixed
                params,
            )

    def record_ids(self, endpoint_id: str) -> list[str]:
        with self.db.tx() as tx:
            rows = tx.q(
                "SELECT id FROM records WHERE endpoint_id = %s ORDER BY seq", (endpoint_id,)
            )
        return [str(r[0]) for r in rows]


def _next_hour(iso: str) -> str:
    import datetime as dt

    start = dt.datetime.strptime(iso[:13], "%Y-%m-%dT%H").replace(tzinfo=dt.UTC)
    return (start + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
