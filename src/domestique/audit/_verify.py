"""Verifying the audit log: the hash chain, the indexed columns, and the head checkpoint.

What is detected (``verify`` returns the first problem, naming the record):

- an **edited** record (content, or the columns reports read, changed): its hash no longer
  matches, or its columns disagree with its JSON;
- a **deleted** record: the sequence has a gap, or (when the rows after it were renumbered) the
  next record's ``prev_hash`` no longer links to its predecessor;
- **reordered/swapped** records: a record's ``prev_hash`` is not its predecessor's hash;
- a **truncated tail**: the log ends before the sequence number in the head checkpoint, or the
  record at the checkpoint's sequence number does not have the checkpoint's hash;
- a **forged or damaged checkpoint**: its HMAC under the install-derived key does not match.

What is *not* detectable from this machine alone: someone who can read the install key (the same
user account, or root) can rewrite the whole chain and a matching checkpoint; and the newest
records after the last checkpoint write can be cut off without trace (normally none: the
checkpoint is advanced after every commit, but a writer killed between its commit and the
checkpoint write leaves that one record unprotected); and an old checkpoint saved earlier can
be put back after the records written since are cut off (its HMAC is genuine). A missing or
damaged checkpoint, by contrast, stays reported: appends never re-create it under a non-empty
log. Anchoring the head hash elsewhere
(export to a SIEM, ``audit verify --json`` in a remote job) is what makes a full rewrite
detectable; an endpoint enrolled with a fleet hub does this at every sync (the hub holds the
records and checks the chain and head: ``domestique.hub.store``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from domestique.audit._store import (
    DB_NAME,
    GENESIS_HASH,
    HEAD_NAME,
    AuditStore,
    AuditStoreError,
    Checkpoint,
    chain_hash,
    checkpoint_key,
    checkpoint_mac,
    read_checkpoint,
)
from domestique.keys import domestique_home


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """The outcome of :func:`verify`. ``ok`` False names the first bad record."""

    ok: bool
    records: int  # how many records were checked
    head_seq: int
    head_hash: str
    problem: str | None = None
    kind: str | None = None  # edited | deleted | reordered | truncated | checkpoint | spool
    bad_seq: int | None = None
    bad_id: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "records": self.records,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "problem": self.problem,
            "kind": self.kind,
            "bad_seq": self.bad_seq,
            "bad_id": self.bad_id,
        }


def _columns_match(
    record: str, rid: str, time: str, component: str, action: str
) -> tuple[bool, str]:
    try:
        data = json.loads(record)
    except ValueError:
        return False, "its JSON does not parse"
    if not isinstance(data, dict):
        return False, "its JSON is not an object"
    for name, column in (("id", rid), ("time", time), ("component", component)):
        if data.get(name) != column:
            return False, f"its {name} column differs from its JSON"
    if data.get("action") != action:
        return False, "its action column differs from its JSON"
    return True, ""


def verify(home: Path | None = None) -> VerifyResult:
    """Check the whole chain and the head checkpoint. Raises :class:`AuditStoreError` when the
    store cannot be read at all (the CLI's exit 2); tampering is a result, not an exception."""
    home = home if home is not None else domestique_home()
    path = home / DB_NAME
    # The hooks' spooled records are chained first (opening the store does it), so the chain
    # verified is every decision's; what could not be chained is reported below.
    # Best effort: a store that cannot be opened (damaged, unreadable) is reported by the
    # verification below, with its own message and exit code.
    with contextlib.suppress(Exception):
        AuditStore.open(home, create=False).close()
    if not path.exists():
        raise AuditStoreError(f"no audit store at {path}")
    try:
        # Read-only: verify never changes the log (mode=ro still reads the WAL).
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    except sqlite3.Error as exc:
        raise AuditStoreError(f"cannot open audit store {path}: {exc}") from None
    # A byte of a text column damaged into invalid UTF-8 is tampering to report (its hash or
    # columns then fail to match), not a decoding exception out of the verifier.
    conn.text_factory = _text_or_bytes
    try:
        # The checkpoint first, then the snapshot: appends commit before they advance the
        # checkpoint, so a snapshot taken after reading it always reaches its sequence number.
        ckpt = _read_checkpoint(home)
        return _spool_checked(_verify(conn, home, ckpt), home)
    except sqlite3.Error as exc:
        raise AuditStoreError(f"cannot read audit store {path}: {exc}") from None
    except UnicodeDecodeError:
        # SQLite's own error message quotes damaged schema bytes, which Python cannot decode.
        raise AuditStoreError(f"cannot read audit store {path}: the file is damaged") from None
    finally:
        conn.close()


def _spool_checked(result: VerifyResult, home: Path) -> VerifyResult:
    """``result``, or (a sound chain with spooled records that were not chained: unreadable,
    or the store could not take them) a failure of kind ``spool`` naming them."""
    from domestique.audit.spool import spool_problems

    problems = spool_problems(home)
    if not result.ok or not problems:
        return result
    return dataclasses.replace(result, ok=False, problem="; ".join(problems), kind="spool")


def _text_or_bytes(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _read_checkpoint(home: Path) -> Checkpoint | str:
    """The checkpoint, or a message saying what is wrong with it."""
    ckpt_path = home / HEAD_NAME
    try:
        ckpt = read_checkpoint(ckpt_path)
    except (OSError, ValueError):
        return f"head checkpoint {ckpt_path} is damaged"
    if ckpt is None:
        return f"head checkpoint {ckpt_path} is missing (it is written when the log is created)"
    return ckpt


_COLUMNS = ("seq", "id", "time", "component", "action", "prev_hash", "hash", "record")


def _damaged_column(row: tuple[object, ...]) -> str | None:
    """The first column of ``row`` read back as another type than the store writes, or None.

    SQL cannot store text in ``seq`` ("datatype mismatch"), but damage to the file can: the
    verifier reports such a record instead of comparing an integer with text. Text columns
    that are no longer UTF-8 arrive as bytes and are judged by their hash and JSON instead.
    """
    if type(row[0]) is not int:
        return _COLUMNS[0]
    for name, value in zip(_COLUMNS[1:], row[1:], strict=True):
        if not isinstance(value, str | bytes):
            return name
    return None


def _verify(conn: sqlite3.Connection, home: Path, ckpt: Checkpoint | str) -> VerifyResult:
    expected = 1
    prev = GENESIS_HASH
    count = 0
    ckpt_seq = ckpt.seq if isinstance(ckpt, Checkpoint) else -1
    hash_at_ckpt: str | None = None

    def bad(kind: str, seq: int | None, rid: str | None, problem: str) -> VerifyResult:
        return VerifyResult(False, count, expected - 1, prev, problem, kind, seq, rid)

    # One read transaction: a consistent snapshot even while others append.
    conn.execute("BEGIN")
    try:
        cursor = conn.execute(
            "SELECT seq, id, time, component, action, prev_hash, hash, record "
            "FROM records ORDER BY seq"
        )
        while True:
            batch = cursor.fetchmany(4096)
            if not batch:
                break
            for row in batch:
                damaged = _damaged_column(row)
                if damaged is not None:
                    at = row[0] if type(row[0]) is int else expected
                    rid_read = row[1] if isinstance(row[1], str) else None
                    return bad(
                        "edited",
                        at,
                        rid_read,
                        f"record {at} was damaged: its {damaged} column no longer holds "
                        "the type it was written with",
                    )
                seq, rid, time, component, action, prev_hash, link, record = row
                if seq != expected:
                    if seq > expected:
                        span = str(expected) if seq == expected + 1 else f"{expected}..{seq - 1}"
                        return bad(
                            "deleted",
                            expected,
                            None,
                            f"record {span} deleted: the sequence jumps from {expected - 1} "
                            f"to {seq} (next present: {rid})",
                        )
                    return bad("reordered", seq, rid, f"record {seq} is out of sequence")
                if prev_hash != prev:
                    return bad(
                        "reordered",
                        seq,
                        rid,
                        f"record {seq} ({rid}) does not follow record {seq - 1}: its prev_hash "
                        "is not the hash of its predecessor (records were deleted, inserted, "
                        f"swapped or record {seq - 1} was rewritten)",
                    )
                canonical = record.encode("utf-8") if isinstance(record, str) else bytes(record)
                if chain_hash(seq, prev_hash, canonical) != link:
                    return bad(
                        "edited",
                        seq,
                        rid,
                        f"record {seq} ({rid}) was edited: its hash does not match its content",
                    )
                ok, why = _columns_match(record, rid, time, component, action)
                if not ok:
                    return bad("edited", seq, rid, f"record {seq} ({rid}) was edited: {why}")
                if seq == ckpt_seq:
                    hash_at_ckpt = link
                prev = link
                expected = seq + 1
                count += 1
    finally:
        conn.execute("COMMIT")
    head_seq = expected - 1
    return _check_checkpoint(
        home,
        head_seq=head_seq,
        head_hash=prev,
        count=count,
        ckpt=ckpt,
        hash_at_ckpt=hash_at_ckpt,
    )


def _check_checkpoint(
    home: Path,
    *,
    head_seq: int,
    head_hash: str,
    count: int,
    ckpt: Checkpoint | str,
    hash_at_ckpt: str | None,
) -> VerifyResult:
    def bad(kind: str, seq: int | None, problem: str) -> VerifyResult:
        return VerifyResult(False, count, head_seq, head_hash, problem, kind, seq, None)

    if isinstance(ckpt, str):
        return bad("checkpoint", None, ckpt)
    try:
        key = checkpoint_key(home)
    except OSError as exc:
        raise AuditStoreError(f"cannot read the install key: {exc.strerror}") from None
    if not hmac.compare_digest(checkpoint_mac(key, ckpt.seq, ckpt.hash), ckpt.mac):
        return bad("checkpoint", None, "head checkpoint has a bad HMAC: forged or damaged")
    if ckpt.seq > head_seq:
        span = str(ckpt.seq) if ckpt.seq == head_seq + 1 else f"{head_seq + 1}..{ckpt.seq}"
        return bad(
            "truncated",
            head_seq + 1,
            f"log truncated: it ends at record {head_seq} but the head checkpoint records "
            f"{ckpt.seq}; record {span} cut off",
        )
    if ckpt.seq == 0:
        if ckpt.hash != GENESIS_HASH:
            return bad("checkpoint", 0, "head checkpoint at 0 does not hold the genesis hash")
    elif hash_at_ckpt != ckpt.hash:
        return bad(
            "truncated",
            ckpt.seq,
            f"record {ckpt.seq} is not the record the head checkpoint recorded "
            "(the log was rewritten from there)",
        )
    return VerifyResult(True, count, head_seq, head_hash)
