"""The hub's batch ingest: a bad upload is refused whole with its reason, a good one is stored
whole, and the chain checks name every break.

Each input runs against a copy of a real hub store (SQLite) that holds an enrolled endpoint's
first 4 records. The input is either an upload body as bytes (seed uploads with byte-level
edits, gzip or not), or the endpoint's next 6 records with edits an attacker or a broken
endpoint would make: a record dropped (a gap), its content edited with the hash kept (bad
hash) or recomputed (a fork), a held record sent again as it was (duplicate), with other content
(rewrite) or at another seq (replay), an id reused, a bad time, a head that lies, another
endpoint's id. The body goes through ``parse_batch`` and then ``HubStore.ingest``, as the hub's
upload route does.

Invariants:

* ``parse_batch`` returns a batch or raises ``Refusal`` with a registered ``hub.batch.*`` code
  and a 4xx status; ``ingest`` returns a result or raises ``Refusal`` with a registered code.
  Nothing else.
* A refused batch changes nothing: every table of the store is as before (never half-ingested).
* An accepted one: the records already held are unchanged; exactly ``stored`` new records, each
  a record of the batch whose hash recomputes from its seq, prev_hash and content; no record
  whose hash does not match is stored, and each raises ``hub.integrity.bad_hash``; a held id sent
  with other content raises ``hub.integrity.rewrite`` and the held copy stays; every item is
  accounted for (stored, duplicate, or an alert naming it); the endpoint's record count and the
  action counters grow by ``stored``; the endpoint's head is the result's ``head_seq``; every
  alert code is registered.
* The unedited next 6 records are stored with no alert and the head moves to seq 10.
"""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from domestique.audit import GENESIS_HASH, chain_hash
from domestique.hub.batch import Refusal, encode_batch, parse_batch
from domestique.hub.store import EndpointInfo, HubStore
from domestique.reason_codes import is_known
from domestique.records import (
    Action,
    Component,
    DecisionRecord,
    PolicyRef,
    Reason,
    Subject,
    to_canonical_json,
)

from ._harness import Target, mutated

ENDPOINT = "ep_fuzz"
HELD = 4  # records the hub already holds
FRESH = 6  # the endpoint's next records, which the input uploads (edited)
TABLES = ("records", "endpoints", "counts", "alerts")
# A case: ("raw", encoding, body) or ("chain", [op, ...]) with op = [name, index, value]
Case = tuple[str, Any, Any]
OPS = ("drop", "edit", "edit_fix", "held", "held_edit", "replay", "dup_id", "time", "head")


def _row(seq: int, prev: str, i: int) -> dict[str, Any]:
    record = DecisionRecord(
        component=Component.GUARD if i % 3 else Component.PROXY,
        action=Action.DENY if i % 2 else Action.ALLOW,
        reasons=(Reason("cmd.pipe_to_shell", "pipes a download into a shell"),) if i % 2 else (),
        subject=Subject(user="dev", host="box", agent="claude-code"),
        object={"command": f"git status {i}"},
        policy=PolicyRef("fuzz", "0" * 64),
        engine={"domestique": "fuzz"},
        latency_us=i,
        id=f"rec_fuzz_{i:04d}",
        time=f"2026-11-30T10:{i:02d}:00.000000Z",
    )
    canonical = to_canonical_json(record)
    return {
        "seq": seq,
        "prev_hash": prev,
        "hash": chain_hash(seq, prev, canonical),
        "record": canonical.decode(),
    }


@cache
def _chain() -> tuple[dict[str, Any], ...]:
    rows, prev = [], GENESIS_HASH
    for seq in range(1, HELD + FRESH + 1):
        row = _row(seq, prev, seq)
        rows.append(row)
        prev = row["hash"]
    return tuple(rows)


def _open(home: Path) -> HubStore:
    return HubStore.open(None, home, migrate_now=False)


@cache
def _template() -> Path:
    home = Path(tempfile.mkdtemp(prefix="dq-fuzz-hub-"))
    store = HubStore.open(None, home)
    try:
        token = store.create_enroll_token(expires_s=3600, uses=1)
        endpoint_id, _ = store.enroll(
            token, EndpointInfo("box", "dev", "Linux", "0.1.0", "hmac-sha256:" + "a" * 32)
        )
        with store.db.tx() as tx:  # a fixed id, so seed uploads name this endpoint
            tx.run("UPDATE endpoints SET id = %s WHERE id = %s", (ENDPOINT, endpoint_id))
        held = list(_chain()[:HELD])
        head = (held[-1]["seq"], held[-1]["hash"])
        result = store.ingest(ENDPOINT, parse_batch(encode_batch(ENDPOINT, head, held), "gzip"))
        assert result.stored == HELD, result
        assert not result.alerts, result
    finally:
        store.close()
    return home


