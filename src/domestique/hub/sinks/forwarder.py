"""The forwarding loop: one thread per sink, its cursor and lease in the central store.

Each step reads the next batch after the sink's cursor (integrity alerts first, then records;
see :mod:`domestique.hub.sinks.events` for the order), sends it, and only then moves the cursor,
in a transaction that also renews the lease and fails unless this process still holds it.

- **At-least-once, nothing dropped**: the cursor moves after the sink acknowledged a batch
  (syslog: the receiver's TCP acknowledged every byte; OTLP and HEC: HTTP 200). A failure keeps
  the cursor, so the same batch goes again; a crash between sending and moving the cursor sends
  it again too. Each event carries its dedup key (:attr:`Event.uid`).
- **Bounded memory**: one batch (``batch`` events, default 1,000) per sink, whatever the backlog.
- **Retry**: a failed send or store access waits 0.5 s, doubling up to ``max_backoff`` (60 s),
  with jitter, and resumes from the cursor. The failure's code, message and count are kept on
  the sink's row (``sinks``) and printed once on stderr; so is the recovery.
- **One forwarder per sink across hubs**: a lease (``owner``, ``lease_until``, on the
  database's clock) is taken by the first hub and renewed by each step; the others wait and
  take over within ``lease_s`` when it stops renewing (a stopped hub releases it at once).
  Moving the cursor is fenced on the owner, so a hub that lost its lease never moves it back.
"""

from __future__ import annotations

import os
import random
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from domestique.hub._db import Database, HubDatabaseError, Tx
from domestique.hub.sinks._base import Sink, SinkError
from domestique.hub.sinks.config import SinkSpec
from domestique.hub.sinks.events import (
    START,
    EndpointRef,
    Event,
    Position,
    read_alerts,
    read_records,
)
from domestique.records import utc_now_iso

LEASE_S = 30.0
IDLE_S = 0.5
BASE_BACKOFF_S = 0.5
MAX_BACKOFF_S = 60.0
MAX_ERROR = 300


def make_sink(spec: SinkSpec) -> Sink:
    if spec.kind == "syslog":
        from domestique.hub.sinks.syslog import SyslogSink

        return SyslogSink(spec)
    if spec.kind == "otlp":
        from domestique.hub.sinks.otlp import OtlpSink

        return OtlpSink(spec)
    from domestique.hub.sinks.hec import HecSink

    return HecSink(spec)


