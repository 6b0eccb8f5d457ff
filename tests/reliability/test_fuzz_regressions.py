"""Every input the fuzzers found that broke an invariant, pinned as a test.

Each names the harness that found it (``fuzz/fuzz_<target>.py``) and the invariant it broke.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from domestique.audit import AuditStore, AuditStoreError, verify
from domestique.audit._store import DB_NAME
from domestique.proxy.fields import extract_fields
from domestique.records import Action, Component, DecisionRecord, PolicyRef, Subject


def make_record() -> DecisionRecord:
    return DecisionRecord(
        component=Component.GUARD,
        action=Action.ALLOW,
        reasons=(),
        subject=Subject(user="dev", host="box", agent="claude-code"),
        object={"command": "git status"},
        policy=PolicyRef("test", "0" * 64),
        engine={"domestique": "test"},
        latency_us=1,
    )


@pytest.mark.parametrize(
    "body",
    [{"type": []}, {"messages": [{"content": [{"type": {"a": 1}, "text": "x"}]}]}],
    ids=["top-level", "in-a-block"],
)
def test_a_non_string_type_is_walked_not_crashed_on(body: dict[str, Any]) -> None:
    """fuzz_fields: ``{"type": []}`` raised TypeError (unhashable) in the walker, so the
    firewall answered 500 ``engine.internal_error`` instead of scanning the body (it failed
    closed, but a valid JSON body must be judged). Fixed: only a string ``type`` names a block."""
    texts = [f.text for f in extract_fields(body).fields]
    assert ("x" in texts) == ("messages" in body)


def test_a_store_with_damaged_schema_bytes_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """fuzz_audit: a bit flipped in the schema text (a trigger's SQL) made SQLite's error message
    carry bytes that are not UTF-8, and ``audit verify`` died with UnicodeDecodeError (a
    traceback, exit 1 as if "tampered"). Now it is the documented exit 2, a clean message."""
    store = AuditStore.open(tmp_path)
    try:
        store.append(make_record())
    finally:
        store.close()
    db = tmp_path / DB_NAME
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    at = data.index(b"BEFORE UPDATE ON") + 2  # inside a trigger's CREATE statement
    data[at] ^= 0x80
    db.write_bytes(bytes(data))
    with pytest.raises(AuditStoreError, match=r"damaged|malformed|cannot read"):
        verify(tmp_path)
    env = dict(os.environ, DOMESTIQUE_HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "audit", "verify"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_record_whose_text_is_not_utf8_is_reported_edited(tmp_path: Path) -> None:
    """fuzz_audit (same finding): a record column rewritten with bytes that are not UTF-8 is
    tampering to report, not a decoding exception out of the verifier."""
    store = AuditStore.open(tmp_path)
    try:
        store.append(make_record())
        store.append(make_record())
    finally:
        store.close()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            conn.execute(f'DROP TRIGGER "{name}"')
        conn.execute("UPDATE records SET record = CAST(x'7bff22' AS TEXT) WHERE seq = 2")
    result = verify(tmp_path)
    assert not result.ok
    assert (result.kind, result.bad_seq) == ("edited", 2)


def test_a_record_whose_seq_is_no_longer_an_integer_is_reported_not_raised() -> None:
    """fuzz_audit (2026-12-01, `./dev fuzz 45`, its 130th input): one bit flipped at byte 3,801
    of the harness's 6-record store makes SQLite read a record's ``seq`` back as text (SQL cannot
    write that: "datatype mismatch"; damage to the file can); ``audit verify`` dies with
    TypeError (a traceback, exit 1 as if "tampered" by accident) instead of reporting
    the record. Fixed in ``audit/_verify.py``: a column read back as another type than the
    store writes is reported as a damaged record. Replayed through the harness, whose store layout
    is fixed (ids and times of one length), so its invariants (a result or AuditStoreError, never
    "intact" for a damaged store) judge the outcome.
    """
    from fuzz.fuzz_audit import check

    check(("flip", [3801], 0, 1))
