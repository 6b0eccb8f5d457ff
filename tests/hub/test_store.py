"""The hub's store on both backends: migrations, enrolment, chain checks on arrival, report."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from domestique.audit import DB_NAME, GENESIS_HASH, AuditStore, chain_hash
from domestique.hub._schema import MIGRATIONS
from domestique.hub.batch import Refusal, encode_batch, parse_batch
from domestique.hub.store import EndpointInfo, HubStore

from .support import write_log

INFO = EndpointInfo("box", "dev", "Linux", "0.1.0", "hmac-sha256:" + "a" * 32)


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[HubStore]:
    opened = HubStore.open(database_url, tmp_path / "hub-home")
    try:
        yield opened
    finally:
        opened.close()


def _enroll(store: HubStore) -> str:
    token = store.create_enroll_token(expires_s=60, uses=1)
    endpoint_id, credential = store.enroll(token, INFO)
    assert store.authenticate(credential) == endpoint_id
    return endpoint_id


def _rows(home: Path, after: int = 0) -> list[dict[str, object]]:
    with AuditStore.open(home) as log:
        return [
            {"seq": r.seq, "prev_hash": r.prev_hash, "hash": r.hash, "record": r.record}
            for r in log.rows(after_seq=after)
        ]


def _head(home: Path) -> tuple[int, str]:
    with AuditStore.open(home) as log:
        return log.head()


def _upload(
    store: HubStore, endpoint_id: str, rows: list[dict[str, object]], head: tuple[int, str]
) -> dict[str, object]:
    batch = parse_batch(encode_batch(endpoint_id, head, rows), "gzip")
    return store.ingest(endpoint_id, batch).to_json()


def _codes(store: HubStore) -> list[str]:
    return [a["code"] for a in store.alerts()]


def test_migrations_apply_once_and_are_recorded(store: HubStore) -> None:
    """A second migrate applies nothing; the schema table names the applied version."""
    assert store.migrate() == []
    with store.db.tx() as tx:
        applied = tx.q("SELECT version FROM hub_schema ORDER BY version")
    assert applied == [(v,) for v, _, _ in MIGRATIONS]
    assert applied[0] == (1,)
    assert applied == [(1,), (2,), (3,)]


def test_records_are_partitioned_by_month_on_postgres(tmp_path: Path, pg_url: str) -> None:
    """On PostgreSQL ``records`` is a partitioned table; a month's first record creates its
    partition, and the rows land in it."""
    store = HubStore.open(pg_url, tmp_path)
    try:
        endpoint_id = _enroll(store)
        home = tmp_path / "ep"
        write_log(home, 3)
        _upload(store, endpoint_id, _rows(home), _head(home))
        with store.db.tx() as tx:
            kind = tx.one("SELECT relkind FROM pg_class WHERE oid = 'records'::regclass")
            parts = tx.q(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                "WHERE i.inhparent = 'records'::regclass"
            )
            (in_part,) = tx.one(f"SELECT count(*) FROM {parts[0][0]}") or (0,)  # noqa: S608
        assert kind == ("p",)
        assert len(parts) == 1
        assert parts[0][0].startswith("records_y")
        assert in_part == 3
    finally:
        store.close()


def test_enrolment_tokens_expire_and_run_out(store: HubStore) -> None:
    """A token serves its number of uses, then is refused; an expired one is refused."""
    token = store.create_enroll_token(expires_s=60, uses=2)
    store.enroll(token, INFO)
    store.enroll(token, INFO)
    with pytest.raises(Refusal) as used:
        store.enroll(token, INFO)
    assert used.value.code == "hub.enroll.bad_token"
    expired = store.create_enroll_token(expires_s=-1, uses=5)
    with pytest.raises(Refusal):
        store.enroll(expired, INFO)
    with pytest.raises(Refusal):
        store.enroll("det_made-up", INFO)


def test_credentials_are_stored_hashed_and_revocation_refuses(store: HubStore) -> None:
    """The database holds no credential, a wrong one is refused, a revoked endpoint gets 401."""
    token = store.create_enroll_token(expires_s=60, uses=1)
    endpoint_id, credential = store.enroll(token, INFO)
    secret = credential.partition(".")[2]
    with store.db.tx() as tx:
        held = tx.q("SELECT credential_hash FROM endpoints")
    assert secret not in str(held)
    with pytest.raises(Refusal) as wrong:
        store.authenticate(endpoint_id + ".nope")
    assert wrong.value.code == "hub.auth.invalid"
    assert store.revoke(endpoint_id)
    with pytest.raises(Refusal) as revoked:
        store.authenticate(credential)
    assert (revoked.value.status, revoked.value.code) == (401, "hub.auth.revoked")


def test_a_clean_chain_is_stored_and_a_resend_is_idempotent(
    store: HubStore, tmp_path: Path
) -> None:
    """Records arrive, are acknowledged; the same batch again stores nothing twice."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 12)
    first = _upload(store, endpoint_id, _rows(home), _head(home))
    assert (first["stored"], first["acknowledged_seq"], first["alerts"]) == (12, 12, [])
    again = _upload(store, endpoint_id, _rows(home), _head(home))
    assert (again["stored"], again["duplicates"], again["alerts"]) == (0, 12, [])
    report = store.report()
    assert report["records"] == 12
    assert report["by_action"] == {"allow": 9, "deny": 3}
    assert report["by_code"] == {"cmd.pipe_to_shell": 3}
    assert report["endpoints"][0]["records"] == 12
    assert report["endpoints"][0]["integrity_alerts"] == 0


