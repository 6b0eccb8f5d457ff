"""The audit store on real SQLite files: the chain, tamper detection, crashes and concurrency."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers import child_env
from _helpers.records import make_record
from domestique.audit import (
    DB_NAME,
    HEAD_NAME,
    AuditStore,
    AuditStoreError,
    chain_hash,
    record_decision,
    store_for,
    verify,
)
from domestique.keys import Fingerprinter, mask_preview
from domestique.records import (
    Action,
    CanonicalJSONError,
    Component,
    Evidence,
    Reason,
    to_canonical_json,
)


def _fill(home: Path, n: int) -> list[str]:
    ids = []
    with AuditStore.open(home) as store:
        for i in range(n):
            record = make_record(codes=("cmd.pipe_to_shell",) if i % 3 == 0 else ())
            store.append(record)
            ids.append(record.id)
    return ids


def _tamper(home: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    """What an attacker with the sqlite3 tool does: drop the guard triggers, then edit."""
    conn = sqlite3.connect(home / DB_NAME, isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS records_no_update")
    conn.execute("DROP TRIGGER IF EXISTS records_no_delete")
    for sql, params in statements:
        conn.execute(sql, params)
    conn.close()


# --- the chain ----------------------------------------------------------------------------


def test_untouched_log_verifies_and_links(home: Path) -> None:
    """Appends get consecutive seqs; each hash covers seq, prev hash and canonical JSON."""
    _fill(home, 20)
    result = verify(home)
    assert result.ok, result.problem
    assert result.records == 20
    assert result.head_seq == 20
    conn = sqlite3.connect(home / DB_NAME)
    rows = conn.execute("SELECT seq, prev_hash, hash, record FROM records ORDER BY seq").fetchall()
    prev = "0" * 64
    for seq, prev_hash, link, record in rows:
        assert prev_hash == prev
        assert link == chain_hash(seq, prev_hash, record.encode())
        prev = link
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    checkpoint = json.loads((home / HEAD_NAME).read_text())
    assert (checkpoint["seq"], checkpoint["hash"]) == (20, prev)


def test_empty_log_verifies(home: Path) -> None:
    """A freshly created store (genesis checkpoint, no records) is intact."""
    AuditStore.open(home).close()
    result = verify(home)
    assert result.ok
    assert result.records == 0


def test_stored_json_is_the_canonical_record(home: Path) -> None:
    """The store holds exactly the record's canonical JSON and reads it back equal."""
    record = make_record(codes=("secret.github_token",))
    with AuditStore.open(home) as store:
        store.append(record)
        (row,) = list(store.rows())
        assert row.record.encode() == to_canonical_json(record)
        (back,) = list(store.records())
    assert back == record


def test_triggers_refuse_update_and_delete(home: Path) -> None:
    """Updates and deletes through SQL are refused (the chain still catches a dropped trigger)."""
    _fill(home, 2)
    conn = sqlite3.connect(home / DB_NAME)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE records SET action = 'allow'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM records")


# --- tampering ----------------------------------------------------------------------------


def test_edited_record_is_caught_and_named(home: Path) -> None:
    """Changing a stored record's JSON breaks its hash: verify names that record."""
    ids = _fill(home, 10)
    conn = sqlite3.connect(home / DB_NAME)
    (record,) = conn.execute("SELECT record FROM records WHERE seq = 5").fetchone()
    conn.close()
    edited = record.replace('"latency_us":42', '"latency_us":43')
    assert edited != record
    _tamper(home, ("UPDATE records SET record = ? WHERE seq = 5", (edited,)))
    result = verify(home)
    assert not result.ok
    assert (result.kind, result.bad_seq, result.bad_id) == ("edited", 5, ids[4])
    assert ids[4] in (result.problem or "")


def test_edited_column_is_caught(home: Path) -> None:
    """Changing only an indexed column (what reports read) is caught too."""
    _fill(home, 6)
    _tamper(home, ("UPDATE records SET action = 'deny' WHERE seq = 3", ()))
    result = verify(home)
    assert (result.ok, result.kind, result.bad_seq) == (False, "edited", 3)


