"""The audit verifier on a corrupted store: never "intact" when a record changed, never a crash.

A real store of a few records is copied for each input and damaged: byte flips and truncation
anywhere in the SQLite file, or an edit of one column of one record done the way an attacker
would (triggers dropped, the row rewritten with SQL). Invariants: ``verify`` returns a result
or raises ``AuditStoreError`` (the CLI's exit 2), nothing else; when it says ``ok``, every
record reads back exactly as written; an edited record is never ``ok``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import strategies as st

from domestique.audit import AuditStore
from domestique.audit._store import DB_NAME, AuditStoreError
from domestique.audit._verify import verify
from domestique.records import Action, Component, DecisionRecord, PolicyRef, Reason, Subject

from ._harness import Target

COLUMNS = ("id", "time", "component", "action", "prev_hash", "hash", "record")
# (kind, offsets or row, column, byte value)
Case = tuple[str, list[int], int, int]


@cache
def _template() -> tuple[Path, list[tuple[object, ...]]]:
    home = Path(tempfile.mkdtemp(prefix="dq-fuzz-audit-"))
    store = AuditStore.open(home)
    try:
        for i in range(6):
            store.append(
                DecisionRecord(
                    component=Component.GUARD,
                    action=Action.DENY if i % 2 else Action.ALLOW,
                    reasons=(Reason("guard.test", f"reason {i}"),) if i % 2 else (),
                    subject=Subject(user="dev", host="box", agent="claude-code"),
                    object={"command": f"git status {i}"},
                    policy=PolicyRef("fuzz", "0" * 64),
                    engine={"domestique": "fuzz"},
                    latency_us=i,
                )
            )
    finally:
        store.close()
    with sqlite3.connect(home / DB_NAME) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return home, _rows(home)


def _rows(home: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{home / DB_NAME}?mode=ro", uri=True)
    try:
        return list(conn.execute(f"SELECT seq, {', '.join(COLUMNS)} FROM records ORDER BY seq"))
    finally:
        conn.close()


def _cases(corpus: list[bytes]) -> st.SearchStrategy[Case]:
    return st.one_of(
        st.tuples(
            st.just("flip"),
            st.lists(st.integers(0, 1 << 16), min_size=1, max_size=4),
            st.just(0),
            st.integers(1, 255),
        ),
        st.tuples(
            st.just("truncate"),
            st.lists(st.integers(0, 1 << 16), min_size=1, max_size=1),
            st.just(0),
            st.just(0),
        ),
        st.tuples(
            st.just("edit"),
            st.lists(st.integers(1, 6), min_size=1, max_size=1),
            st.integers(0, len(COLUMNS) - 1),
            st.integers(0, 1 << 16),
        ),
    )


def check(case: Case) -> None:
    kind, where, column, value = case
    template, original = _template()
    home = Path(tempfile.mkdtemp(prefix="dq-fuzz-audit-case-"))
    try:
        shutil.copytree(template, home, dirs_exist_ok=True)
        db = home / DB_NAME
        changed = True
        if kind == "flip":
            data = bytearray(db.read_bytes())
            for at in where:
                data[at % len(data)] ^= value
            db.write_bytes(bytes(data))
        elif kind == "truncate":
            data = db.read_bytes()
            db.write_bytes(data[: where[0] % len(data)])
        else:
            changed = _edit(db, where[0], COLUMNS[column], value)
        try:
            result = verify(home)
        except AuditStoreError:
            return
        if not result.ok:
            return
        if kind == "edit":
            assert not changed, f"an edited {COLUMNS[column]} verified as intact"
        try:
            rows = _rows(home)
        except sqlite3.Error as exc:
            raise AssertionError(
                f"verify said intact, but the store does not read: {exc}"
            ) from None
        assert rows == original, "verify said intact, but the records differ"
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _edit(db: Path, seq: int, column: str, value: int) -> bool:
    """Rewrite one column of one row as an attacker would; False if nothing changed."""
    conn = sqlite3.connect(db)
    try:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')
        (old,) = conn.execute(f"SELECT {column} FROM records WHERE seq = ?", (seq,)).fetchone()
        text = str(old)
        at = value % max(len(text), 1)
        new = text[:at] + chr(ord(text[at]) ^ 1) + text[at + 1 :] if text else "x"
        if column == "id" and new in {r[0] for r in conn.execute("SELECT id FROM records")}:
            return False
        conn.execute(f"UPDATE records SET {column} = ? WHERE seq = ?", (new, seq))
        conn.commit()
        return new != text
    finally:
        conn.close()


def _from_bytes(raw: bytes) -> Case:
    kind, where, column, value = json.loads(raw)
    return kind, where, column, value


TARGET = Target(
    "audit", _cases, check, from_bytes=_from_bytes, to_bytes=lambda c: json.dumps(c).encode()
)
