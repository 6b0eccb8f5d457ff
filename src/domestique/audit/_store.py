"""The append-only audit store: SQLite (WAL) with a hash chain and a keyed head checkpoint.

Every decision record is stored as its canonical JSON with a sequence number, the hash of the
previous record and its own hash::

    hash(n) = sha256( "<n>:" + hash(n-1) + ":" + canonical_json(record n) )   hash(0) = 64 × "0"

Appends run inside ``BEGIN IMMEDIATE`` (one writer at a time across processes, others wait up to
the busy timeout): read the head, insert the next link, commit. So many processes (hooks, the
proxy) can append at once and the chain never forks.

After each commit the head (seq, hash) is written to ``audit.head.json`` beside the database,
with an HMAC under a key derived from the per-install key: one fixed-size record rewritten in
place under a file lock, and only forwards. :func:`domestique.audit.verify` compares the log with
it, so cutting records off the end of the log is detected. What this does *not* catch is written
in ``verify``'s docstring.

Durability: ``synchronous=NORMAL`` in WAL mode. A committed record survives a crash of the
writing process (the SIGKILL test); a power loss may lose the last few commits. This module
imports only the standard library, :mod:`domestique.records`/:mod:`domestique.keys` and (on a
failure) :mod:`domestique.boundary`, because
the hook process appends once per command.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from domestique.audit import spool as _spool
from domestique.frozen_class import dataclass
from domestique.keys import domestique_home, ensure_private_dir, install_key
from domestique.records import DecisionRecord, to_canonical_json

# Built from parts: a literal "audit.<word>" looks like a reason code to the registry test.
DB_NAME = "audit" + ".sqlite3"
HEAD_NAME = "audit.head.json"
CHECKPOINT_SIZE = 256  # bytes: one fixed-size record, rewritten in place
GENESIS_HASH = "0" * 64
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 30.0
_CHECKPOINT_KEY_LABEL = b"domestique audit head checkpoint v1"

_SCHEMA = (
    """CREATE TABLE records (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        time TEXT NOT NULL,
        component TEXT NOT NULL,
        action TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        record TEXT NOT NULL
    )""",
    "CREATE INDEX records_time ON records(time)",
    "CREATE INDEX records_component ON records(component, time)",
    "CREATE INDEX records_action ON records(action, time)",
    # Append-only against mistakes (an attacker can drop these; the hash chain catches them).
    """CREATE TRIGGER records_no_update BEFORE UPDATE ON records
       BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END""",
    """CREATE TRIGGER records_no_delete BEFORE DELETE ON records
       BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END""",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


class AuditStoreError(RuntimeError):
    """The audit store cannot be opened or written. The message never quotes record content.

    ``store_path`` and ``cause`` (when set) name the file and the cause in words (from the
    errno or SQLite's result code); the hooks and the firewall show them in the deny reason.
    """

    def __init__(
        self, message: str, *, store_path: Path | None = None, cause: str | None = None
    ) -> None:
        super().__init__(message)
        self.store_path = store_path
        self.cause = cause


def _store_error(doing: str, path: Path, exc: BaseException) -> AuditStoreError:
    """``AuditStoreError`` for ``exc`` met while ``doing`` on ``path``: names both and the cause."""
    from domestique.boundary import describe_cause

    cause = describe_cause(exc) or type(exc).__name__
    return AuditStoreError(
        f"cannot {doing} audit store {path}: {cause}", store_path=path, cause=cause
    )


def chain_hash(seq: int, prev_hash: str, canonical: bytes) -> str:
    """The hash of link ``seq``: sha256 over ``"<seq>:<prev_hash>:"`` and the canonical JSON."""
    h = hashlib.sha256(f"{seq}:{prev_hash}:".encode("ascii"))
    h.update(canonical)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The head of the chain as last written: sequence number and hash, with its HMAC."""

    seq: int
    hash: str
    mac: str

    def to_json(self) -> dict[str, object]:
        return {"seq": self.seq, "hash": self.hash, "mac": self.mac}


def checkpoint_key(home: Path) -> bytes:
    """The checkpoint HMAC key: derived from the install key, separate from fingerprints."""
    return hmac.new(install_key(home), _CHECKPOINT_KEY_LABEL, hashlib.sha256).digest()


def checkpoint_mac(key: bytes, seq: int, head_hash: str) -> str:
    return hmac.new(key, f"{seq}:{head_hash}".encode("ascii"), hashlib.sha256).hexdigest()


def encode_checkpoint(ckpt: Checkpoint) -> bytes:
    body = json.dumps(ckpt.to_json(), sort_keys=True).encode("ascii")
    return body.ljust(CHECKPOINT_SIZE - 1) + b"\n"


def parse_checkpoint(raw: bytes) -> Checkpoint | None:
    """A checkpoint from the file's bytes; None for an empty file; ValueError if malformed."""
    if not raw.strip():
        return None
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("checkpoint is not an object")
    seq, head, mac = data.get("seq"), data.get("hash"), data.get("mac")
    if type(seq) is not int or not isinstance(head, str) or not isinstance(mac, str):
        raise ValueError("checkpoint fields have the wrong types")
    return Checkpoint(seq, head, mac)


def read_checkpoint(path: Path) -> Checkpoint | None:
    """The checkpoint file (read under a shared lock); None if missing or empty.

    Raises ValueError when it is not well-formed.
    """
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        raw = os.read(fd, CHECKPOINT_SIZE * 4)
    finally:
        os.close(fd)
    return parse_checkpoint(raw)


@dataclass(frozen=True, slots=True)
class StoredRow:
    """One stored link of the chain, as read back."""

    seq: int
    id: str
    time: str
    component: str
    action: str
    prev_hash: str
    hash: str
    record: str  # canonical JSON

    def data(self) -> dict[str, object]:
        value = json.loads(self.record)
        if not isinstance(value, dict):
            raise ValueError(f"record {self.seq} is not a JSON object")
        return value


_INSERT = (
    "INSERT INTO records (seq, id, time, component, action, prev_hash, hash, record) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_SELECT_ID = "SELECT 1 FROM records WHERE id = ?"
_SELECT_NEWEST = (
    "SELECT seq, id, time, component, action, prev_hash, hash, record "
    "FROM records ORDER BY seq DESC LIMIT ?"
)
_SELECT_AFTER = (
    "SELECT seq, id, time, component, action, prev_hash, hash, record "
    "FROM records WHERE seq > ? ORDER BY seq LIMIT ?"
)
_SELECT_AFTER_SINCE = (
    "SELECT seq, id, time, component, action, prev_hash, hash, record "
    "FROM records WHERE seq > ? AND time >= ? ORDER BY seq LIMIT ?"
)


def _parse_spooled(home: Path, raw: bytes, record_id: str) -> tuple[DecisionRecord, bytes] | None:
    """The record a spool file holds and its canonical JSON: exactly one line, under the MAC
    the spooling process computed and the id its file name carries; None for anything else
    (truncated, edited, not a record)."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not isinstance(data.get("mac"), str):
            return None
        record = DecisionRecord.from_json(data["record"])
        canonical = to_canonical_json(record)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    mac = data["mac"]
    if raw != _spool.encode_line(mac, canonical) or record.id != record_id:
        return None
    if not hmac.compare_digest(mac, _spool.spool_mac(home, canonical)):
        return None
    return record, canonical


class AuditStore:
    """The audit store under one ``DOMESTIQUE_HOME``. Thread-safe; one per process is enough."""

    def __init__(self, home: Path, conn: sqlite3.Connection) -> None:
        self.home = home
        self.path = home / DB_NAME
        self.head_path = home / HEAD_NAME
        self._conn = conn
        self._lock = threading.Lock()
        self._ckpt_key: bytes | None = None
        self._head_fd: int | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, home: Path | None = None, *, create: bool = True) -> AuditStore:
        """Open (and on first use create) ``$DOMESTIQUE_HOME/audit.sqlite3``.

        ``create=False`` refuses a missing store (``verify``, ``export`` and ``report`` read
        an existing log; they never make an empty one). Raises :class:`AuditStoreError`.
        """
        home = home if home is not None else domestique_home()
        path = home / DB_NAME
        if not create and not path.exists() and not _spool.spooled_names(home):
            # (With spooled records waiting, the store is made to chain them: hooks that
            # decided in-process before any store existed.)
            raise AuditStoreError(f"no audit store at {path}")
        try:
            ensure_private_dir(home)
            fresh = not path.exists()
            if fresh:
                # Create the file 0600 ourselves: sqlite would use the umask.
                os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise _store_error("open", path, exc) from None
        store = cls(home, conn)
        try:
            store._prepare()
        except (OSError, sqlite3.Error) as exc:
            conn.close()
            raise _store_error("prepare", path, exc) from None
        # Readers and writers alike see the hooks' spooled records: chain them first. When
        # that fails the store still opens (the spool stays; the next append tries again and
        # ``verify`` reports what is waiting).
        with contextlib.suppress(AuditStoreError, OSError):
            store.append_many(())
        return store

    def _prepare(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            conn.execute("PRAGMA synchronous = NORMAL")
            return
        if version not in (0, SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"unknown audit schema version {version}")
        # First use: WAL mode is persistent in the file; set it before any transaction.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version == 0:  # another process may have created it while we waited
                for statement in _SCHEMA:
                    conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        if version == 0:
            self._advance_checkpoint(0, GENESIS_HASH)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            if self._head_fd is not None:
                os.close(self._head_fd)
                self._head_fd = None

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- appending ---------------------------------------------------------------------------
    def append(self, record: DecisionRecord) -> int:
        """Append one record; return its sequence number. Raises on any failure."""
        return self.append_many((record,))[-1]

    def append_many(self, records: Sequence[DecisionRecord]) -> list[int]:
        """Append records in one transaction (all or none); return their sequence numbers.

        Records waiting in the spool (:mod:`domestique.audit.spool`) are chained first, in the
        same transaction, and their files removed after the commit; with no ``records`` that
        is all it does.
        """
        try:
            spooled = _spool.spooled_names(self.home)
        except OSError:  # an unreadable spool does not stop the append; verify reports it
            spooled = []
        if not records and not spooled:
            return []
        rendered = [(r, to_canonical_json(r)) for r in records]
        self._checkpoint_key()  # an unreadable install key fails before anything is written
        with self._lock, self._writers_queue():
            taken: list[tuple[str, DecisionRecord, bytes]] = []
            if spooled:
                # An unreadable spool must not stop this append (a deny for every decision):
                # its records wait, and ``verify`` reports them.
                with contextlib.suppress(OSError):
                    taken = self._take_spool()
            seqs = self._commit(rendered, taken)
        _spool.remove(self.home, [name for name, _, _ in taken])
        return seqs[len(seqs) - len(rendered) :] if rendered else []

    def _take_spool(self) -> list[tuple[str, DecisionRecord, bytes]]:
        """The spooled records, valid ones in order; a file that holds none is quarantined."""
        taken: list[tuple[str, DecisionRecord, bytes]] = []
        for name in _spool.spooled_names(self.home):
            raw = _spool.read_spooled(self.home, name)
            if raw is None:
                continue  # ingested by another process meanwhile
            parsed = _parse_spooled(self.home, raw, _spool.record_id_of(name))
            if parsed is None:
                _spool.quarantine(self.home, name)
                continue
            taken.append((name, *parsed))
        return taken

    def _commit(
        self,
        rendered: list[tuple[DecisionRecord, bytes]],
        spooled: list[tuple[str, DecisionRecord, bytes]],
    ) -> list[int]:
        """One transaction: the spooled records not yet stored, then ``rendered``; the new
        records' sequence numbers (spooled ones first). Holds the writers' lock already."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _store_error("write", self.path, exc) from None
        try:
            row = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = (row[0], row[1]) if row else (0, GENESIS_HASH)
            prior_seq = seq
            seqs: list[int] = []
            fresh = [
                (r, c)
                for _, r, c in spooled
                if conn.execute(_SELECT_ID, (r.id,)).fetchone()
                is None  # chained already: the crash between commit and unlink
            ]
            for record, canonical in (*fresh, *rendered):
                seq += 1
                link = chain_hash(seq, prev, canonical)
                conn.execute(
                    _INSERT,
                    (
                        seq,
                        record.id,
                        record.time,
                        record.component.value,
                        record.action.value,
                        prev,
                        link,
                        canonical.decode("utf-8"),
                    ),
                )
                seqs.append(seq)
                prev = link
            conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise _store_error("write", self.path, exc) from None
            raise
        self._advance_checkpoint(seq, prev, prior_seq=prior_seq, locked=True)
        return seqs

    @contextlib.contextmanager
    def _writers_queue(self) -> Iterator[None]:
        """Hold the head file's exclusive lock for a whole append (transaction and checkpoint).

        Writers in other processes (the firewall's workers, hooks) then queue on the lock and
        go on as soon as it is free. Without it they meet at ``BEGIN IMMEDIATE``, whose busy
        handler sleeps 1, 2, 5, 10, 15, 20, 25 … ms between tries: a worker's whole batch of
        requests waited out those sleeps whenever another worker was committing. The lock is
        tried without blocking, with pauses of 50 µs doubling to 1 ms, for at most the busy
        timeout; past it the append fails (the decision blocks), it never waits forever. A
        process that dies holding it releases it. SQLite stays the authority on order: the lock
        only queues writers; the transaction still reads the head itself.
        """
        import fcntl
        import time

        try:
            if self._head_fd is None:
                self._head_fd = os.open(self.head_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise _store_error("write", self.path, exc) from None
        fd = self._head_fd
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 5e-5
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    busy = OSError(errno.EAGAIN, "audit writers' lock still held")
                    raise _store_error("write", self.path, busy) from None
                time.sleep(pause)
                pause = min(pause * 2, 1e-3)
            except OSError as exc:
                raise _store_error("write", self.path, exc) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    # -- the head checkpoint ---------------------------------------------------------------------
    def _checkpoint_key(self) -> bytes:
        if self._ckpt_key is None:
            self._ckpt_key = checkpoint_key(self.home)
        return self._ckpt_key

    def _advance_checkpoint(
        self, seq: int, head_hash: str, *, prior_seq: int = 0, locked: bool = False
    ) -> None:
        """Write (seq, hash) to ``audit.head.json`` unless a later head is already there.

        The file is one fixed-size record rewritten in place under an exclusive ``flock``
        (no temp file and rename: that tripled the cost of an append). ``seq == 0`` writes the
        genesis only into an empty file.

        A checkpoint that is damaged, or missing while the log already held records before
        this append (``prior_seq > 0``), is evidence of tampering: it is left as it is, so
        ``verify`` keeps reporting it. Re-creating it from the current head would bless a log
        whose tail was cut off together with its checkpoint.
        """
        import fcntl

        key = self._checkpoint_key()
        if self._head_fd is None:
            self._head_fd = os.open(self.head_path, os.O_RDWR | os.O_CREAT, 0o600)
        fd = self._head_fd
        if not locked:  # ``locked``: the caller holds it already (:meth:`_writers_queue`)
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            try:
                current = parse_checkpoint(os.pread(fd, CHECKPOINT_SIZE, 0))
            except ValueError:
                return  # damaged: keep the evidence for verify
            if current is None and prior_seq > 0:
                return  # deleted or emptied under a non-empty log: keep the evidence
            if current is not None and (current.seq >= seq or seq == 0):
                return
            body = Checkpoint(seq, head_hash, checkpoint_mac(key, seq, head_hash))
            os.pwrite(fd, encode_checkpoint(body), 0)
        finally:
            if not locked:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def checkpoint(self) -> Checkpoint | None:
        return read_checkpoint(self.head_path)

    # -- reading -----------------------------------------------------------------------------
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last record; (0, genesis) for an empty log."""
        with self._lock:
            row = self._conn.execute(
                "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)

    def count(self) -> int:
        with self._lock:
            (n,) = self._conn.execute("SELECT count(*) FROM records").fetchone()
        return int(n)

    def rows(
        self,
        *,
        since: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> Iterator[StoredRow]:
        """Stored rows in sequence order (``since``: ISO time lower bound, inclusive).

        Reads in pages so a long export holds no lock and little memory.
        """
        page = 2000
        last = after_seq
        remaining = limit
        if newest_first:
            with self._lock:
                got = self._conn.execute(
                    _SELECT_NEWEST, (limit if limit is not None else -1,)
                ).fetchall()
            for row in got:
                yield StoredRow(*row)
            return
        while remaining is None or remaining > 0:
            n = page if remaining is None else min(page, remaining)
            if since is None:
                query = _SELECT_AFTER
                params: tuple[object, ...] = (last, n)
            else:
                query = _SELECT_AFTER_SINCE
                params = (last, since, n)
            with self._lock:
                got = self._conn.execute(query, params).fetchall()
            if not got:
                return
            for row in got:
                yield StoredRow(*row)
            last = got[-1][0]
            if remaining is not None:
                remaining -= len(got)

    def records(self, *, since: str | None = None) -> Iterator[DecisionRecord]:
        for row in self.rows(since=since):
            yield DecisionRecord.from_json(row.data())