def test_a_gap_raises_an_alert_and_the_records_are_kept(store: HubStore, tmp_path: Path) -> None:
    """Records 4..6 never arrive: hub.integrity.gap; what did arrive is stored."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 10)
    rows = _rows(home)
    _upload(store, endpoint_id, rows[:3], _head(home))
    result = _upload(store, endpoint_id, rows[6:], _head(home))
    assert [a["code"] for a in result["alerts"]] == ["hub.integrity.gap"]
    assert result["stored"] == 4
    assert _codes(store) == ["hub.integrity.gap"]


def test_an_edited_record_raises_bad_hash(store: HubStore, tmp_path: Path) -> None:
    """A record whose content was edited after it was chained is an alert, not stored."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 5)
    rows = _rows(home)
    rows[0] = {**rows[0], "record": str(rows[0]["record"]).replace('"deny"', '"allow"')}
    result = _upload(store, endpoint_id, rows, _head(home))
    assert "hub.integrity.bad_hash" in [a["code"] for a in result["alerts"]]
    assert result["stored"] == 4


def test_a_rewritten_record_id_raises_rewrite(store: HubStore, tmp_path: Path) -> None:
    """The same record id again with other content (re-chained consistently) is a rewrite."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 3)
    rows = _rows(home)
    _upload(store, endpoint_id, rows, _head(home))
    edited = str(rows[2]["record"]).replace('"allow"', '"ask"')
    link = chain_hash(3, str(rows[2]["prev_hash"]), edited.encode())
    forged = [{**rows[2], "record": edited, "hash": link}]
    result = _upload(store, endpoint_id, forged, (3, link))
    # The rewritten record, and the endpoint's head that is no longer the hub's record 3.
    assert [a["code"] for a in result["alerts"]] == ["hub.integrity.rewrite", "hub.integrity.fork"]
    assert result["stored"] == 0


def test_a_replayed_record_raises_replay(store: HubStore, tmp_path: Path) -> None:
    """A record the hub holds, sent again further down the chain, is a replay."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 3)
    rows = _rows(home)
    _upload(store, endpoint_id, rows, _head(home))
    record = str(rows[0]["record"])
    link = chain_hash(4, str(rows[2]["hash"]), record.encode())
    replayed = [{"seq": 4, "prev_hash": rows[2]["hash"], "hash": link, "record": record}]
    result = _upload(store, endpoint_id, replayed, (4, link))
    assert result["alerts"][0]["code"] == "hub.integrity.replay"


