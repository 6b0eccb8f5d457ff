"""Reason codes of the hub's SIEM forwarding (:mod:`domestique.hub.sinks`).

A sink failure never drops a record: the sink's cursor stays where it is, the code is stored
on the sink's row (``sinks.error_code``) and printed once on the hub's stderr, and the sink is
retried with capped backoff. ``hub.sink.config`` stops ``hub serve`` before it listens.
"""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "hub.sink.config",
        "The hub's sink configuration (--export-* or the config file) is invalid; the hub "
        "refuses to start rather than not forward.",
    ),
    ReasonCode(
        "hub.sink.unreachable",
        "A SIEM sink cannot be connected to or the connection broke (refused, timed out, reset); "
        "its cursor stays and it is retried with backoff.",
    ),
    ReasonCode(
        "hub.sink.tls",
        "A SIEM sink's TLS handshake failed (certificate not trusted, wrong host name); retried "
        "with backoff, nothing is sent in clear.",
    ),
    ReasonCode(
        "hub.sink.rejected",
        "A SIEM sink answered a batch with an error status (OTLP or HEC); the batch is not "
        "counted as delivered and is sent again after backoff.",
    ),
    ReasonCode(
        "hub.sink.partial",
        "An OTLP receiver accepted a batch but reported some log records rejected (partial "
        "success); per the OTLP specification they are not re-sent.",
    ),
    ReasonCode(
        "hub.sink.internal",
        "The sink's forwarder failed in a way it does not know (a bug: an event it could not "
        "encode, an unexpected error from a client library); the cursor stays and it is retried "
        "with backoff instead of the forwarder stopping.",
    ),
    ReasonCode(
        "hub.sink.store",
        "The sink's forwarder could not read the central store or move its cursor; retried "
        "with backoff (what was sent may be sent again: at-least-once).",
    ),
)
