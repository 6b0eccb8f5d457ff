"""Reason codes of the firewall proxy."""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode("proxy.unknown_route", "A method, route or upgrade the firewall does not scan."),
    ReasonCode("proxy.unsupported_encoding", "A Content-Encoding the firewall cannot decode."),
)