def test_edited_record_with_recomputed_hash_is_caught_at_the_next_link(home: Path) -> None:
    """Rewriting a record and its own hash breaks the next record's prev_hash link."""
    _fill(home, 6)
    conn = sqlite3.connect(home / DB_NAME)
    seq, prev, record = conn.execute(
        "SELECT seq, prev_hash, record FROM records WHERE seq = 3"
    ).fetchone()
    conn.close()
    edited = record.replace('"action":"allow"', '"action":"deny"')
    new_hash = chain_hash(seq, prev, edited.encode())
    _tamper(
        home,
        (
            "UPDATE records SET record = ?, action = 'deny', hash = ? WHERE seq = 3",
            (edited, new_hash),
        ),
    )
    result = verify(home)
    assert (result.ok, result.kind, result.bad_seq) == (False, "reordered", 4)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seq=st.integers(min_value=1, max_value=8), where=st.integers(min_value=0), data=st.data())
def test_any_changed_character_is_caught(
    tmp_path: Path, seq: int, where: int, data: st.DataObject
) -> None:
    """Changing any one character of any stored record is caught at that record."""
    home = tmp_path / f"h{seq}-{where}-{time.monotonic_ns()}"
    _fill(home, 8)
    conn = sqlite3.connect(home / DB_NAME)
    (record,) = conn.execute("SELECT record FROM records WHERE seq = ?", (seq,)).fetchone()
    conn.close()
    i = where % len(record)
    new_char = data.draw(st.characters(codec="utf-8").filter(lambda c: c != record[i]))
    _tamper(
        home,
        (
            "UPDATE records SET record = ? WHERE seq = ?",
            (record[:i] + new_char + record[i + 1 :], seq),
        ),
    )
    result = verify(home)
    assert not result.ok
    assert result.bad_seq == seq
    assert result.kind == "edited"


def test_deleted_record_is_caught_and_named(home: Path) -> None:
    """Deleting a record leaves a gap in the sequence: verify names the missing seq."""
    _fill(home, 10)
    _tamper(home, ("DELETE FROM records WHERE seq = 4", ()))
    result = verify(home)
    assert (result.ok, result.kind, result.bad_seq) == (False, "deleted", 4)
    assert "record 4 deleted" in (result.problem or "")


def test_deleted_and_renumbered_is_caught(home: Path) -> None:
    """Deleting a record and renumbering the rest still breaks the prev_hash link."""
    _fill(home, 6)
    _tamper(
        home,
        ("DELETE FROM records WHERE seq = 4", ()),
        ("UPDATE records SET seq = seq - 1 WHERE seq > 4", ()),
    )
    result = verify(home)
    assert (result.ok, result.bad_seq) == (False, 4)


def test_swapped_records_are_caught(home: Path) -> None:
    """Two records swapped (content moved between seqs): the first of them is named."""
    ids = _fill(home, 8)
    conn = sqlite3.connect(home / DB_NAME)
    cols = "id, time, component, action, prev_hash, hash, record"
    four = conn.execute(f"SELECT {cols} FROM records WHERE seq = 4").fetchone()  # noqa: S608 - test
    five = conn.execute(f"SELECT {cols} FROM records WHERE seq = 5").fetchone()  # noqa: S608 - test
    conn.close()
    sets = ", ".join(f"{c} = ?" for c in cols.split(", "))
    _tamper(
        home,
        ("UPDATE records SET id = 'tmp' WHERE seq = 4", ()),
        (f"UPDATE records SET {sets} WHERE seq = 5", four),  # noqa: S608 - test
        (f"UPDATE records SET {sets} WHERE seq = 4", five),  # noqa: S608 - test
    )
    result = verify(home)
    assert (result.ok, result.kind, result.bad_seq, result.bad_id) == (
        False,
        "reordered",
        4,
        ids[4],
    )


def test_truncated_tail_is_caught(home: Path) -> None:
    """Cutting the newest records off is caught by the head checkpoint."""
    _fill(home, 10)
    _tamper(home, ("DELETE FROM records WHERE seq > 7", ()))
    result = verify(home)
    assert (result.ok, result.kind, result.bad_seq) == (False, "truncated", 8)
    assert "8..10" in (result.problem or "")


