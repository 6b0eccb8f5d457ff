"""Error answers: each provider's own envelope, with the codes and a one-line explanation."""

from __future__ import annotations

import json

from domestique.proxy.envelopes import error_body, explain, status_for
from domestique.proxy.routes import Provider
from domestique.records import Evidence, Reason

REASONS = (
    Reason(
        "records.customer",
        "records.customer at messages[0].content",
        (Evidence("messages[0].content", "ab…yz", "hmac-sha256:1"),),
    ),
)


def test_anthropic_envelope() -> None:
    """Anthropic: {type: error, error: {type, message}}; permission_error for a policy block."""
    body = json.loads(error_body(Provider.ANTHROPIC, 403, REASONS, record_id="r1"))
    assert body["type"] == "error"
    assert body["error"]["type"] == "permission_error"
    assert "records.customer" in body["error"]["message"]
    assert body["domestique"] == {
        "action": "block",
        "reasons": ["records.customer"],
        "record_id": "r1",
    }


def test_openai_envelope() -> None:
    """OpenAI: {error: {message, type, param, code}} with the first code as code."""
    body = json.loads(error_body(Provider.OPENAI, 404, (Reason("proxy.unknown_route", "x"),)))
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["code"] == "proxy.unknown_route"


def test_gemini_envelope() -> None:
    """Gemini: {error: {code, message, status}}."""
    body = json.loads(error_body(Provider.GEMINI, 400, (Reason("proxy.malformed_body", "x"),)))
    assert body["error"]["code"] == 400
    assert body["error"]["status"] == "INVALID_ARGUMENT"


def test_explanation_is_one_line_with_masked_evidence() -> None:
    """The message names the codes and where, shows only the masked preview."""
    line = explain(REASONS)
    assert "\n" not in line
    assert "messages[0].content (ab…yz)" in line


def test_status_by_first_code() -> None:
    """Unreadable bodies 400, size 413, engine errors 500, policy blocks 403."""
    assert status_for(["proxy.malformed_body"]) == 400
    assert status_for(["proxy.decompression_limit"]) == 413
    assert status_for(["engine.internal_error"]) == 500
    assert status_for(["secret.x"]) == 403
