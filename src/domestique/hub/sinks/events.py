"""What the SIEM receives: each stored record and integrity alert as one OCSF event.

Records use the audit log's own OCSF mapping (:func:`domestique.audit.export.to_ocsf`: API
Activity 6003 for the firewall, Process Activity 1007 for the guard and hooks), with the
endpoint the hub knows it by as ``device.uid``. Integrity alerts are OCSF **Detection Finding**
(class 2004): ``finding_info.title`` is the alert's code (``hub.integrity.gap`` …),
``finding_info.desc`` its message. The edited or conflicting copy an alert keeps is not sent.

Every event carries its **dedup key** (:attr:`Event.uid`): the record id, or ``alert-`` and the
alert's stored digest. It is ``metadata.uid`` in the OCSF body, ``id`` in the syslog structured
data, ``domestique.record_id`` on the OTLP log record and ``fields.record_id`` in Splunk HEC: a
sink re-sent after an outage (at-least-once) can be deduplicated on it.

The stream is read from the central store in commit order (see ``_schema``'s migration 2): on
SQLite by rowid / alert id, on PostgreSQL by (transaction id, sequence) below the oldest running
transaction, so a batch that commits late is never passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from domestique.audit.export import OCSF_VERSION, iso_to_epoch_ms, to_ocsf
from domestique.hub._db import Tx

Position = tuple[str, int]  # (transaction id as text, sequence); SQLite: ("0", rowid)
START: Position = ("0", 0)

# action → (syslog severity, OTLP severity number, OTLP severity text)
SEVERITY: dict[str, tuple[int, int, str]] = {
    "allow": (6, 9, "INFO"),
    "redact": (5, 10, "INFO"),
    "ask": (5, 13, "WARN"),
    "deny": (4, 14, "WARN"),
    "block": (4, 14, "WARN"),
}
ALERT_SEVERITY = (2, 17, "ERROR")
UNKNOWN_SEVERITY = (5, 13, "WARN")


@dataclass(frozen=True, slots=True)
class EndpointRef:
    """The endpoint an event came from, as the hub enrolled it."""

    id: str
    host: str
    user: str
    os: str
    version: str


@dataclass(frozen=True, slots=True)
class Event:
    """One event for every sink. ``body``: the OCSF JSON (UTF-8)."""

    uid: str
    kind: str  # "decision" | "integrity"
    endpoint: EndpointRef
    time: str  # RFC 3339 UTC, as stored
    time_ms: int
    seq: int | None
    action: str  # the record's action, or the alert's code
    codes: tuple[str, ...]
    class_uid: int
    severity: tuple[int, int, str]
    body: bytes


def _endpoint_refs(tx: Tx, ids: set[str], cache: dict[str, EndpointRef]) -> None:
    missing = sorted(ids - cache.keys())
    if not missing:
        return
    if tx.postgres:
        rows = tx.q(
            "SELECT id, host, os_user, os, version FROM endpoints WHERE id = ANY(%s)", (missing,)
        )
    else:
        marks = ", ".join("?" for _ in missing)
        rows = tx.q(
            f"SELECT id, host, os_user, os, version FROM endpoints WHERE id IN ({marks})",  # noqa: S608 - placeholders only
            missing,
        )
    for eid, host, user, os_name, version in rows:
        cache[str(eid)] = EndpointRef(str(eid), str(host), str(user), str(os_name), str(version))
    for eid in missing:  # an endpoint row is never deleted; be safe anyway
        cache.setdefault(eid, EndpointRef(eid, "", "", "", ""))


def read_records(
    tx: Tx, after: Position, limit: int, cache: dict[str, EndpointRef]
) -> tuple[list[Event], Position]:
    """Up to ``limit`` records committed after ``after``, as events, and the new position."""
    if tx.postgres:
        rows = tx.q(
            # ORDER BY names the table's columns: a bare fwd_xid would be the text output
            # column, sorted as text ("10" before "9").
            "SELECT fwd_xid::text AS at_xid, fwd_seq, endpoint_id, seq, record FROM records "
            "WHERE (fwd_xid, fwd_seq) > (%s::xid8, %s) "
            "AND fwd_xid < pg_snapshot_xmin(pg_current_snapshot()) "
            "ORDER BY records.fwd_xid, records.fwd_seq LIMIT %s",
            (after[0], after[1], limit),
        )
    else:
        rows = tx.q(
            "SELECT '0', rowid, endpoint_id, seq, record FROM records WHERE rowid > %s "
            "ORDER BY rowid LIMIT %s",
            (after[1], limit),
        )
    if not rows:
        return [], after
    _endpoint_refs(tx, {str(r[2]) for r in rows}, cache)
    events = [record_event(str(r[4]), cache[str(r[2])], int(r[3])) for r in rows]
    return events, (str(rows[-1][0]), int(rows[-1][1]))


def read_alerts(
    tx: Tx, after: Position, limit: int, cache: dict[str, EndpointRef]
) -> tuple[list[Event], Position]:
    """Up to ``limit`` integrity alerts stored after ``after``, as events, and the position."""
    cols = "time, endpoint_id, code, seq, record_id, message, dedupe"
    if tx.postgres:
        rows = tx.q(
            f"SELECT fwd_xid::text AS at_xid, id, {cols} FROM alerts "  # noqa: S608 - fixed column names
            "WHERE (fwd_xid, id) > (%s::xid8, %s) "
            "AND fwd_xid < pg_snapshot_xmin(pg_current_snapshot()) "
            "ORDER BY alerts.fwd_xid, alerts.id LIMIT %s",
            (after[0], after[1], limit),
        )
    else:
        rows = tx.q(
            f"SELECT '0', id, {cols} FROM alerts WHERE id > %s ORDER BY id LIMIT %s",  # noqa: S608
            (after[1], limit),
        )
    if not rows:
        return [], after
    _endpoint_refs(tx, {str(r[3]) for r in rows}, cache)
    events = [
        alert_event(
            time=str(r[2]),
            endpoint=cache[str(r[3])],
            code=str(r[4]),
            seq=None if r[5] is None else int(r[5]),
            record_id=None if r[6] is None else str(r[6]),
            message=str(r[7]),
            dedupe=str(r[8]),
        )
        for r in rows
    ]
    return events, (str(rows[-1][0]), int(rows[-1][1]))


def record_event(record_json: str, endpoint: EndpointRef, seq: int) -> Event:
    """A stored record (its canonical JSON) as an event."""
    record: dict[str, Any] = orjson.loads(record_json)
    ocsf = to_ocsf(record)
    device = ocsf.setdefault("device", {})
    device["uid"] = endpoint.id
    if endpoint.host:
        device.setdefault("hostname", endpoint.host)
    action = str(record.get("action", ""))
    reasons = record.get("reasons")
    codes = tuple(
        str(r.get("code"))
        for r in (reasons if isinstance(reasons, list) else [])
        if isinstance(r, dict) and r.get("code")
    )
    rtime = str(record.get("time", ""))
    return Event(
        uid=str(record.get("id", "")),
        kind="decision",
        endpoint=endpoint,
        time=rtime,
        time_ms=int(ocsf.get("time", 0)),
        seq=seq,
        action=action,
        codes=codes,
        class_uid=int(ocsf.get("class_uid", 0)),
        severity=SEVERITY.get(action, UNKNOWN_SEVERITY),
        body=orjson.dumps(ocsf),
    )


def alert_event(
    *,
    time: str,
    endpoint: EndpointRef,
    code: str,
    seq: int | None,
    record_id: str | None,
    message: str,
    dedupe: str,
) -> Event:
    """An integrity alert as an OCSF Detection Finding (class 2004)."""
    uid = "alert-" + dedupe
    ms = iso_to_epoch_ms(time)
    unmapped: dict[str, Any] = {"code": code, "endpoint_seq": seq, "record_id": record_id}
    ocsf: dict[str, Any] = {
        "category_uid": 2,
        "category_name": "Findings",
        "class_uid": 2004,
        "class_name": "Detection Finding",
        "activity_id": 1,
        "activity_name": "Create",
        "type_uid": 200401,
        "time": ms,
        "severity_id": 4,
        "severity": "High",
        "status_id": 1,
        "status": "New",
        "message": message,
        "finding_info": {
            "uid": uid,
            "title": code,
            "desc": message,
            "types": ["Integrity"],
        },
        "metadata": {
            "version": OCSF_VERSION,
            "uid": uid,
            "original_time": time,
            "product": {"name": "Domestique", "vendor_name": "Domestique"},
            "log_name": "integrity",
        },
        "device": {"uid": endpoint.id, "hostname": endpoint.host or None, "type_id": 0},
        "unmapped": {k: v for k, v in unmapped.items() if v is not None},
    }
    if not endpoint.host:
        del ocsf["device"]["hostname"]
    return Event(
        uid=uid,
        kind="integrity",
        endpoint=endpoint,
        time=time,
        time_ms=ms,
        seq=seq,
        action=code,
        codes=(code,),
        class_uid=2004,
        severity=ALERT_SEVERITY,
        body=orjson.dumps(ocsf),
    )
