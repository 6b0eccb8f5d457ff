"""What the web report reads, kept at ingest: filterable rollups and a fingerprint index.

Every accepted record gives its **dimensions** (:func:`dimensions`): the developer (the
record's OS user), the repository (the project directory a command ran in), the agent, the
destination (the model provider's host for the firewall, the first host a command or tool
reaches otherwise), the model, the bytes sent to the provider and the values redacted by kind
(secret / personal data / customer record). In the same transaction as the records:

- ``facts``: one row per hour and combination of dimensions with exact counts, bytes and
  redactions: the Overview and What-left pages sum these, not the records;
- ``fact_codes``: the same per reason code (top reason codes under any filter);
- ``findings``: every fingerprint a record's evidence cites (the install's and the
  organisation's), so "where did this value appear" is one index lookup;
- the records table carries the dimensions as columns, for the Decisions page's filters.

The migration (:data:`MIGRATION`) adds these and fills them from the records already held, so
the pages are exact for the whole store, not only what arrived after the upgrade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import orjson

from domestique.hub._db import Tx

MAX_DIM = 200  # characters kept of each dimension (a path can be long)
MAX_FINDINGS = 64  # fingerprints indexed per record
KINDS = {"secret": "secret", "pii": "personal", "records": "customer_record"}
DIMENSIONS = ("developer", "repository", "agent", "destination")
# The rollups' key: the period (``YYYY-MM-DDTHH`` in ``facts``, ``YYYY-MM-DD`` in
# ``facts_day``), then the dimensions.
FACT_KEY = (
    "period",
    "endpoint_id",
    "component",
    "action",
    "developer",
    "repository",
    "agent",
    "destination",
    "model",
)
CODE_KEY = (*FACT_KEY[:-1], "code")
SUMS = ("n", "bytes", "red_secret", "red_pii", "red_records")
# The dimensions a filter names, as they follow the period in FACT_KEY (the action aside).
FILTER_DIMS = ("endpoint", "component", "action", "developer", "repository", "agent", "destination")


class Dimensions(NamedTuple):  # a tuple: built for every record ingested, cheaply
    developer: str
    repository: str
    agent: str
    destination: str
    model: str
    bytes: int
    redactions: tuple[int, int, int]  # secret, personal, customer record
    fingerprints: tuple[tuple[str, str, str], ...]  # (fingerprint, code, where)


def _text(value: object) -> str:
    return value[:MAX_DIM] if isinstance(value, str) else ""


def _host(url: object) -> str:
    if not isinstance(url, str):
        return ""
    try:
        return (urlsplit(url).hostname or "")[:MAX_DIM]
    except ValueError:
        return ""


def dimensions(data: Mapping[str, Any]) -> Dimensions:
    """The dimensions of one record (its canonical JSON, parsed). Never raises on odd shapes."""
    subject = data.get("subject")
    subject = subject if isinstance(subject, dict) else {}
    obj = data.get("object")
    obj = obj if isinstance(obj, dict) else {}
    component = data.get("component")
    reasons = data.get("reasons")
    reasons = reasons if isinstance(reasons, list) else []
    destination = ""
    model = ""
    size = 0
    if component == "proxy":
        destination = _text(obj.get("upstream_host"))
        model = _text(obj.get("model"))
        got = obj.get("bytes_in")
        size = got if type(got) is int else 0
    else:
        hosts = obj.get("hosts")
        urls = obj.get("urls")
        if isinstance(hosts, list) and hosts:
            destination = _text(hosts[0])
        elif isinstance(urls, list) and urls:
            destination = _host(urls[0])
    redacted = [0, 0, 0]
    prints: dict[tuple[str, str, str], None] = {}
    for reason in reasons:
        if not isinstance(reason, dict):
            continue
        code = _text(reason.get("code"))
        evidence = reason.get("evidence")
        evidence = evidence if isinstance(evidence, list) else []
        kind = code.partition(".")[0]
        if data.get("action") == "redact" and kind in KINDS:
            redacted[list(KINDS).index(kind)] += max(1, len(evidence))
        for ev in evidence:
            if not isinstance(ev, dict):
                continue
            where = _text(ev.get("where"))
            for name in ("fingerprint", "org_fingerprint"):
                fp = ev.get(name)
                if isinstance(fp, str) and fp and len(prints) < MAX_FINDINGS:
                    prints[(fp[:100], code, where)] = None
    return Dimensions(
        developer=_text(subject.get("user")),
        repository=_text(obj.get("cwd")) if component != "proxy" else "",
        agent=_text(subject.get("agent")),
        destination=destination,
        model=model,
        bytes=max(0, int(size)),
        redactions=(redacted[0], redacted[1], redacted[2]),
        fingerprints=tuple(prints),
    )


class Row(NamedTuple):
    """One stored record as the rollups need it."""

    endpoint_id: str
    id: str
    time: str
    component: str
    action: str
    codes: Sequence[str]
    dims: Dimensions


def _upsert(
    tx: Tx, table: str, key: Sequence[str], sums: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    """Add ``rows`` (key columns, then sums) to ``table``: one statement on PostgreSQL (the
    rows as arrays through ``unnest``), ``executemany`` on SQLite."""
    if not rows:
        return
    cols = ", ".join(key)
    names = f"{cols}, {', '.join(sums)}"
    update = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in sums)
    conflict = f"ON CONFLICT ({cols}) DO UPDATE SET {update}"
    if tx.postgres:
        arrays = ", ".join(["%s::text[]"] * len(key) + ["%s::bigint[]"] * len(sums))
        tx.start(
            f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}) AS t({names}) "  # noqa: S608 - fixed names
            f"{conflict}",
            [list(column) for column in zip(*rows, strict=True)],
        )
        return
    marks = ", ".join(["%s"] * (len(key) + len(sums)))
    tx.many(f"INSERT INTO {table} ({names}) VALUES ({marks}) {conflict}", rows)  # noqa: S608


def add_rows(tx: Tx, rows: Sequence[Row]) -> None:
    """Add stored records to the rollups (per hour and per day), the filter values and the
    fingerprint index, in the caller's transaction."""
    if not rows:
        return
    found: list[tuple[str, str, str, str, str, str]] = []
    hourly: dict[tuple[str, ...], list[int]] = {}
    codes: Counter[tuple[str, ...]] = Counter()
    for r in rows:
        d = r.dims
        key: tuple[str, ...] = (
            r.time[:13],
            r.endpoint_id,
            r.component,
            r.action,
            d.developer,
            d.repository,
            d.agent,
            d.destination,
            d.model,
        )
        acc = hourly.get(key)
        if acc is None:
            acc = hourly[key] = [0, 0, 0, 0, 0]
        acc[0] += 1
        acc[1] += d.bytes
        if d.redactions != (0, 0, 0):
            acc[2] += d.redactions[0]
            acc[3] += d.redactions[1]
            acc[4] += d.redactions[2]
        for code in r.codes:
            codes[(*key[:-1], code)] += 1
        if d.fingerprints:
            found.extend(
                (fp, r.endpoint_id, r.id, r.time, code, where) for fp, code, where in d.fingerprints
            )
    # The day rollups and the filter values from the hour rollups (fewer rows than records).
    daily: dict[tuple[str, ...], list[int]] = {}
    seen: dict[tuple[str, str, str], list[str]] = {}
    for key, totals in hourly.items():
        day = daily.get((key[0][:10], *key[1:]))
        if day is None:
            daily[(key[0][:10], *key[1:])] = list(totals)
        else:
            for i, v in enumerate(totals):
                day[i] += v
        for name, value in zip(FILTER_DIMS, key[1:], strict=False):
            if value:
                span = seen.get((key[1], name, value))
                if span is None:
                    seen[(key[1], name, value)] = [key[0], key[0]]
                else:
                    span[0], span[1] = min(span[0], key[0]), max(span[1], key[0])
    daily_codes: Counter[tuple[str, ...]] = Counter()
    for code_key, n in codes.items():
        daily_codes[(code_key[0][:10], *code_key[1:])] += n
    # A fixed order: concurrent upserts from several hubs never deadlock.
    pending: list[tuple[str, Sequence[str], Sequence[str], list[tuple[Any, ...]]]] = [
        ("facts", FACT_KEY, SUMS, [(*k, *v) for k, v in sorted(hourly.items())]),
        ("fact_codes", CODE_KEY, ("n",), [(*k, n) for k, n in sorted(codes.items())]),
        ("facts_day", FACT_KEY, SUMS, [(*k, *v) for k, v in sorted(daily.items())]),
        ("fact_codes_day", CODE_KEY, ("n",), [(*k, n) for k, n in sorted(daily_codes.items())]),
    ]
    values = [(*k, v[0], v[1]) for k, v in sorted(seen.items())]
    _dim_values(tx, values)
    with tx.pipeline():  # every upsert goes out at once (PostgreSQL)
        for name, columns, sums, upserts in pending:
            _upsert(tx, name, columns, sums, upserts)
    if found:
        tx.copy_rows(
            "findings", ("fingerprint", "endpoint_id", "record_id", "time", "code", "place"), found
        )


