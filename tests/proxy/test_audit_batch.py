"""Group commit of the firewall's audit records (domestique.proxy.audit_batch)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from domestique.audit import AuditStore, mask_or_stop, verify
from domestique.proxy.audit_batch import GroupRecorder
from domestique.records import Action, Component, DecisionRecord, PolicyRef, Reason, Subject

SECRET = "AKIA" + "Z7QW3ERTYUIOPL4Q"  # an AWS access key id: the mask must replace it


def make_record(i: int, *, extra: str = "") -> DecisionRecord:
    return DecisionRecord(
        component=Component.PROXY,
        action=Action.ALLOW,
        reasons=(),
        subject=Subject(user="u", host="h", agent="claude-code"),
        object={"provider": "anthropic", "route": "messages", "n": i, "path": extra},
        policy=PolicyRef("test", "0" * 64),
        engine={"domestique": "test"},
        latency_us=1,
    )


class GatedStore:
    """A real store whose first append waits until told, so later records queue behind it."""

    def __init__(self, store: AuditStore, *, fail_after: int | None = None) -> None:
        self.store = store
        self.gate = threading.Event()
        self.calls: list[int] = []
        self.fail_after = fail_after

    def append_many(self, records: Sequence[DecisionRecord]) -> object:
        self.calls.append(len(records))
        if len(self.calls) == 1:
            self.gate.wait(10)
        if self.fail_after is not None and len(self.calls) > self.fail_after:
            raise OSError("disk full")
        return self.store.append_many(records)


def recorder_for(home: Path, append: GatedStore) -> GroupRecorder:
    return GroupRecorder(
        append.append_many, lambda r: mask_or_stop(r, home, stop=Action.BLOCK), stop=Action.BLOCK
    )


async def submit_while_first_in_flight(
    group: GroupRecorder, gated: GatedStore, n: int
) -> list[DecisionRecord]:
    """One record starts a commit; ``n - 1`` more arrive while it is held, then it is released."""
    first = asyncio.create_task(group.record(make_record(0)))
    while not gated.calls:  # the first commit is in flight on the writer thread
        await asyncio.sleep(0.001)
    rest = [asyncio.create_task(group.record(make_record(i))) for i in range(1, n)]
    await asyncio.sleep(0.01)
    assert not any(t.done() for t in [first, *rest])  # nobody is answered before its commit
    gated.gate.set()
    return await asyncio.gather(first, *rest)


def test_concurrent_records_share_a_batch_in_one_unbroken_chain(private_home: Path) -> None:
    """Records arriving during a commit form the next batch; all land in one verified chain."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store)
    group = recorder_for(private_home, gated)
    try:
        out = asyncio.run(submit_while_first_in_flight(group, gated, 20))
    finally:
        group.close()
    assert [r.action for r in out] == [Action.ALLOW] * 20
    assert gated.calls == [1, 19]  # two transactions for twenty requests
    assert group.batches == [1, 19]
    assert store.count() == 20
    stored = [r.object["n"] for r in store.records()]
    assert sorted(stored) == list(range(20))
    assert {r.id for r in store.records()} == {r.id for r in out}
    result = verify(private_home)
    assert result.ok, result
    store.close()


def test_failing_batch_blocks_every_request_in_it(private_home: Path) -> None:
    """A batch whose append raises blocks each of its requests with audit.write_failed."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store, fail_after=1)
    group = recorder_for(private_home, gated)
    try:
        out = asyncio.run(submit_while_first_in_flight(group, gated, 8))
    finally:
        group.close()
    assert out[0].action is Action.ALLOW  # the first batch was written
    assert [r.action for r in out[1:]] == [Action.BLOCK] * 7
    assert all(r.codes[-1] == "audit.write_failed" for r in out[1:])
    assert all("disk full" not in r.reasons[-1].message for r in out[1:])
    assert store.count() == 1
    assert verify(private_home).ok
    store.close()


def test_unwritable_sqlite_file_blocks_the_whole_batch(private_home: Path) -> None:
    """A real SQLite store that refuses writes (query_only: tests run as root, which file modes
    do not stop): every request of the batch is blocked and nothing is stored."""
    AuditStore.open(private_home).close()
    ro = AuditStore.open(private_home)
    ro._conn.execute("PRAGMA query_only = ON")  # read-only, as a file the writer cannot write
    gated = GatedStore(ro)
    group = recorder_for(private_home, gated)
    try:
        out = asyncio.run(submit_while_first_in_flight(group, gated, 6))
    finally:
        group.close()
    assert [r.action for r in out] == [Action.BLOCK] * 6
    assert {r.codes[-1] for r in out} == {"audit.write_failed"}
    assert ro.count() == 0
    ro.close()


def test_every_batched_record_is_masked(private_home: Path) -> None:
    """The store's masking applies to each record of a batch: no raw secret is stored."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store)
    gated.gate.set()
    group = recorder_for(private_home, gated)

    async def run() -> list[DecisionRecord]:
        return await asyncio.gather(
            *(group.record(make_record(i, extra=f"key {SECRET}")) for i in range(5))
        )

    try:
        out = asyncio.run(run())
    finally:
        group.close()
    assert all(r.action is Action.ALLOW for r in out)
    assert all(SECRET not in str(r.object) for r in out)  # what is enforced is masked too
    raw = "".join(row.record for row in store.rows())
    assert store.count() == 5
    assert SECRET not in raw
    store.close()


