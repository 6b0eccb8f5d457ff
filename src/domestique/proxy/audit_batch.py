"""Group commit of the firewall's audit records: one SQLite transaction for many requests.

Each request masks its record (the store's last gate: :func:`domestique.audit.mask_or_stop`)
and awaits :meth:`GroupRecorder.record`. Records that arrive while a commit is in flight wait
and form the next batch; a batch is appended with ``AuditStore.append_many`` (all or none, one
transaction, one checkpoint update) on one writer thread, so the event loop keeps judging while
SQLite writes. Every request then gets its own batch's outcome:

* written: the masked record, unchanged, is the decision to enforce;
* not written (any exception, or the writer gone): every record of the batch comes back as
  ``block`` with ``audit.write_failed``. An unrecorded decision never allows.

A request is answered only after the commit holding its record returned, exactly as with the
inline append; batching changes how many records share a transaction, not what is enforced.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from domestique.boundary import error_reason, stop_action
from domestique.records import Action, DecisionRecord

AppendMany = Callable[[Sequence[DecisionRecord]], object]
Mask = Callable[[DecisionRecord], tuple[DecisionRecord, bool]]

MAX_BATCH = 256  # records per transaction; the rest wait for the next one


def write_failed(record: DecisionRecord, exc: BaseException, stop: Action) -> DecisionRecord:
    """``record`` turned into ``stop`` with ``audit.write_failed`` (the reason names no content)."""
    reason = error_reason(exc, "audit.write_failed")
    return dataclasses.replace(
        record, action=stop_action(stop), reasons=(*record.reasons, reason), would_action=None
    )


class GroupRecorder:
    """Appends records in batches from one event loop; see the module docstring.

    ``append_many`` must write all of its records or raise. ``mask`` returns the record to
    store and whether it may be stored (False: it already carries the stop and the reason).
    """

    def __init__(
        self,
        append_many: AppendMany,
        mask: Mask,
        *,
        stop: Action = Action.BLOCK,
        max_batch: int = MAX_BATCH,
    ) -> None:
        self._append_many = append_many
        self._mask = mask
        self._stop = stop_action(stop)
        self._max_batch = max(1, max_batch)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dq-audit")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[tuple[DecisionRecord, asyncio.Future[BaseException | None]]] = []
        self._in_flight = False
        self.batches: list[int] = []  # sizes of the batches written or tried (tests, bench)

    async def record(self, record: DecisionRecord, *, alone: bool = False) -> DecisionRecord:
        """Store ``record`` in the next batch; return the decision to enforce.

        ``alone``: the caller is the only request this process is handling. With no commit in
        flight nobody could join its batch, so the record is written inline, on the loop: a
        single connection pays no hand-off to the writer thread.
        """
        masked, ok = self._mask(record)
        if not ok:
            return masked
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new loop (tests run several): nothing carries over
            self._loop, self._pending, self._in_flight = loop, [], False
        if alone and not self._in_flight and not self._pending:
            self.batches.append(1)
            try:
                self._append_many((masked,))
            except BaseException as exc:  # noqa: BLE001 - an unrecorded decision never allows
                return write_failed(masked, exc, self._stop)
            return masked
        done: asyncio.Future[BaseException | None] = loop.create_future()
        self._pending.append((masked, done))
        if not self._in_flight:
            self._start(loop)
        # Shielded: a cancelled request leaves its batch alone (its record is still written).
        failure = await asyncio.shield(done)
        return masked if failure is None else write_failed(masked, failure, self._stop)

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        batch = self._pending[: self._max_batch]
        del self._pending[: len(batch)]
        self._in_flight = True
        self.batches.append(len(batch))
        records = [r for r, _ in batch]
        try:
            fut = loop.run_in_executor(self._executor, self._write, records)
        except BaseException as exc:  # noqa: BLE001 - the writer is gone: block the batch
            self._finish(loop, batch, exc)
            return
        fut.add_done_callback(lambda f: self._finish(loop, batch, _outcome(f)))

    def _write(self, records: list[DecisionRecord]) -> None:
        self._append_many(records)

    def _finish(
        self,
        loop: asyncio.AbstractEventLoop,
        batch: list[tuple[DecisionRecord, asyncio.Future[BaseException | None]]],
        failure: BaseException | None,
    ) -> None:
        for _, done in batch:
            if not done.done():
                done.set_result(failure)
        self._in_flight = False
        if self._pending and loop is self._loop:
            self._start(loop)

    def close(self) -> None:
        self._executor.shutdown(wait=True)


def _outcome(fut: asyncio.Future[None]) -> BaseException | None:
    if fut.cancelled():
        return asyncio.CancelledError()
    return fut.exception()