def _db_file(home: Path) -> Path:
    (found,) = [p for p in home.rglob("*") if p.suffix in (".db", ".sqlite", ".sqlite3")]
    return found


def _snapshot(home: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(f"file:{_db_file(home)}?mode=ro", uri=True)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}"), key=repr) for t in TABLES}
    finally:
        conn.close()


def _columns(home: Path, table: str) -> list[str]:
    conn = sqlite3.connect(f"file:{_db_file(home)}?mode=ro", uri=True)
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()


def _edited(record: str, value: int) -> str:
    """The record's JSON with its command changed (same id, same shape)."""
    data = json.loads(record)
    data["object"]["command"] += chr(ord("a") + value % 26)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build(ops: list[list[Any]]) -> tuple[bytes, str]:
    """The upload body for the next records with ``ops`` applied."""
    chain = _chain()
    held = [dict(r) for r in chain[:HELD]]
    fresh = [dict(r) for r in chain[HELD:]]
    prefix: list[dict[str, Any]] = []
    endpoint = ENDPOINT
    head: tuple[int, str] | None = None
    for name, index, value in ops:
        if name == "drop" and fresh:
            del fresh[index % len(fresh)]
        elif name in ("edit", "edit_fix") and fresh:
            row = fresh[index % len(fresh)]
            row["record"] = _edited(row["record"], value)
            if name == "edit_fix":
                row["hash"] = chain_hash(row["seq"], row["prev_hash"], row["record"].encode())
        elif name == "held":
            prefix.append(held[index % HELD])
        elif name == "held_edit":
            row = dict(held[index % HELD])
            row["record"] = _edited(row["record"], value)
            if value % 2:
                row["hash"] = chain_hash(row["seq"], row["prev_hash"], row["record"].encode())
            prefix.append(row)
        elif name == "replay" and fresh:  # a held record's content again, at a fresh seq
            row = fresh[index % len(fresh)]
            row["record"] = held[value % HELD]["record"]
            row["hash"] = chain_hash(row["seq"], row["prev_hash"], row["record"].encode())
        elif name == "dup_id" and len(fresh) > 1:
            row = fresh[index % len(fresh)]
            other = json.loads(fresh[(index + 1) % len(fresh)]["record"])["id"]
            data = json.loads(row["record"])
            data["id"] = other
            row["record"] = json.dumps(data, sort_keys=True, separators=(",", ":"))
            row["hash"] = chain_hash(row["seq"], row["prev_hash"], row["record"].encode())
        elif name == "time" and fresh:
            row = fresh[index % len(fresh)]
            data = json.loads(row["record"])
            data["time"] = str(value)
            row["record"] = json.dumps(data, sort_keys=True, separators=(",", ":"))
            row["hash"] = chain_hash(row["seq"], row["prev_hash"], row["record"].encode())
        elif name == "head":
            last = (fresh or held)[-1]
            seq = max(0, last["seq"] + value % 7 - 3)
            head = (seq, last["hash"] if value % 2 else chain_hash(seq, "x", b""))
        elif name == "endpoint":
            endpoint = f"ep_other{value % 10}"
    # held rows first (lower seqs), each once, so the batch stays in increasing seq order
    seen: dict[int, dict[str, Any]] = {}
    for row in prefix:
        seen.setdefault(row["seq"], row)
    rows = [seen[s] for s in sorted(seen)] + fresh
    if head is None:
        last = rows[-1] if rows else held[-1]
        head = (last["seq"], last["hash"])
    return encode_batch(endpoint, head, rows), "gzip"


def _strategy(corpus: list[bytes]) -> st.SearchStrategy[Case]:
    bodies = [base64.b64decode(c[2]) for c in map(json.loads, corpus) if c[0] == "raw"]
    op = st.one_of(
        st.tuples(st.sampled_from((*OPS, "endpoint")), st.integers(0, 20), st.integers(0, 999)),
        st.tuples(st.just("time"), st.integers(0, 20), st.text(max_size=30)),
    ).map(list)
    return st.one_of(
        st.tuples(st.just("chain"), st.lists(op, max_size=5), st.just(None)),
        st.tuples(
            st.just("raw"),
            st.sampled_from(("gzip", "identity", "", "br")),
            mutated(bodies) if bodies else st.binary(),
        ),
    )


