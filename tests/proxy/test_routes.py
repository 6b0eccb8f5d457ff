"""Route classification: exactly the contract's routes are scanned; everything else refused."""

from __future__ import annotations

import pytest

from domestique.proxy.routes import Operation, Provider, Refusal, Route, classify


@pytest.mark.parametrize(
    ("path", "provider", "operation"),
    [
        ("/v1/messages", Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES),
        ("/v1/messages/count_tokens", Provider.ANTHROPIC, Operation.ANTHROPIC_COUNT_TOKENS),
        ("/v1/chat/completions", Provider.OPENAI, Operation.OPENAI_CHAT),
        ("/v1/responses", Provider.OPENAI, Operation.OPENAI_RESPONSES),
        ("/v1/completions", Provider.OPENAI, Operation.OPENAI_COMPLETIONS),
        ("/v1/embeddings", Provider.OPENAI, Operation.OPENAI_EMBEDDINGS),
        (
            "/v1beta/models/gemini-2.5-pro:generateContent",
            Provider.GEMINI,
            Operation.GEMINI_GENERATE,
        ),
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            Provider.GEMINI,
            Operation.GEMINI_STREAM,
        ),
    ],
)
def test_contract_routes_are_scanned(path: str, provider: Provider, operation: Operation) -> None:
    """Every POST route named in DESIGN.md classifies to its provider and operation."""
    route = classify("POST", path, {})
    assert isinstance(route, Route)
    assert (route.provider, route.operation, route.path) == (provider, operation, path)


def test_gemini_model_comes_from_the_path() -> None:
    """Gemini names the model in the path; the record reads it from there."""
    route = classify("POST", "/v1beta/models/gemini-2.5-pro:generateContent", {})
    assert isinstance(route, Route)
    assert route.model == "gemini-2.5-pro"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/models",
        "/v1/files",
        "/v1/messages/batches",
        "/v1/messages/",
        "/v1//messages",
        "/v1/%6Dessages",
        "/v1/messages/../responses",
        "/v1/chat/completions/x",
        "/v1beta/models/gemini:countTokens",
        "/v1beta/models/../x:generateContent",
        "/v1beta/models/gemini-2.5-pro:generateContent/extra",
        "/",
        "http://evil.example/v1/messages",
    ],
)
def test_other_paths_are_refused(path: str) -> None:
    """Paths match exactly: no normalisation, so nothing reaches an unscanned upstream route."""
    refusal = classify("POST", path, {})
    assert isinstance(refusal, Refusal)
    assert refusal.code == "proxy.unknown_route"
    assert refusal.status == 404


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])
def test_other_methods_are_refused_with_405(method: str) -> None:
    """Only POST is forwarded; another method on a known route is refused in its shape."""
    refusal = classify(method, "/v1/messages", {})
    assert isinstance(refusal, Refusal)
    assert (refusal.status, refusal.provider) == (405, Provider.ANTHROPIC)


def test_websocket_upgrade_on_responses_is_refused_with_404() -> None:
    """Codex's WebSocket attempt is refused with 404 so it falls back to HTTP + SSE."""
    refusal = classify("GET", "/v1/responses", {"upgrade": "websocket"})
    assert isinstance(refusal, Refusal)
    assert (refusal.status, refusal.provider, refusal.code) == (
        404,
        Provider.OPENAI,
        "proxy.unknown_route",
    )


def test_refusals_use_the_likely_providers_error_shape() -> None:
    """A refused request gets the envelope of the provider its path or headers point to."""
    assert classify("GET", "/v1/messages/batches", {}).provider is Provider.ANTHROPIC  # type: ignore[union-attr]
    assert classify("POST", "/v1beta/files", {}).provider is Provider.GEMINI  # type: ignore[union-attr]
    assert classify("POST", "/x", {"x-goog-api-key": "k"}).provider is Provider.GEMINI  # type: ignore[union-attr]
    assert classify("POST", "/x", {"x-api-key": "k"}).provider is Provider.ANTHROPIC  # type: ignore[union-attr]
    assert classify("POST", "/x", {}).provider is Provider.OPENAI  # type: ignore[union-attr]
