"""The hub's two storage engines behind one small interface: PostgreSQL and embedded SQLite.

PostgreSQL (``postgresql://…``) goes through psycopg 3 with a :class:`psycopg_pool.ConnectionPool`
(the ``hub`` extra); with no URL, or ``sqlite:///PATH``, an embedded SQLite file under the hub's
``DOMESTIQUE_HOME`` holds everything, so a one-team trial is one command.

SQL is written once with ``%s`` placeholders; the SQLite engine rewrites them to ``?``. Where the
two dialects differ (partitioning, ``FOR UPDATE``, ``= ANY``, ``COPY``) the caller asks
:attr:`Database.postgres`. Every write runs in one transaction: all of it or none of it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from domestique.keys import ensure_private_dir

SQLITE_NAME = "hub" + ".sqlite3"
BUSY_TIMEOUT_S = 30.0


class HubDatabaseError(RuntimeError):
    """The hub's database cannot be reached, opened or written. Never quotes record content."""


class Tx:
    """One open transaction. ``q`` returns all rows, ``one`` the first or None."""

    def __init__(self, conn: Any, postgres: bool) -> None:
        self._conn = conn
        self.postgres = postgres

    def _sql(self, sql: str) -> str:
        return sql if self.postgres else sql.replace("%s", "?")

    def q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self._conn.execute(self._sql(sql), tuple(params))
        if cur.description is None:
            return []
        return [tuple(r) for r in cur.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        cur = self._conn.execute(self._sql(sql), tuple(params))
        row = cur.fetchone()
        return tuple(row) if row is not None else None

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a statement; return the number of rows it changed."""
        cur = self._conn.execute(self._sql(sql), tuple(params))
        return int(cur.rowcount or 0)

    def start(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Send a query and return its cursor; in a :meth:`pipeline` the answer is read later."""
        return self._conn.execute(self._sql(sql), tuple(params))

    @contextlib.contextmanager
    def pipeline(self) -> Iterator[None]:
        """PostgreSQL pipeline mode: queries started inside go out without waiting for each
        answer (one round trip for several). No-op on SQLite."""
        if not self.postgres:
            yield
            return
        with self._conn.pipeline():
            yield

    def stream(
        self, sql: str, params: Sequence[Any] = (), size: int = 2000
    ) -> Iterator[tuple[Any, ...]]:
        """Rows one by one, ``size`` at a time from the server (a server-side cursor on
        PostgreSQL): memory stays bounded however many rows match."""
        if self.postgres:
            with self._conn.cursor(name="dq_stream") as cur:
                cur.itersize = size
                cur.execute(sql, tuple(params))
                yield from (tuple(r) for r in cur)
            return
        cur = self._conn.execute(self._sql(sql), tuple(params))
        while rows := cur.fetchmany(size):
            yield from (tuple(r) for r in rows)

    def copy_out(
        self, sql: str, params: Sequence[Any] = ()
    ) -> Iterator[Sequence[bytes | memoryview]]:
        """Rows of a SELECT as their raw UTF-8 text fields, streamed: ``COPY (…) TO STDOUT``
        on PostgreSQL (the fastest way out: one message a row, bounded memory), a cursor on
        SQLite. The last field may be a memoryview (no copy). NULL comes out as ``\\N`` on
        PostgreSQL: select no nullable column."""
        if not self.postgres:
            for row in self.stream(sql, params):
                yield [v.encode("utf-8") if isinstance(v, str) else str(v).encode() for v in row]
            return
        with self._conn.cursor() as cur, cur.copy(f"COPY ({sql}) TO STDOUT", tuple(params)) as copy:
            read = copy.read
            while chunk := read():  # one row a message, ending in a newline
                line = bytes(chunk)
                if b"\\" in line:
                    yield [_unescape(f) for f in line[:-1].split(b"\t")]
                    continue
                cut = line.rfind(b"\t")
                yield [*line[:cut].split(b"\t"), memoryview(line)[cut + 1 : -1]]

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if not rows:
            return
        if self.postgres:
            # psycopg 3 sends executemany in pipeline mode: one round trip for the lot.
            with self._conn.cursor() as cur:
                cur.executemany(sql, rows)
        else:
            self._conn.executemany(self._sql(sql), rows)

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk insert: ``COPY … FROM STDIN`` on PostgreSQL, ``executemany`` on SQLite."""
        if not rows:
            return
        cols = ", ".join(columns)
        if self.postgres:
            with (
                self._conn.cursor() as cur,
                cur.copy(f"COPY {table} ({cols}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            return
        marks = ", ".join("?" for _ in columns)
        self._conn.executemany(f"INSERT INTO {table} ({cols}) VALUES ({marks})", rows)  # noqa: S608 - fixed names


class Database:
    """A connection source for one hub database. Thread-safe; one per process."""

    def __init__(self, url: str | None, home: Path) -> None:
        self.url = url
        self.postgres = bool(url) and str(url).startswith(("postgresql://", "postgres://"))
        self._pool: Any = None
        self._sqlite_path: Path | None = None
        self._local = threading.local()
        if self.postgres:
            try:
                from psycopg_pool import ConnectionPool
            except ImportError:
                raise HubDatabaseError(
                    "PostgreSQL needs the hub extra: pip install 'domestique[hub]'"
                ) from None
            size = int(os.environ.get("DOMESTIQUE_HUB_POOL", "8"))
            try:
                self._pool = ConnectionPool(
                    str(url),
                    min_size=1,
                    max_size=max(1, size),
                    open=True,
                    timeout=30.0,
                    kwargs={"autocommit": True},
                )
                self._pool.wait(timeout=30.0)
            except Exception as exc:  # noqa: BLE001 - any connection failure is one error
                raise HubDatabaseError(
                    f"cannot connect to the hub database: {type(exc).__name__}"
                ) from None
        else:
            if url and url.startswith("sqlite:///"):
                path = Path(url[len("sqlite:///") - 1 :])
            elif url:
                raise HubDatabaseError(
                    "unsupported --database URL: postgresql://… or sqlite:///PATH"
                )
            else:
                path = ensure_private_dir(home / "hub") / SQLITE_NAME
            if not path.exists():
                ensure_private_dir(path.parent)
                os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            self._sqlite_path = path

    @property
    def description(self) -> str:
        if self.postgres:
            from urllib.parse import urlsplit

            parts = urlsplit(str(self.url))
            return f"postgresql://{parts.hostname or ''}:{parts.port or 5432}{parts.path}"
        return f"sqlite:///{self._sqlite_path}"

    def _sqlite(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            assert self._sqlite_path is not None
            conn = sqlite3.connect(
                self._sqlite_path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def tx(self) -> Iterator[Tx]:
        """One transaction: committed when the block ends, rolled back on any exception."""
        if self.postgres:
            try:
                with self._pool.connection() as conn, conn.transaction():
                    yield Tx(conn, True)
            except HubDatabaseError:
                raise
            except Exception as exc:
                import psycopg

                if isinstance(exc, psycopg.Error):
                    raise HubDatabaseError(
                        f"hub database error: {type(exc).__name__}: {_pg_message(exc)}"
                    ) from None
                raise
            return
        conn = self._sqlite()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise HubDatabaseError(f"hub database busy or unwritable: {exc}") from None
        try:
            yield Tx(conn, False)
            conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise HubDatabaseError(f"hub database error: {exc}") from None
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_COPY_ESCAPES = {
    b"\\": b"\\",
    b"n": b"\n",
    b"t": b"\t",
    b"r": b"\r",
    b"b": b"\b",
    b"f": b"\f",
    b"v": b"\v",
}
_COPY_ESCAPE = re.compile(rb"\\(.)", re.DOTALL)


def _unescape(field: bytes) -> bytes:
    """A field of COPY's text format as its value (the escapes PostgreSQL writes)."""
    return _COPY_ESCAPE.sub(lambda m: _COPY_ESCAPES.get(m.group(1), m.group(1)), field)


def _pg_message(exc: Exception) -> str:
    """The server's primary message (no parameters, so no record content)."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    return str(primary or "")[:200]