def test_a_cut_log_that_carries_on_raises_a_fork_once(store: HubStore, tmp_path: Path) -> None:
    """The endpoint cuts its log after record 3 and keeps recording: the new records at seq
    4.. are stored with one hub.integrity.fork, and later records raise nothing more."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 6)
    _upload(store, endpoint_id, _rows(home), _head(home))
    conn = sqlite3.connect(home / DB_NAME)
    with conn:
        conn.execute("DROP TRIGGER records_no_delete")
        conn.execute("DELETE FROM records WHERE seq > 3")
    conn.close()
    write_log(home, 4, start=100)
    result = _upload(store, endpoint_id, _rows(home), _head(home))
    assert [a["code"] for a in result["alerts"]] == ["hub.integrity.fork"]
    assert (result["stored"], result["duplicates"]) == (4, 3)
    write_log(home, 2, start=200)
    later = _upload(store, endpoint_id, _rows(home, after=7), _head(home))
    assert later["alerts"] == []
    assert store.report()["records"] == 12


def test_a_head_behind_the_hub_raises_truncated(store: HubStore, tmp_path: Path) -> None:
    """The endpoint's log now ends at 2 while the hub holds 5: hub.integrity.truncated."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 5)
    rows = _rows(home)
    _upload(store, endpoint_id, rows, _head(home))
    result = _upload(store, endpoint_id, [], (2, str(rows[1]["hash"])))
    assert [a["code"] for a in result["alerts"]] == ["hub.integrity.truncated"]
    assert "old head put back" in str(result["alerts"])
    # The same claim again does not pile up alerts.
    _upload(store, endpoint_id, [], (2, str(rows[1]["hash"])))
    assert _codes(store) == ["hub.integrity.truncated"]


def test_a_batch_for_another_endpoint_is_refused(store: HubStore, tmp_path: Path) -> None:
    """Endpoint A cannot upload records claiming to be endpoint B's."""
    a, b = _enroll(store), _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 2)
    batch = parse_batch(encode_batch(b, _head(home), _rows(home)), "gzip")
    with pytest.raises(Refusal) as refused:
        store.ingest(a, batch)
    assert refused.value.code == "hub.batch.wrong_endpoint"
    assert store.report()["records"] == 0


def test_a_batch_is_stored_whole_or_not_at_all(
    store: HubStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the records were written (moving the endpoint's head) rolls the whole
    batch back: no record, no counter, the head where it was; the resend then stores all."""
    from domestique.hub import _db

    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 5)
    real_start = _db.Tx.start

    def failing_start(self: _db.Tx, sql: str, params: object = ()) -> object:
        if sql.startswith("UPDATE endpoints SET head_seq"):
            raise RuntimeError("disk full")
        return real_start(self, sql, params)  # type: ignore[arg-type]

    monkeypatch.setattr(_db.Tx, "start", failing_start)
    with pytest.raises(RuntimeError):
        _upload(store, endpoint_id, _rows(home), _head(home))
    monkeypatch.undo()
    assert store.record_ids(endpoint_id) == []
    report = store.report()
    assert report["records"] == 0
    assert report["endpoints"][0]["head_seq"] == 0
    result = _upload(store, endpoint_id, _rows(home), _head(home))
    assert (result["stored"], result["alerts"]) == (5, [])


def test_sql_looking_and_huge_strings_are_stored_verbatim(store: HubStore) -> None:
    """Field values are parameters, never SQL: a hostile string is stored as text."""
    hostile = "x'); DROP TABLE records; --"
    info = EndpointInfo(hostile, hostile, "Linux", "0.1.0", "fp")
    token = store.create_enroll_token(expires_s=60, uses=1)
    store.enroll(token, info)
    assert store.report()["endpoints"][0]["host"] == hostile
    huge = {"host": "h" * 10_000, "user": "u", "os": "o", "version": "v"}
    with pytest.raises(Refusal):
        EndpointInfo.from_json({**huge, "install_key_fingerprint": "f"})


def test_report_since_is_exact_inside_an_hour(store: HubStore, tmp_path: Path) -> None:
    """--since counts whole hours from the counters and the partial hour from the records."""
    endpoint_id = _enroll(store)
    home = tmp_path / "ep"
    write_log(home, 6)
    rows = _rows(home)
    _upload(store, endpoint_id, rows, _head(home))
    import json

    times = sorted(json.loads(str(r["record"]))["time"] for r in rows)
    assert store.report(since=times[3])["records"] == 3
    assert store.report(since="2000-01-01T00:00:00Z")["records"] == 6
    assert store.report(since="2099-01-01T00:00:00Z")["records"] == 0


def test_genesis_is_the_head_of_a_new_endpoint(store: HubStore) -> None:
    """A fresh endpoint's chain starts from the all-zero hash, like the local log."""
    _enroll(store)
    with store.db.tx() as tx:
        assert tx.one("SELECT head_seq, head_hash FROM endpoints") == (0, GENESIS_HASH)