def _now_sql(tx: Tx) -> str:
    """Seconds since the epoch on the database's clock (one clock for every hub)."""
    if tx.postgres:
        return "extract(epoch from clock_timestamp())::float8"
    return "((julianday('now') - 2440587.5) * 86400.0)"


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Forwarder:
    """Forwards the store's records and alerts to one sink. ``step`` is one batch; ``start``
    runs steps in a daemon thread until :meth:`stop`."""

    def __init__(
        self,
        db: Database,
        spec: SinkSpec,
        *,
        sink: Sink | None = None,
        owner: str | None = None,
        lease_s: float = LEASE_S,
        idle_s: float = IDLE_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        log: Callable[[str], Any] | None = None,
    ) -> None:
        self.db = db
        self.spec = spec
        self.sink = sink if sink is not None else make_sink(spec)
        self.owner = owner or new_owner()
        self.lease_s = lease_s
        self.idle_s = idle_s
        self.max_backoff_s = max(BASE_BACKOFF_S, max_backoff_s)
        self.log = log or (lambda line: sys.stderr.write(line + "\n"))
        self.failures = 0
        self.delivered = 0
        self._endpoints: dict[str, EndpointRef] = {}
        self._lease_until = 0.0  # monotonic; renewed well before the database's lease ends
        self._failing: str | None = None
        self._positions: dict[str, Position] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        with db.tx() as tx:
            tx.run(
                "INSERT INTO sinks (name, kind) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (spec.name, spec.kind),
            )

    # -- the store side ----------------------------------------------------------------------
    def _acquire(self) -> bool:
        """Take or renew the lease; False while another hub holds it."""
        with self.db.tx() as tx:
            now = _now_sql(tx)
            got = tx.run(
                f"UPDATE sinks SET owner = %s, lease_until = {now} + %s WHERE name = %s "  # noqa: S608 - fixed text
                f"AND (owner = %s OR owner IS NULL OR lease_until < {now})",
                (self.owner, self.lease_s, self.spec.name, self.owner),
            )
        if got == 1:
            self._lease_until = time.monotonic() + self.lease_s / 3
        return got == 1

    def _cursor(self) -> tuple[Position, Position]:
        with self.db.tx() as tx:
            row = tx.one(
                "SELECT records_xid, records_seq, alerts_xid, alerts_seq FROM sinks "
                "WHERE name = %s",
                (self.spec.name,),
            )
        if row is None:
            return START, START
        return (str(row[0]), int(row[1])), (str(row[2]), int(row[3]))

    def _advance(self, stream: str, pos: Position, count: int) -> bool:
        """Move one cursor (fenced on the owner) and renew the lease; False if it was lost."""
        with self.db.tx() as tx:
            now = _now_sql(tx)
            moved = tx.run(
                f"UPDATE sinks SET {stream}_xid = %s, {stream}_seq = %s, "  # noqa: S608 - stream is records or alerts
                f"forwarded = forwarded + %s, last_ok = %s, error_code = NULL, error = NULL, "
                f"failures = 0, lease_until = {now} + %s WHERE name = %s AND owner = %s",
                (pos[0], pos[1], count, utc_now_iso(), self.lease_s, self.spec.name, self.owner),
            )
        if moved == 1:
            self._lease_until = time.monotonic() + self.lease_s / 3
            return True
        self._lease_until = 0.0
        return False

    def _note_failure(self, code: str, message: str) -> None:
        try:
            with self.db.tx() as tx:
                tx.run(
                    "UPDATE sinks SET error_code = %s, error = %s, error_at = %s, "
                    "failures = failures + 1 WHERE name = %s AND owner = %s",
                    (code, message[:MAX_ERROR], utc_now_iso(), self.spec.name, self.owner),
                )
        except HubDatabaseError:
            return

    def release(self) -> None:
        """Give the lease up so another hub takes over at once."""
        try:
            with self.db.tx() as tx:
                tx.run(
                    "UPDATE sinks SET owner = NULL, lease_until = 0 WHERE name = %s AND owner = %s",
                    (self.spec.name, self.owner),
                )
        except HubDatabaseError:
            return
        self._lease_until = 0.0

    # -- one step ----------------------------------------------------------------------------
    def step(self) -> int | None:
        """Send the next batch. Returns how many events were delivered (0: nothing new), or
        None when another hub holds the lease. Raises SinkError or HubDatabaseError."""
        if time.monotonic() >= self._lease_until:
            if not self._acquire():
                self._positions = None
                return None
            self._positions = None  # (re)read once per lease renewal: only the owner moves it
        if self._positions is None:
            records_pos, alerts_pos = self._cursor()
            self._positions = {"records": records_pos, "alerts": alerts_pos}
        for stream, read in (("alerts", read_alerts), ("records", read_records)):
            with self.db.tx() as tx:
                events, pos = read(tx, self._positions[stream], self.spec.batch, self._endpoints)
            if events:
                self._send(events)
                if not self._advance(stream, pos, len(events)):
                    self._positions = None
                    return None
                self._positions[stream] = pos
                self.delivered += len(events)
                return len(events)
        return 0

    def _send(self, events: Sequence[Event]) -> None:
        self.sink.send(events)
        partial = getattr(self.sink, "last_partial", None)
        if partial:
            self.log(
                f"domestique hub: sink {self.spec.describe()}: hub.sink.partial: the receiver "
                f"rejected {partial[0]} of {len(events)} log records: {partial[1]}"
            )

    def backoff(self) -> float:
        self.failures += 1
        delay = min(self.max_backoff_s, BASE_BACKOFF_S * float(2 ** min(self.failures - 1, 20)))
        return delay * random.uniform(0.8, 1.0)  # noqa: S311 - jitter, not a secret

    def run_until(self, stop: threading.Event) -> None:
        """Steps until ``stop`` is set: idle waits when nothing is new, backoff on failure."""
        while not stop.is_set():
            try:
                done = self.step()
            except Exception as exc:  # noqa: BLE001 - a forwarder that stops drops nothing but forwards nothing
                if isinstance(exc, SinkError):
                    code, message = exc.code, exc.message
                elif isinstance(exc, HubDatabaseError):
                    code, message = "hub.sink.store", str(exc)
                else:  # a bug: never its message (it may quote an event), only its type
                    code, message = "hub.sink.internal", f"{type(exc).__name__}; retrying"
                self.sink.close()
                delay = self.backoff()
                if self._failing != code:
                    self.log(
                        f"domestique hub: sink {self.spec.describe()}: {code}: {message} "
                        f"(retrying with backoff up to {self.max_backoff_s:.0f}s; nothing is "
                        "dropped)"
                    )
                    self._failing = code
                self._note_failure(code, message)
                stop.wait(delay)
                continue
            if self._failing is not None:
                self.log(
                    f"domestique hub: sink {self.spec.describe()}: delivering again after "
                    f"{self.failures} failed attempt(s)"
                )
                self._failing = None
            self.failures = 0
            if done is None:
                stop.wait(min(self.lease_s / 3, 5.0))
            elif done == 0:
                stop.wait(self.idle_s)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.run_until, args=(self._stop,), name=f"sink-{self.spec.kind}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.sink.close()
        self.release()


def sink_status(db: Database) -> list[dict[str, Any]]:
    """Every sink's row: name, kind, forwarded, last_ok, error_code, error, failures, owner."""
    with db.tx() as tx:
        rows = tx.q(
            "SELECT name, kind, forwarded, last_ok, error_code, error, error_at, failures, "
            "owner FROM sinks ORDER BY name"
        )
    keys = (
        "name",
        "kind",
        "forwarded",
        "last_ok",
        "error_code",
        "error",
        "error_at",
        "failures",
        "owner",
    )
    return [dict(zip(keys, r, strict=True)) for r in rows]


def start_forwarders(db: Database, specs: Sequence[SinkSpec], **options: Any) -> list[Forwarder]:
    """One running forwarder per sink (the caller stops them)."""
    forwarders = [Forwarder(db, spec, **options) for spec in specs]
    for f in forwarders:
        f.start()
    return forwarders