def test_a_record_that_cannot_be_masked_is_blocked_and_not_stored(private_home: Path) -> None:
    """A masking error blocks that request alone, before it reaches a batch."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store)
    gated.gate.set()

    def mask(record: DecisionRecord) -> tuple[DecisionRecord, bool]:
        if record.object["n"] == 1:
            return (
                DecisionRecord(
                    component=record.component,
                    action=Action.BLOCK,
                    reasons=(Reason("audit.write_failed", "mask failed"),),
                    subject=record.subject,
                    object={},
                    policy=record.policy,
                    engine=record.engine,
                    latency_us=0,
                ),
                False,
            )
        return record, True

    group = GroupRecorder(gated.append_many, mask, stop=Action.BLOCK)

    async def run() -> list[DecisionRecord]:
        return await asyncio.gather(*(group.record(make_record(i)) for i in range(3)))

    try:
        out = asyncio.run(run())
    finally:
        group.close()
    assert [r.action for r in out] == [Action.ALLOW, Action.BLOCK, Action.ALLOW]
    assert store.count() == 2
    store.close()


def test_closed_writer_blocks(private_home: Path) -> None:
    """After close (the writer thread is gone), a record is blocked, never allowed."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store)
    gated.gate.set()
    group = recorder_for(private_home, gated)
    group.close()
    out = asyncio.run(group.record(make_record(0)))
    assert out.action is Action.BLOCK
    assert out.codes[-1] == "audit.write_failed"
    assert store.count() == 0
    store.close()


def test_stop_must_be_block_or_deny() -> None:
    """A group recorder cannot be built to fail with an allowing action."""
    with pytest.raises(ValueError, match="deny or block"):
        GroupRecorder(lambda _: None, lambda r: (r, True), stop=Action.ALLOW)


def test_a_lone_request_is_written_inline_and_still_fails_closed(private_home: Path) -> None:
    """alone=True writes at once on the loop (no hand-off); a failing write still blocks."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store, fail_after=1)
    gated.gate.set()
    group = recorder_for(private_home, gated)

    async def run() -> list[DecisionRecord]:
        first = await group.record(make_record(0), alone=True)
        second = await group.record(make_record(1), alone=True)
        return [first, second]

    try:
        out = asyncio.run(run())
    finally:
        group.close()
    assert [r.action for r in out] == [Action.ALLOW, Action.BLOCK]
    assert out[1].codes[-1] == "audit.write_failed"
    assert gated.calls == [1, 1]
    assert store.count() == 1
    store.close()


def test_a_lone_request_queues_behind_a_commit_in_flight(private_home: Path) -> None:
    """alone=True does not overtake a batch in flight: it joins the next batch (chain order)."""
    store = AuditStore.open(private_home)
    gated = GatedStore(store)
    group = recorder_for(private_home, gated)

    async def run() -> list[DecisionRecord]:
        first = asyncio.create_task(group.record(make_record(0)))
        while not gated.calls:
            await asyncio.sleep(0.001)
        lone = asyncio.create_task(group.record(make_record(1), alone=True))
        await asyncio.sleep(0.01)
        assert not lone.done()
        gated.gate.set()
        return list(await asyncio.gather(first, lone))

    try:
        out = asyncio.run(run())
    finally:
        group.close()
    assert [r.action for r in out] == [Action.ALLOW, Action.ALLOW]
    assert group.batches == [1, 1]
    assert [r.object["n"] for r in store.records()] == [0, 1]
    assert verify(private_home).ok
    store.close()
