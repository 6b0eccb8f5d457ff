"""Renderers for stored records: JSON lines (the canonical JSON as stored) and OCSF 1.5.

OCSF mapping (https://schema.ocsf.io, version 1.5.0, with the ``security_control`` profile):

==================  =======================================================================
record              OCSF
==================  =======================================================================
component proxy     class 6003 *API Activity* (category 6), activity 1 *Create* (a request
                    sent to the model provider); ``api.operation`` = route,
                    ``api.service.name`` = provider, ``dst_endpoint.hostname`` = upstream host
component guard,    class 1007 *Process Activity* (category 1), activity 1 *Launch* (the
hook                command about to run); ``process.cmd_line`` = the masked command,
                    ``process.file.path`` = cwd is not set (cwd goes to ``unmapped``)
action allow        ``action_id`` 1 Allowed, ``disposition_id`` 1 Allowed, severity 1
action redact       ``action_id`` 4 Modified, ``disposition_id`` 11 Corrected, severity 2
action ask          ``action_id`` 0 Unknown, ``disposition_id`` 99 Other ("Ask"), severity 3
action deny/block   ``action_id`` 2 Denied, ``disposition_id`` 2 Blocked, severity 4
id / time           ``metadata.uid`` / ``time`` (epoch ms) and ``metadata.original_time``
subject             ``actor.user.name``, ``device.hostname``, ``actor.process`` (nearest
                    ancestor), ``actor.app_name`` (the agent identified)
policy              ``policy.uid`` (sha256), ``policy.name`` (id)
reasons, engine,    ``unmapped`` (reason codes with their evidence: where, masked preview,
object rest         keyed fingerprint; bytes in/out; fields scanned)
==================  =======================================================================

Like every renderer here, these read only the stored record: previews and fingerprints, never
raw values.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import time
from collections.abc import Mapping
from typing import Any

OCSF_VERSION = "1.5.0"

_ACTION = {
    "allow": (1, 1, "Allowed", 1),
    "redact": (4, 11, "Corrected", 2),
    "ask": (0, 99, "Ask", 3),
    "deny": (2, 2, "Blocked", 4),
    "block": (2, 2, "Blocked", 4),
}
_ACTION_NAMES = {0: "Unknown", 1: "Allowed", 2: "Denied", 4: "Modified"}
_SEVERITY_NAMES = {1: "Informational", 2: "Low", 3: "Medium", 4: "High"}


def iso_to_epoch_ms(value: str) -> int:
    """``2026-11-30T01:02:03.456789Z`` → milliseconds since the epoch (0 if unparsable)."""
    try:
        head, _, frac = value.rstrip("Z").partition(".")
        if len(head) == 19 and head[10] == "T" and head[4] == head[7] == "-":
            # The stored form: datetime's C parser is ~10x faster than strptime (SIEM export).
            secs = calendar.timegm(dt.datetime.fromisoformat(head).timetuple())
        else:
            secs = calendar.timegm(time.strptime(head, "%Y-%m-%dT%H:%M:%S"))
        millis = int((frac + "000")[:3]) if frac else 0
    except ValueError:
        return 0
    return secs * 1000 + millis


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _get(data: Mapping[str, Any], key: str) -> Any:
    value = data.get(key)
    return value if value not in ("", None) else None


def _prune(value: Any) -> Any:
    """Drop None values and empty containers so the event carries only what is known."""
    # Scalars are returned by the caller without a call: this runs for every forwarded event.
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if v is None:
                continue
            if isinstance(v, (dict, list)):
                v = _prune(v)  # noqa: PLW2901 - the pruned value replaces it
                if not v:
                    continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_prune(v) if isinstance(v, (dict, list)) else v for v in value]
    return value


def to_ocsf(record: Mapping[str, Any]) -> dict[str, Any]:
    """One stored record (its JSON form) as an OCSF event."""
    component = str(record.get("component", ""))
    action = str(record.get("action", ""))
    obj = _mapping(record.get("object"))
    subject = _mapping(record.get("subject"))
    action_id, disposition_id, disposition, severity_id = _ACTION.get(action, (0, 0, "Unknown", 0))
    reasons = _list(record.get("reasons"))
    codes = [str(r.get("code")) for r in reasons if isinstance(r, dict)]
    ancestry = _list(subject.get("ancestry"))
    parent = _mapping(ancestry[0]) if ancestry else {}
    rtime = str(record.get("time", ""))
    event: dict[str, Any] = {
        "time": iso_to_epoch_ms(rtime),
        "action": _ACTION_NAMES.get(action_id, "Unknown"),
        "action_id": action_id,
        "disposition": disposition,
        "disposition_id": disposition_id,
        "severity": _SEVERITY_NAMES.get(severity_id, "Unknown"),
        "severity_id": severity_id,
        "status": "Success",
        "status_id": 1,
        "message": f"{component} {action}" + (f": {', '.join(codes)}" if codes else ""),
        "metadata": {
            "version": OCSF_VERSION,
            "uid": record.get("id"),
            "original_time": rtime,
            "profiles": ["security_control"],
            "product": {"name": "Domestique", "vendor_name": "Domestique"},
            "log_name": "audit",
        },
        "actor": {
            "user": {"name": _get(subject, "user")},
            "app_name": _get(subject, "agent"),
            "session": {"uid": _get(subject, "session_id")},
            "process": {
                "pid": parent.get("pid"),
                "name": parent.get("name"),
                "cmd_line": parent.get("cmdline"),
                "file": {"path": parent.get("exe")},
            },
        },
        "device": {"hostname": _get(subject, "host"), "type_id": 0},
        "policy": {
            "uid": _mapping(record.get("policy")).get("sha256"),
            "name": _mapping(record.get("policy")).get("id"),
        },
    }
    unmapped: dict[str, Any] = {
        "reasons": reasons,
        "engine": record.get("engine"),
        "latency_us": record.get("latency_us"),
        "actor_kind": _get(subject, "actor"),
    }
    if component == "proxy":
        event.update(
            {
                "category_uid": 6,
                "category_name": "Application Activity",
                "class_uid": 6003,
                "class_name": "API Activity",
                "activity_id": 1,
                "activity_name": "Create",
                "type_uid": 600301,
                "api": {
                    "operation": _get(obj, "route"),
                    "service": {"name": _get(obj, "provider")},
                },
                "dst_endpoint": {"hostname": _get(obj, "upstream_host")},
            }
        )
        unmapped.update(
            {
                k: obj.get(k)
                for k in ("model", "bytes_in", "bytes_out", "fields_scanned")
                if k in obj
            }
        )
    else:
        event.update(
            {
                "category_uid": 1,
                "category_name": "System Activity",
                "class_uid": 1007,
                "class_name": "Process Activity",
                "activity_id": 1,
                "activity_name": "Launch",
                "type_uid": 100701,
                "process": {"cmd_line": _get(obj, "command")},
            }
        )
        unmapped.update({k: obj.get(k) for k in ("cwd", "unfolded", "tool") if k in obj})
        unmapped["component"] = component
    event["unmapped"] = unmapped
    pruned: dict[str, Any] = _prune(event)
    return pruned


def ocsf_line(record: Mapping[str, Any]) -> str:
    return json.dumps(to_ocsf(record), sort_keys=True, ensure_ascii=False)
