"""Error answers in each provider's own envelope, so the tool shows the refusal. Pure.

Anthropic: ``{"type":"error","error":{"type","message"}}``; OpenAI:
``{"error":{"message","type","param","code"}}``; Gemini: ``{"error":{"code","message","status"}}``.
Each also carries ``domestique: {action, reasons, record_id}`` so scripts can read the codes;
the message is one line naming the codes and what to do. Evidence previews are masked.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from domestique.proxy.routes import Provider
from domestique.records import Reason

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    500: "api_error",
    502: "api_error",
}
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    413: "INVALID_ARGUMENT",
    500: "INTERNAL",
    502: "UNAVAILABLE",
}
_OPENAI_TYPES = {403: "permission_error", 404: "not_found_error", 500: "server_error"}


WRITE_FAILED = "audit.write_failed"


def status_for(codes: Sequence[str]) -> int:
    """HTTP status for a block: 400 for bodies we cannot read, 413 for size, 403 otherwise.

    A decision whose record could not be written is a server failure (500) whatever else it
    found: the request was refused because the firewall could not keep its log, and a client
    may retry it once the store is back (a 403 would read as "this content is refused").
    """
    if WRITE_FAILED in codes:
        return 500
    first = codes[0] if codes else ""
    if first in ("proxy.body_too_large", "proxy.decompression_limit"):
        return 413
    if first in (
        "proxy.malformed_body",
        "proxy.truncated_body",
        "proxy.nesting_too_deep",
        "proxy.unsupported_encoding",
    ):
        return 400
    if first.startswith("engine.") or first == "audit.write_failed":
        return 500
    if first == "proxy.upstream_error":
        return 502
    return 403


def explain(reasons: Sequence[Reason], verb: str = "blocked") -> str:
    """One line: what was stopped, the codes, and where the first finding is."""
    codes = ", ".join(dict.fromkeys(r.code for r in reasons)) or "engine.internal_error"
    where = ""
    for r in reasons:
        if r.evidence:
            ev = r.evidence[0]
            where = f" at {ev.where}" + (f" ({ev.preview})" if ev.preview else "")
            break
    first = reasons[0].message if reasons else ""
    return f"Domestique firewall {verb} this request [{codes}]{where}: {first}"


def error_body(
    provider: Provider,
    status: int,
    reasons: Sequence[Reason],
    *,
    record_id: str | None = None,
    verb: str = "blocked",
) -> bytes:
    # A failed audit write leads: it is why this answer is a server error.
    reasons = sorted(reasons, key=lambda r: r.code != WRITE_FAILED)
    message = explain(reasons, verb)
    extra = {
        "action": "block",
        "reasons": [r.code for r in reasons],
        "record_id": record_id,
    }
    if provider is Provider.ANTHROPIC:
        body: dict[str, object] = {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
            "domestique": extra,
        }
    elif provider is Provider.GEMINI:
        body = {
            "error": {
                "code": status,
                "message": message,
                "status": _GEMINI_STATUS.get(status, "FAILED_PRECONDITION"),
            },
            "domestique": extra,
        }
    else:
        body = {
            "error": {
                "message": message,
                "type": _OPENAI_TYPES.get(status, "invalid_request_error"),
                "param": None,
                "code": reasons[0].code if reasons else "engine.internal_error",
            },
            "domestique": extra,
        }
    return json.dumps(body, ensure_ascii=False).encode("utf-8")
