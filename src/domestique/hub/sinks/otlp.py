"""OTLP/HTTP logs: ``POST {url}`` (default path ``/v1/logs``), ``application/x-protobuf``.

Each batch is one ``ExportLogsServiceRequest`` with one ``ResourceLogs`` per endpoint. The
resource names the service and the endpoint (``service.name`` ``domestique-hub``,
``service.version``, ``service.instance.id`` the hub process, ``host.name`` the endpoint's
host, ``domestique.endpoint.id``, ``user.name``, ``os.description``); the scope is
``domestique.hub``. Each event is one ``LogRecord``: ``body`` the OCSF JSON as a string,
``time_unix_nano`` the decision's time, ``severity_number``/``severity_text`` from the action,
``event_name`` ``domestique.decision`` or ``domestique.integrity``, and the attributes
``domestique.record_id`` (the dedup key), ``domestique.kind``, ``domestique.action``,
``domestique.codes``, ``ocsf.class_uid`` and, for records, ``domestique.seq``.

HTTP 200 delivers the batch (a ``partial_success`` with rejected records is logged as
``hub.sink.partial`` and not re-sent, as the OTLP specification says); 429, 502, 503 and 504 are
retried, and so is any other status (``hub.sink.rejected``): the cursor never passes a batch the
receiver refused, so a misconfigured collector stalls the sink visibly instead of losing events.

The request is encoded here, directly in the protobuf wire format, rather than through the
OpenTelemetry SDK's ``OTLPLogExporter``: the SDK's encoder builds a message object per record
and attribute and costs more than the whole rest of forwarding (see docs/dependencies.md and
docs/benchmarks.md); the tests decode every request with ``opentelemetry-proto``.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from typing import Any

from domestique.hub.sinks._base import HttpPoster, SinkError
from domestique.hub.sinks.config import SinkSpec
from domestique.hub.sinks.events import Event

SERVICE_NAME = "domestique-hub"
SCOPE_NAME = "domestique.hub"
TIMEOUT_S = 30.0
RETRYABLE = frozenset({429, 502, 503, 504})

# --- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) --------------


_SMALL = tuple(bytes((i,)) for i in range(0x80))


def _varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _SMALL[value]
    out = bytearray()
    value &= (1 << 64) - 1
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _any_value(value: str | int) -> bytes:
    """AnyValue: string_value = 1, int_value = 3."""
    if isinstance(value, int):
        return _varint(3 << 3) + _varint(value)
    return _len_field(1, value.encode("utf-8"))


def _key_value(key: str, value: str | int) -> bytes:
    """KeyValue: key = 1, value = 2."""
    return _len_field(1, key.encode("utf-8")) + _len_field(2, _any_value(value))


def _attributes(number: int, pairs: Sequence[tuple[str, str | int]]) -> bytes:
    return b"".join(_len_field(number, _key_value(k, v)) for k, v in pairs)


# The per-record part, written out for speed (this runs for every forwarded event): constant
# tags and attribute keys are encoded once.
def _key_prefix(key: str) -> bytes:
    """A KeyValue's key field and the value field's tag (its length follows)."""
    return _len_field(1, key.encode("ascii")) + _varint(2 << 3 | 2)


_K_RECORD_ID = _key_prefix("domestique.record_id")
_K_KIND = _key_prefix("domestique.kind")
_K_ACTION = _key_prefix("domestique.action")
_K_CODES = _key_prefix("domestique.codes")
_K_CLASS = _key_prefix("ocsf.class_uid")
_K_SEQ = _key_prefix("domestique.seq")
_TAG_ATTR = _varint(6 << 3 | 2)
_TAG_TIME = _varint(1 << 3 | 1)
_TAG_OBSERVED = _varint(11 << 3 | 1)
_TAG_BODY = _varint(5 << 3 | 2)
_EVENT_NAMES = {
    k: _len_field(12, f"domestique.{k}".encode("ascii")) for k in ("decision", "integrity")
}
_SEVERITIES: dict[tuple[int, str], bytes] = {}


def _str_attr(prefix: bytes, value: str) -> bytes:
    raw = value.encode("utf-8")
    any_value = b"\x0a" + _varint(len(raw)) + raw
    kv = prefix + _varint(len(any_value)) + any_value
    return _TAG_ATTR + _varint(len(kv)) + kv


def _int_attr(prefix: bytes, value: int) -> bytes:
    any_value = b"\x18" + _varint(value)
    kv = prefix + _varint(len(any_value)) + any_value
    return _TAG_ATTR + _varint(len(kv)) + kv


def encode_log_record(event: Event, observed_ns: int) -> bytes:
    """LogRecord: time_unix_nano 1, severity_number 2, severity_text 3, body 5, attributes 6,
    observed_time_unix_nano 11, event_name 12."""
    _, number, text = event.severity
    severity = _SEVERITIES.get((number, text))
    if severity is None:
        severity = _varint(2 << 3) + _varint(number) + _len_field(3, text.encode("ascii"))
        _SEVERITIES[(number, text)] = severity
    body = b"\x0a" + _varint(len(event.body)) + event.body  # AnyValue.string_value
    event_name = _EVENT_NAMES.get(event.kind) or _len_field(12, f"domestique.{event.kind}".encode())
    return b"".join(
        (
            _TAG_TIME,
            (max(0, event.time_ms) * 1_000_000).to_bytes(8, "little"),
            severity,
            _TAG_BODY,
            _varint(len(body)),
            body,
            _str_attr(_K_RECORD_ID, event.uid),
            _str_attr(_K_KIND, event.kind),
            _str_attr(_K_ACTION, event.action),
            _str_attr(_K_CODES, " ".join(event.codes)),
            _int_attr(_K_CLASS, event.class_uid),
            _int_attr(_K_SEQ, event.seq) if event.seq is not None else b"",
            _TAG_OBSERVED,
            observed_ns.to_bytes(8, "little"),
            event_name,
        )
    )


def resource_attributes(event: Event, instance: str, version: str) -> list[tuple[str, str | int]]:
    ep = event.endpoint
    pairs: list[tuple[str, str | int]] = [
        ("service.name", SERVICE_NAME),
        ("service.version", version),
        ("service.instance.id", instance),
        ("domestique.endpoint.id", ep.id),
    ]
    pairs += [
        (k, v)
        for k, v in (
            ("host.name", ep.host),
            ("user.name", ep.user),
            ("os.description", ep.os),
            ("domestique.endpoint.version", ep.version),
        )
        if v
    ]
    return pairs


def encode_request(events: Sequence[Event], *, instance: str, version: str, now_ns: int) -> bytes:
    """ExportLogsServiceRequest: resource_logs = 1 → ResourceLogs(resource = 1, scope_logs = 2)
    → ScopeLogs(scope = 1, log_records = 2). One ResourceLogs per endpoint, in first-seen
    order; events keep their order within it."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        groups.setdefault(event.endpoint.id, []).append(event)
    scope = _len_field(1, SCOPE_NAME.encode("ascii")) + _len_field(2, version.encode("utf-8"))
    out: list[bytes] = []
    for group in groups.values():
        resource = _attributes(1, resource_attributes(group[0], instance, version))
        records = b"".join([_len_field(2, encode_log_record(e, now_ns)) for e in group])
        scope_logs = _len_field(1, scope) + records
        out.append(_len_field(1, _len_field(1, resource) + _len_field(2, scope_logs)))
    return b"".join(out)


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of a message's top-level fields (varint and length only)."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        tag, i = _read_varint(data, i)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, i = _read_varint(data, i)
        elif wire == 2:
            size, i = _read_varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError("unsupported wire type")
        out.append((number, wire, value))
    return out


