"""The hub's schema, as numbered migrations shipped in the package.

``migrate`` applies every migration the database has not seen, each in its own transaction,
recorded in ``hub_schema``. On PostgreSQL a transaction-scoped advisory lock makes concurrent
starts of several hubs apply each migration once; on SQLite ``BEGIN IMMEDIATE`` does the same.

On PostgreSQL the ``records`` table is partitioned by month on the record's time (one partition
per calendar month, created when the first record of that month arrives); years of records stay
fast to insert and old months can be detached or dropped whole.
"""

from __future__ import annotations

from collections.abc import Callable

from domestique.hub._db import Database, Tx
from domestique.hub.web import _facts

_MIGRATE_LOCK = 0x646F6D6573  # an arbitrary constant: "domes"

_COMMON_V1 = (
    "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE enroll_tokens (
        token_hash TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        uses_left INTEGER NOT NULL
    )""",
    """CREATE TABLE endpoints (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        os_user TEXT NOT NULL,
        os TEXT NOT NULL,
        version TEXT NOT NULL,
        install_key_fp TEXT NOT NULL,
        credential_hash TEXT NOT NULL,
        enrolled_at TEXT NOT NULL,
        revoked_at TEXT,
        last_sync TEXT,
        head_seq BIGINT NOT NULL DEFAULT 0,
        head_hash TEXT NOT NULL,
        bundle_revision INTEGER,
        records BIGINT NOT NULL DEFAULT 0,
        alerts BIGINT NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE counts (
        endpoint_id TEXT NOT NULL,
        hour TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        n BIGINT NOT NULL,
        PRIMARY KEY (endpoint_id, hour, kind, key)
    )""",
    "CREATE INDEX counts_hour ON counts (hour)",
    """CREATE TABLE bundles (
        revision INTEGER PRIMARY KEY,
        created_at TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        envelope TEXT NOT NULL
    )""",
)

_SQLITE_V1 = (
    *_COMMON_V1,
    """CREATE TABLE records (
        endpoint_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        id TEXT NOT NULL,
        time TEXT NOT NULL,
        component TEXT NOT NULL,
        action TEXT NOT NULL,
        codes TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        record TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (endpoint_id, id)
    )""",
    "CREATE INDEX records_seq ON records (endpoint_id, seq)",
    "CREATE INDEX records_time ON records (time)",
    """CREATE TABLE alerts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        code TEXT NOT NULL,
        seq BIGINT,
        record_id TEXT,
        message TEXT NOT NULL,
        detail TEXT NOT NULL,
        dedupe TEXT NOT NULL UNIQUE
    )""",
    """CREATE TABLE refusals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        code TEXT NOT NULL,
        endpoint_id TEXT,
        remote TEXT NOT NULL,
        message TEXT NOT NULL
    )""",
)

_POSTGRES_V1 = (
    *_COMMON_V1,
    """CREATE TABLE records (
        endpoint_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        id TEXT NOT NULL,
        time TIMESTAMPTZ NOT NULL,
        component TEXT NOT NULL,
        action TEXT NOT NULL,
        codes TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        record TEXT NOT NULL,
        received_at TEXT NOT NULL,
        PRIMARY KEY (endpoint_id, id, time)
    ) PARTITION BY RANGE (time)""",
    # No other index: lookups by (endpoint_id, id) use the primary key's leading columns, and
    # the rare lookup by seq (a truncated endpoint) scans one endpoint's rows. Every index
    # costs each of the millions of inserts.
    """CREATE TABLE alerts (
        id BIGSERIAL PRIMARY KEY,
        time TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        code TEXT NOT NULL,
        seq BIGINT,
        record_id TEXT,
        message TEXT NOT NULL,
        detail TEXT NOT NULL,
        dedupe TEXT NOT NULL UNIQUE
    )""",
    """CREATE TABLE refusals (
        id BIGSERIAL PRIMARY KEY,
        time TEXT NOT NULL,
        code TEXT NOT NULL,
        endpoint_id TEXT,
        remote TEXT NOT NULL,
        message TEXT NOT NULL
    )""",
)

# Migration 2, SIEM forwarding (domestique.hub.sinks): one row per sink with its cursors and
# lease. Records and alerts need an order that only grows as transactions commit. SQLite
# serialises writers, so its rowid (records) and id (alerts) are that order. PostgreSQL commits
# concurrent batches in any order, so a sequence alone would let a reader pass a row that
# commits later: each row also keeps the id of the transaction that wrote it (``fwd_xid``), and
# a reader takes only rows below the oldest transaction still running
# (``pg_snapshot_xmin``), which no new row can ever fall under. The cursor is (fwd_xid, seq).
_SINKS_TABLE = """CREATE TABLE sinks (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        records_xid TEXT NOT NULL DEFAULT '0',
        records_seq BIGINT NOT NULL DEFAULT 0,
        alerts_xid TEXT NOT NULL DEFAULT '0',
        alerts_seq BIGINT NOT NULL DEFAULT 0,
        owner TEXT,
        lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,
        forwarded BIGINT NOT NULL DEFAULT 0,
        last_ok TEXT,
        error_code TEXT,
        error TEXT,
        error_at TEXT,
        failures BIGINT NOT NULL DEFAULT 0
    )"""
_SQLITE_V2_SINKS = (_SINKS_TABLE,)
_POSTGRES_V2_SINKS = (
    _SINKS_TABLE,
    # Each session takes 1,000 values at a time: no shared lock per row under concurrent
    # ingest. Order across transactions comes from fwd_xid; the sequence only has to be unique
    # and increasing within one transaction, which a session's cached range is.
    "CREATE SEQUENCE records_fwd_seq CACHE 1000",
    "ALTER TABLE records ADD COLUMN fwd_xid xid8 NOT NULL DEFAULT pg_current_xact_id()",
    "ALTER TABLE records ADD COLUMN fwd_seq BIGINT NOT NULL DEFAULT nextval('records_fwd_seq')",
    "CREATE INDEX records_fwd ON records (fwd_xid, fwd_seq)",
    "ALTER TABLE alerts ADD COLUMN fwd_xid xid8 NOT NULL DEFAULT pg_current_xact_id()",
    "CREATE INDEX alerts_fwd ON alerts (fwd_xid, id)",
)

# A step is an SQL statement or a function run in the migration's transaction (a backfill).
Step = str | Callable[[Tx], None]

# (version, SQLite steps, PostgreSQL steps). Append only; never edit a shipped one.
MIGRATIONS: tuple[tuple[int, tuple[Step, ...], tuple[Step, ...]], ...] = (
    (1, _SQLITE_V1, _POSTGRES_V1),
    (2, _SQLITE_V2_SINKS, _POSTGRES_V2_SINKS),
    # The web report's rollups, fingerprint index, admin sessions and doctor results.
    (_facts.MIGRATION_VERSION, _facts.SQLITE, _facts.POSTGRES),
)


def _applied(tx: Tx) -> set[int]:
    tx.run(
        "CREATE TABLE IF NOT EXISTS hub_schema (version INTEGER PRIMARY KEY, applied_at TEXT "
        "NOT NULL)"
    )
    return {int(v) for (v,) in tx.q("SELECT version FROM hub_schema")}


def migrate(db: Database) -> list[int]:
    """Apply the migrations not yet applied; return their versions (empty: up to date)."""
    from domestique.records import utc_now_iso

    done: list[int] = []
    for version, sqlite_sql, pg_sql in MIGRATIONS:
        with db.tx() as tx:
            if tx.postgres:
                tx.run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
            if version in _applied(tx):
                continue
            for step in pg_sql if tx.postgres else sqlite_sql:
                if isinstance(step, str):
                    tx.run(step)
                else:
                    step(tx)
            tx.run(
                "INSERT INTO hub_schema (version, applied_at) VALUES (%s, %s)",
                (version, utc_now_iso()),
            )
            done.append(version)
    return done


def month_partition(tx: Tx, month: str) -> None:
    """Create the ``records`` partition for ``month`` (``YYYY-MM``) if it does not exist.

    Serialised by an advisory lock so that several hubs creating the same month do not race.
    """
    year, mon = int(month[:4]), int(month[5:7])
    nxt = f"{year + (mon == 12):04d}-{(mon % 12) + 1:02d}-01"
    name = f"records_y{year:04d}m{mon:02d}"
    tx.run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK + 1,))
    exists = tx.one("SELECT to_regclass(%s) IS NOT NULL", (name,))
    if exists and exists[0]:
        return
    # Names and bounds come from two integers checked above, never from input text.
    tx.run(
        f"CREATE TABLE {name} PARTITION OF records "
        f"FOR VALUES FROM ('{year:04d}-{mon:02d}-01T00:00:00Z') TO ('{nxt}T00:00:00Z')"
    )