def _dim_values(tx: Tx, values: list[tuple[str, str, str, str, str]]) -> None:
    """Widen the seen-periods of each endpoint's filter values (kept per endpoint, so that
    uploads from different endpoints never wait on each other's row locks); only the values
    whose span grows are written, read first without a lock."""
    if not values:
        return
    pairs = ", ".join(["(%s, %s, %s)"] * len(values))
    held = {
        (str(e), str(n), str(v)): (str(a), str(b))
        for e, n, v, a, b in tx.q(
            "SELECT endpoint_id, name, value, first_period, last_period FROM dim_values "  # noqa: S608 - placeholders only
            f"WHERE (endpoint_id, name, value) IN (VALUES {pairs})",
            [x for v in values for x in v[:3]],
        )
    }
    values = [
        v
        for v in values
        if (span := held.get((v[0], v[1], v[2]))) is None or v[3] < span[0] or v[4] > span[1]
    ]
    if not values:
        return
    least, greatest = ("LEAST", "GREATEST") if tx.postgres else ("min", "max")
    conflict = (
        f"ON CONFLICT (endpoint_id, name, value) DO UPDATE SET first_period = {least}("
        f"dim_values.first_period, excluded.first_period), last_period = {greatest}("
        "dim_values.last_period, excluded.last_period)"
    )
    cols = "endpoint_id, name, value, first_period, last_period"
    if tx.postgres:
        tx.run(
            f"INSERT INTO dim_values ({cols}) SELECT * FROM unnest(%s::text[], %s::text[], "  # noqa: S608 - fixed names
            f"%s::text[], %s::text[], %s::text[]) AS t({cols}) {conflict}",
            [list(column) for column in zip(*values, strict=True)],
        )
    else:
        tx.many(f"INSERT INTO dim_values ({cols}) VALUES (%s, %s, %s, %s, %s) {conflict}", values)  # noqa: S608


