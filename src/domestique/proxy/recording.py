"""The firewall's decision records: built from a request's facts, stored, and enforced as stored.

Every request the firewall answers leaves one record (:class:`Recording.decide`), built from
its :class:`~domestique.proxy.exchange.RequestFacts` and a verdict through
:func:`domestique.boundary.decide_and_record`: a verdict that cannot be reached or a record that
cannot be built becomes a block. Storing is asynchronous: with group commit
(:mod:`domestique.proxy.audit_batch`) the request waits for the transaction holding its record;
without it the record is appended inline. Either way a record that cannot be written comes back
as ``block`` with ``audit.write_failed``, and the record that comes back is the one enforced.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping

from domestique import __version__
from domestique.boundary import decide_and_record
from domestique.proxy.audit_batch import GroupRecorder, write_failed
from domestique.proxy.exchange import RequestFacts, identify_agent
from domestique.proxy.routes import Provider
from domestique.records import (
    Action,
    Component,
    DecisionRecord,
    JSONValue,
    PolicyRef,
    Reason,
    Subject,
    Verdict,
    new_record_id,
    utc_now_iso,
)

Recorder = Callable[[DecisionRecord], DecisionRecord]


class Recording:
    """Builds and stores the records of one firewall process.

    ``recorder``: the inline append (returns the stored, masked record, or it turned into a
    block); ``group``: group commit, used instead when set; ``active``: how many requests the
    process is handling (a lone request is written inline even with group commit);
    ``mask_path``: a refused path with its findings masked (it was never scanned).
    """

    def __init__(  # noqa: PLR0917 - built once, by the app
        self,
        policy_ref: Callable[[], PolicyRef],
        recorder: Recorder,
        group: GroupRecorder | None,
        hosts: Mapping[Provider, str],
        user_host: tuple[str, str],
        mask_path: Callable[[str], str],
        active: Callable[[], int],
    ) -> None:
        self._policy_ref = policy_ref
        self._recorder = recorder
        self._group = group
        self._hosts = hosts
        self._user, self._host = user_host
        self._mask_path = mask_path
        self._active = active

    def build(
        self, facts: RequestFacts, verdict: Verdict, obj: Mapping[str, JSONValue]
    ) -> DecisionRecord:
        route = facts.route
        base: dict[str, JSONValue] = {
            "provider": facts.provider.value,
            "route": route.operation.value if route else self._mask_path(facts.path[:200]),
            "upstream_host": self._hosts.get(facts.provider, ""),
        }
        base.update(obj)
        ua = facts.headers.get("user-agent", "")
        return DecisionRecord(
            component=Component.PROXY,
            action=verdict.action,
            reasons=verdict.reasons,
            subject=Subject(
                user=self._user,
                host=self._host,
                agent=facts.agent or identify_agent(ua),
                markers=(f"user-agent:{ua.split(' ', 1)[0][:60]}",) if ua else (),
            ),
            object=base,
            policy=self._policy_ref(),
            engine={"domestique": __version__, "proxy": "1"},
            latency_us=(time.perf_counter_ns() - facts.t0) // 1000,
            would_action=verdict.would,
        )

    async def decide(
        self,
        facts: RequestFacts,
        judge: Callable[[], Verdict],
        obj: Mapping[str, JSONValue] | Callable[[], Mapping[str, JSONValue]] | None = None,
    ) -> DecisionRecord:
        """Judge, build and store one record through the boundary; the record to enforce.

        ``obj``: what the record says about the request beyond the facts (or a function
        giving it once ``judge`` has run).
        """
        built: list[DecisionRecord] = []

        def build(verdict: Verdict) -> DecisionRecord:
            details = obj() if callable(obj) else obj
            return self.build(facts, verdict, details or {})

        # The append stages the record: storing awaits (group commit), and fails closed itself.
        decision = decide_and_record(judge, build, built.append, stop=Action.BLOCK)
        return await self.store(decision)

    async def store(self, record: DecisionRecord) -> DecisionRecord:
        """Append ``record``; the stored (masked) record, or it turned into a block."""
        if self._group is not None:
            # Group commit: this request waits for the transaction holding its record.
            return await self._group.record(record, alone=self._active() <= 1)
        # Inline, on the event loop: one transaction per request.
        try:
            return self._recorder(record)
        except Exception as exc:  # noqa: BLE001 - an unrecorded decision never allows
            return write_failed(record, exc, Action.BLOCK)

    async def upstream_failed(self, decision: DecisionRecord, reason: Reason) -> DecisionRecord:
        """Record what the client got when the upstream failed after the decision to forward.

        The decision record was written before anything left (the log never trails what was
        sent); the audit log is append-only, so the outcome is a second record: ``block`` with
        ``proxy.upstream_error``, naming the decision it follows. An audit failure here changes
        nothing the client gets (it already gets an error), so it is not raised.
        """
        obj: dict[str, JSONValue] = {
            key: decision.object[key]
            for key in ("provider", "route", "model", "upstream_host", "stream")
            if key in decision.object
        }
        obj["follows"] = decision.id
        record = dataclasses.replace(
            decision,
            id=new_record_id(),
            time=utc_now_iso(),
            action=Action.BLOCK,
            reasons=(reason,),
            object=obj,
        )
        return await self.store(record)