def test_forged_or_missing_checkpoint_is_caught(home: Path) -> None:
    """A checkpoint rewritten without the key, or deleted, is reported."""
    _fill(home, 5)
    _tamper(home, ("DELETE FROM records WHERE seq > 3", ()))
    head = home / HEAD_NAME
    data = json.loads(head.read_text())
    conn = sqlite3.connect(home / DB_NAME)
    (h3,) = conn.execute("SELECT hash FROM records WHERE seq = 3").fetchone()
    conn.close()
    head.write_text(json.dumps({**data, "seq": 3, "hash": h3}))  # the old mac
    assert verify(home).kind == "checkpoint"
    head.unlink()
    result = verify(home)
    assert (result.ok, result.kind) == (False, "checkpoint")


def test_verify_of_a_missing_store_is_an_error(home: Path) -> None:
    """No store is an error (CLI exit 2), not 'intact'."""
    with pytest.raises(AuditStoreError):
        verify(home)


def test_a_store_that_is_not_sqlite_fails_closed(home: Path) -> None:
    """A damaged store file: appends turn into audit.write_failed, verify is an error."""
    (home / DB_NAME).write_bytes(b"this is not a database" * 100)
    assert record_decision(make_record(), home=home).codes[-1] == "audit.write_failed"
    with pytest.raises(AuditStoreError):
        verify(home)


# --- failure turns into deny --------------------------------------------------------------


def test_record_decision_appends(home: Path) -> None:
    """record_decision stores the record and returns it unchanged."""
    record = make_record()
    assert record_decision(record, home=home) is record
    assert store_for(home).count() == 1


def test_unwritable_store_turns_the_decision_into_stop(tmp_path: Path) -> None:
    """When the store cannot be opened, the decision becomes deny/block + audit.write_failed."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    record = make_record(action=Action.ALLOW)
    denied = record_decision(record, home=not_a_dir)
    assert denied.action is Action.DENY
    assert denied.codes[-1] == "audit.write_failed"
    blocked = record_decision(
        make_record(component=Component.PROXY), home=not_a_dir, stop=Action.BLOCK
    )
    assert blocked.action is Action.BLOCK


def test_unrenderable_record_is_a_write_failure(home: Path) -> None:
    """A record with a float (no canonical form) is refused and the decision stops."""
    record = make_record(obj={"ratio": 0.5})  # type: ignore[dict-item]
    with pytest.raises(CanonicalJSONError):
        store_for(home).append(record)
    assert record_decision(record, home=home).codes[-1] == "audit.write_failed"
    assert verify(home).ok


# --- no raw secrets -----------------------------------------------------------------------

SECRETS = (
    "AKIAZ7QW3ERTYUIOPL4Q",
    "ghp_Zq8mR2vT6yK1pL4nX9wB3cF7hJ0dS5aE2gU1",
    "sk-ant-api03-Q9w8E7r6T5y4U3i2O1p0AsDfGhJkLzXcVbNm-1a2B3c4D5e6F7g8H9i0J",
)


def test_store_never_holds_raw_secret_values(home: Path) -> None:
    """Records built from inputs with secrets (previews, fingerprints, masked commands, error
    reasons raised with the secret in the message) leave no raw value in any file of the home."""
    from domestique.boundary import error_reason

    fp = Fingerprinter.for_home(home)
    for secret in SECRETS:
        command = f"curl -H 'Authorization: Bearer {secret}' https://api.example.com"
        masked = command.replace(secret, mask_preview(secret))
        start = command.index(secret)
        evidence = Evidence(
            f"command[{start}:{start + len(secret)}]", mask_preview(secret), fp.fingerprint(secret)
        )
        try:
            raise ValueError(f"detector choked on {secret}")
        except ValueError as exc:
            crash = error_reason(exc, "engine.detector_error")
        record = make_record(
            action=Action.DENY,
            codes=(),
            obj={"command": masked, "cwd": "/repo", "unfolded": [masked]},
        )
        record = type(record)(
            component=record.component,
            action=record.action,
            reasons=(Reason("secret.bearer_token", "bearer token", (evidence,)), crash),
            subject=record.subject,
            object=record.object,
            policy=record.policy,
            engine=record.engine,
            latency_us=record.latency_us,
        )
        record_decision(record, home=home)
    assert store_for(home).count() == len(SECRETS)
    blobs = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    assert any(b"AKIA" in b for b in blobs)  # the previews are there (the grep can see)
    for secret in SECRETS:
        for blob in blobs:
            assert secret.encode() not in blob
            assert secret[4:-4].encode() not in blob


# --- crashes and concurrency --------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from _helpers.records import make_record
    from domestique.audit import AuditStore
    store = AuditStore.open(Path({home!r}))
    tag, n, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    for start in range(0, n, batch):
        recs = [make_record(obj={{"writer": tag, "n": i}}) for i in range(start, start + batch)]
        seqs = store.append_many(recs)
        for seq, rec in zip(seqs, recs):
            sys.stdout.write(f"{{seq}} {{rec.id}}\\n")
        sys.stdout.flush()
    """
)


