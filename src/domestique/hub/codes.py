"""Reason codes of the fleet hub and of an enrolled endpoint's sync.

``hub.integrity.*`` are integrity alerts the hub stores when an endpoint's hash chain does not
continue as it should; ``hub.auth.*``, ``hub.enroll.*`` and ``hub.batch.*`` are refusals the hub
answers and records; ``hub.bundle.*`` are policy bundles an endpoint (or ``hub publish``)
refused, keeping the last good one in force.
"""

from __future__ import annotations

from domestique.reason_codes import ReasonCode

REASON_CODES: tuple[ReasonCode, ...] = (
    ReasonCode(
        "hub.integrity.gap",
        "An endpoint's chain skipped sequence numbers: records between were never uploaded.",
    ),
    ReasonCode(
        "hub.integrity.fork",
        "An endpoint's chain does not continue from the last record the hub holds (the log was "
        "cut or rewritten and carried on).",
    ),
    ReasonCode(
        "hub.integrity.rewrite",
        "A record id the hub already holds arrived with different content.",
    ),
    ReasonCode(
        "hub.integrity.replay",
        "A record the hub already holds arrived again at another place in the chain.",
    ),
    ReasonCode(
        "hub.integrity.bad_hash",
        "A record's own hash does not match its content and predecessor (edited on the endpoint).",
    ),
    ReasonCode(
        "hub.integrity.truncated",
        "The endpoint's log now ends before records the hub already holds (tail cut, an old "
        "checkpoint put back).",
    ),
    ReasonCode("hub.auth.missing", "A hub call without an endpoint credential; refused (401)."),
    ReasonCode(
        "hub.auth.invalid", "A hub call with an unknown or wrong credential; refused (401)."
    ),
    ReasonCode("hub.auth.revoked", "A call from a revoked endpoint; refused (401) and recorded."),
    ReasonCode(
        "hub.enroll.bad_token",
        "An enrolment with an unknown, expired or used-up token; refused.",
    ),
    ReasonCode("hub.batch.malformed", "An upload that is not a well-formed batch; refused whole."),
    ReasonCode(
        "hub.batch.too_large",
        "An upload over the record-count or byte limit; refused whole.",
    ),
    ReasonCode(
        "hub.batch.gzip_bomb",
        "A compressed upload that expands past the byte limit; refused whole.",
    ),
    ReasonCode(
        "hub.batch.wrong_endpoint",
        "A batch claiming another endpoint's id than the credential's; refused whole.",
    ),
    ReasonCode(
        "hub.batch.unsupported_encoding",
        "An upload in a Content-Encoding other than gzip or none; refused.",
    ),
    ReasonCode(
        "hub.bundle.bad_signature",
        "A policy bundle whose signature does not verify against the pinned keys; the last "
        "good bundle stays in force.",
    ),
    ReasonCode(
        "hub.bundle.rollback",
        "A policy bundle older than the one installed; refused, the installed one stays.",
    ),
    ReasonCode(
        "hub.bundle.unreadable",
        "A policy bundle that cannot be parsed; refused, the last good bundle stays.",
    ),
    ReasonCode(
        "hub.bundle.wrong_org",
        "A policy bundle for another organisation; refused, the last good bundle stays.",
    ),
    ReasonCode(
        "hub.bundle.invalid_policy",
        "A policy bundle whose policy does not validate; refused at publish and at install.",
    ),
    ReasonCode(
        "hub.bundle.required",
        "The organisation requires a signed policy bundle and none is installed; every "
        "decision denies until one is.",
    ),
)