def row_of(  # noqa: PLR0917 - the record's stored columns, in order
    endpoint_id: str,
    record_id: str,
    time: str,
    component: str,
    action: str,
    codes: Iterable[str],
    record: str,
) -> Row:
    data = load_record(record)
    return Row(endpoint_id, record_id, time, component, action, tuple(codes), dimensions(data))


def load_record(text: str | bytes | memoryview) -> dict[str, Any]:
    """A stored record's JSON as a dict; ``{}`` for anything else (it then has no dimensions
    and cannot be re-decided, which is what it is counted as)."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _backfill(tx: Tx) -> None:
    """Fill the rollups, the index and the record columns from the records already held."""
    if tx.postgres:
        select = (
            "SELECT endpoint_id, id, to_char(time AT TIME ZONE 'UTC', "
            '\'YYYY-MM-DD"T"HH24:MI:SS.US"Z"\'), component, action, codes, record FROM records'
        )
    else:
        select = "SELECT endpoint_id, id, time, component, action, codes, record FROM records"
    batch: list[Row] = []
    for endpoint_id, rid, when, component, action, codes, record in tx.q(select):
        row = row_of(
            str(endpoint_id),
            str(rid),
            str(when),
            str(component),
            str(action),
            str(codes).split(),
            str(record),
        )
        batch.append(row)
        if len(batch) >= 1000:
            _flush_backfill(tx, batch)
            batch = []
    _flush_backfill(tx, batch)


def _flush_backfill(tx: Tx, rows: list[Row]) -> None:
    add_rows(tx, rows)
    tx.many(
        "UPDATE records SET developer = %s, repository = %s, agent = %s, destination = %s "
        "WHERE endpoint_id = %s AND id = %s",
        [
            (
                r.dims.developer,
                r.dims.repository,
                r.dims.agent,
                r.dims.destination,
                r.endpoint_id,
                r.id,
            )
            for r in rows
        ],
    )


def _tables(time_type: str) -> tuple[str, ...]:
    dims = " TEXT NOT NULL, ".join(FACT_KEY) + " TEXT NOT NULL"
    cdims = " TEXT NOT NULL, ".join(CODE_KEY) + " TEXT NOT NULL"
    return (
        *(f"ALTER TABLE records ADD COLUMN {d} TEXT NOT NULL DEFAULT ''" for d in DIMENSIONS),
        *(
            f"""CREATE TABLE {table} ({dims}, n BIGINT NOT NULL, bytes BIGINT NOT NULL,
            red_secret BIGINT NOT NULL, red_pii BIGINT NOT NULL, red_records BIGINT NOT NULL,
            PRIMARY KEY ({", ".join(FACT_KEY)}))"""
            for table in ("facts", "facts_day")
        ),
        *(
            f"""CREATE TABLE {table} ({cdims}, n BIGINT NOT NULL,
            PRIMARY KEY ({", ".join(CODE_KEY)}))"""
            for table in ("fact_codes", "fact_codes_day")
        ),
        """CREATE TABLE dim_values (endpoint_id TEXT NOT NULL, name TEXT NOT NULL,
            value TEXT NOT NULL, first_period TEXT NOT NULL, last_period TEXT NOT NULL,
            PRIMARY KEY (endpoint_id, name, value))""",
        f"""CREATE TABLE findings (fingerprint TEXT NOT NULL, endpoint_id TEXT NOT NULL,
            record_id TEXT NOT NULL, time {time_type} NOT NULL, code TEXT NOT NULL,
            place TEXT NOT NULL)""",
        "CREATE INDEX findings_fingerprint ON findings (fingerprint)",
        """CREATE TABLE admin_tokens (token_hash TEXT PRIMARY KEY, created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL)""",
        """CREATE TABLE web_sessions (session_hash TEXT PRIMARY KEY, created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL)""",
        """CREATE TABLE doctor (endpoint_id TEXT NOT NULL, host TEXT NOT NULL,
            reported_at TEXT NOT NULL, found INTEGER NOT NULL, installed INTEGER NOT NULL,
            fail_closed INTEGER NOT NULL, answering INTEGER NOT NULL, ok INTEGER NOT NULL,
            problems TEXT NOT NULL, PRIMARY KEY (endpoint_id, host))""",
    )


# The web report's migration, its own step (docs/fleet.md). SQLite already indexes records by
# time; on PostgreSQL a BRIN index on time lets the Decisions page read only the hours it shows.
MIGRATION_VERSION = 3
SQLITE: tuple[Any, ...] = (*_tables("TEXT"), _backfill)
POSTGRES: tuple[Any, ...] = (
    *_tables("TIMESTAMPTZ"),
    # BRIN: records arrive about in time order, so a summary per block range finds an hour's
    # records for almost nothing at each insert (a B-tree on time halved ingest).
    "CREATE INDEX records_time ON records USING brin (time) WITH (pages_per_range = 32)",
    _backfill,
)