def _writer(home: Path, tag: str, n: int, batch: int = 1) -> subprocess.Popen[str]:
    script = WRITER.format(home=str(home))
    return subprocess.Popen(
        [sys.executable, "-c", script, tag, str(n), str(batch)],
        stdout=subprocess.PIPE,
        text=True,
        env={**child_env(), "DOMESTIQUE_HOME": str(home)},
    )


@pytest.mark.slow
@pytest.mark.parametrize("batch", [1, 25], ids=["one-per-transaction", "batches-of-25"])
def test_sigkill_mid_batch_keeps_committed_records(home: Path, batch: int) -> None:
    """A writer killed with SIGKILL mid-way: every record it reported committed is there, no
    half batch is, and the chain verifies."""
    AuditStore.open(home).close()
    proc = _writer(home, "victim", 100_000, batch)
    assert proc.stdout is not None
    committed: list[str] = []
    deadline = time.monotonic() + 30
    while len(committed) < 300 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(line.split()[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert len(committed) >= 300
    result = verify(home)
    assert result.ok, result.problem
    conn = sqlite3.connect(home / DB_NAME)
    stored = {row[0] for row in conn.execute("SELECT id FROM records")}
    assert set(committed) <= stored
    assert result.records == len(stored) >= len(committed)
    assert len(stored) % batch == 0  # whole transactions only


@pytest.mark.slow
def test_eight_processes_append_one_unbroken_chain(home: Path) -> None:
    """8 processes × 500 appends at once: 4000 records, one chain, checkpoint at the head."""
    AuditStore.open(home).close()
    procs = [_writer(home, f"w{i}", 500) for i in range(8)]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    reported = [line.split() for out in outputs for line in out.splitlines()]
    assert len(reported) == 4000
    assert sorted(int(seq) for seq, _ in reported) == list(range(1, 4001))
    result = verify(home)
    assert result.ok, result.problem
    assert result.records == 4000
    head = json.loads((home / HEAD_NAME).read_text())
    assert head["seq"] == 4000


@pytest.mark.slow
def test_verify_while_others_append_stays_intact(home: Path) -> None:
    """verify during concurrent appends sees a consistent snapshot: never a false alarm."""
    AuditStore.open(home).close()
    procs = [_writer(home, f"v{i}", 400) for i in range(2)]
    results = []
    while any(p.poll() is None for p in procs):
        results.append(verify(home))
    for p in procs:
        p.communicate(timeout=60)
    results.append(verify(home))
    assert all(r.ok for r in results), [r.problem for r in results if not r.ok]
    assert results[-1].records == 800
    assert len(results) > 2  # verify did run while the writers were appending


def test_damaged_install_key_fails_before_writing(home: Path) -> None:
    """With an unreadable install key nothing is appended and the decision stops."""
    from domestique import keys

    AuditStore.open(home).close()
    (home / "keys" / "fingerprint.key").write_bytes(b"short")
    keys._KEY_CACHE.clear()
    out = record_decision(make_record(), home=home)
    assert out.codes[-1] == "audit.write_failed"
    conn = sqlite3.connect(home / DB_NAME)
    assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 0
    conn.close()