def rejected_count(response: bytes) -> tuple[int, str]:
    """ExportLogsServiceResponse.partial_success (1): (rejected_log_records 1, error_message 2)."""
    rejected, message = 0, ""
    try:
        for number, wire, value in _fields(response):
            if number == 1 and wire == 2:
                for n2, w2, v2 in _fields(value):
                    if n2 == 1 and w2 == 0:
                        rejected = int(v2)
                    elif n2 == 2 and w2 == 2:
                        message = bytes(v2).decode("utf-8", "replace")[:200]
    except ValueError:
        return 0, ""
    return rejected, message


class OtlpSink:
    """POSTs each batch to one OTLP/HTTP logs endpoint over a kept-alive connection."""

    def __init__(self, spec: SinkSpec) -> None:
        from domestique import __version__

        self.spec = spec
        self.version = __version__
        self.instance = f"{socket.gethostname()}:{os.getpid()}"
        self.last_partial: tuple[int, str] | None = None
        self._http = HttpPoster(spec, {"content-type": "application/x-protobuf"})

    def send(self, events: Sequence[Event]) -> None:
        if not events:
            return
        body = encode_request(
            events, instance=self.instance, version=self.version, now_ns=time.time_ns()
        )
        status, content = self._http.post(body, TIMEOUT_S)
        if status != 200:
            raise SinkError(
                "hub.sink.rejected",
                f"POST {self.spec.shown_url}: HTTP {status}"
                + ("" if status in RETRYABLE else " (a refusal: check the collector)"),
            )
        rejected, message = rejected_count(content)
        self.last_partial = (rejected, message) if rejected else None

    def close(self) -> None:
        self._http.close()