def _count(rows: list[tuple[Any, ...]], home: Path, table: str, column: str) -> int:
    at = _columns(home, table).index(column)
    return sum(int(r[at]) for r in rows)


def check(case: Case) -> None:
    kind, a, b = case
    if kind == "raw":
        body, encoding = b, a
    else:
        body, encoding = build(a)
    home = Path(tempfile.mkdtemp(prefix="dq-fuzz-hub-case-"))
    try:
        shutil.copytree(_template(), home, dirs_exist_ok=True)
        before = _snapshot(home)
        try:
            batch = parse_batch(body, encoding)
        except Refusal as refusal:
            assert refusal.code.startswith("hub.batch."), refusal.code
            assert is_known(refusal.code), refusal.code
            assert 400 <= refusal.status < 500, refusal.status
            return
        store = _open(home)
        try:
            try:
                result = store.ingest(ENDPOINT, batch)
            except Refusal as refusal:
                assert is_known(refusal.code), refusal.code
                assert _snapshot(home) == before, f"refused ({refusal.code}) but changed the store"
                return
        finally:
            store.close()
        _check_accepted(home, before, batch, result, case)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _check_accepted(
    home: Path, before: dict[str, list[tuple[Any, ...]]], batch: Any, result: Any, case: Case
) -> None:
    after = _snapshot(home)
    cols = _columns(home, "records")
    seq_at, id_at, prev_at, hash_at, rec_at = (
        cols.index(c) for c in ("seq", "id", "prev_hash", "hash", "record")
    )
    old, new = set(before["records"]), set(after["records"])
    assert old <= new, "a record the hub held was changed or removed"
    added = new - old
    assert len(added) == result.stored, (len(added), result.stored)
    items = {(i.seq, i.id, i.prev_hash, i.hash, i.record): i for i in batch.items}
    for row in added:
        key = (row[seq_at], row[id_at], row[prev_at], row[hash_at], row[rec_at])
        assert key in items, "a stored record is not one of the batch"
        assert chain_hash(key[0], key[2], key[4].encode("utf-8", "surrogatepass")) == key[3]
    alerts = list(result.alerts)
    for alert in alerts:
        assert is_known(alert["code"]), alert["code"]
    named = {(a["code"], a["record_id"]) for a in alerts}
    held_ids = {r[id_at]: r for r in before["records"]}
    stored_ids = {r[id_at] for r in added}
    for item in batch.items:
        if not item.hash_ok and item.id not in held_ids and item.id not in stored_ids:
            assert ("hub.integrity.bad_hash", item.id) in named, "bad hash without an alert"
        if item.id in held_ids and held_ids[item.id][rec_at] != item.record:
            assert ("hub.integrity.rewrite", item.id) in named, "a rewrite without an alert"
    # every item is accounted for: stored, a duplicate, or an alert naming it
    per_item = sum(
        1
        for a in alerts
        if a["code"] in ("hub.integrity.bad_hash", "hub.integrity.rewrite", "hub.integrity.replay")
    )
    assert result.stored + result.duplicates + per_item == len(batch.items), (
        result.stored,
        result.duplicates,
        per_item,
        len(batch.items),
    )
    grew = _count(after["endpoints"], home, "endpoints", "records") - _count(
        before["endpoints"], home, "endpoints", "records"
    )
    assert grew == result.stored
    kind_at = _columns(home, "counts").index("kind")
    actions = [r for r in after["counts"] if r[kind_at] == "a"]
    actions_before = [r for r in before["counts"] if r[kind_at] == "a"]
    assert _count(actions, home, "counts", "n") - _count(actions_before, home, "counts", "n") == (
        result.stored
    )
    (endpoint,) = after["endpoints"]
    assert endpoint[_columns(home, "endpoints").index("head_seq")] == result.head_seq
    if case[0] == "chain" and not case[1]:  # the unedited next records
        assert not alerts, alerts
        assert result.stored == FRESH, result
        assert result.head_seq == HELD + FRESH, result


def _to_bytes(case: Case) -> bytes:
    kind, a, b = case
    if kind == "raw":
        return json.dumps(["raw", a, base64.b64encode(b).decode()]).encode()
    return json.dumps(["chain", a, None]).encode()


def _from_bytes(raw: bytes) -> Case:
    kind, a, b = json.loads(raw)
    return (kind, a, base64.b64decode(b)) if kind == "raw" else (kind, a, None)


TARGET = Target("hub_ingest", _strategy, check, from_bytes=_from_bytes, to_bytes=_to_bytes)
