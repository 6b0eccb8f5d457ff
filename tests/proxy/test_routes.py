"""Route classification: exactly the contract's routes are scanned; everything else refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.proxy.routes import Operation, Probe, Provider, Refusal, Route, classify


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
        "/v1/files",
        "/v1/fine_tuning/jobs",
        "/v1/responses/resp_1",
        "/v1/messages/batches",
        "/v1/messages/",
        "/v1//messages",
        "/v1/%6Dessages",
        "/v1/messages/../responses",
        "/v1/chat/completions/x",
        "/v1beta/models/gemini:predict",
        "/v1beta/models/gemini:countTokens/x",
        "/v1beta/models//x:generateContent",
        "/v1beta/models/a/./b:generateContent",
        "/v2/models/gemini:generateContent",
        "/v1beta/files/x:generateContent",
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


@pytest.mark.parametrize(
    ("path", "headers", "query", "provider", "operation", "model"),
    [
        (
            "/v1/responses/compact",
            {},
            "",
            Provider.OPENAI,
            Operation.OPENAI_RESPONSES_COMPACT,
            None,
        ),
        (
            "/v1/responses/input_tokens",
            {},
            "",
            Provider.OPENAI,
            Operation.OPENAI_RESPONSES_INPUT_TOKENS,
            None,
        ),
        ("/v1/moderations", {}, "", Provider.OPENAI, Operation.OPENAI_MODERATIONS, None),
        (
            "/v1/models/gemini-2.5-pro:generateContent",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_GENERATE,
            "gemini-2.5-pro",
        ),
        (
            "/v1alpha/models/gemini-2.5-pro:streamGenerateContent",
            {},
            "alt=sse",
            Provider.GEMINI,
            Operation.GEMINI_STREAM,
            "gemini-2.5-pro",
        ),
        (
            "/v1beta/models/gemini-2.5-flash:countTokens",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_COUNT_TOKENS,
            "gemini-2.5-flash",
        ),
        (
            "/v1/models/text-embedding-004:embedContent",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_EMBED,
            "text-embedding-004",
        ),
        (
            "/v1beta/models/gemini-embedding-001:batchEmbedContents",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_BATCH_EMBED,
            "gemini-embedding-001",
        ),
        (
            "/v1beta/tunedModels/my-model-123:generateContent",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_GENERATE,
            "tunedModels/my-model-123",
        ),
        (
            "/v1beta/models/google/gemma-3:generateContent",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_GENERATE,
            "google/gemma-3",
        ),
    ],
)
def test_content_routes_the_sdks_call_are_scanned(  # noqa: PLR0917 - parametrized
    path: str,
    headers: dict[str, str],
    query: str,
    provider: Provider,
    operation: Operation,
    model: str | None,
) -> None:
    """google-genai's default /v1, countTokens, embeddings, tuned and namespaced models,
    Responses compact and input_tokens: POST routes whose body is scanned."""
    route = classify("POST", path, headers, query)
    assert isinstance(route, Route)
    assert (route.provider, route.operation, route.model) == (provider, operation, model)
    assert route.carries_content


@pytest.mark.parametrize(
    ("path", "headers", "query", "provider", "operation", "model"),
    [
        ("/v1/models", {}, "", Provider.OPENAI, Operation.OPENAI_MODELS, None),
        ("/v1/models/gpt-5", {}, "", Provider.OPENAI, Operation.OPENAI_MODELS, "gpt-5"),
        (
            "/v1/models/ft:gpt-4o-mini:org::abc",
            {},
            "",
            Provider.OPENAI,
            Operation.OPENAI_MODELS,
            "ft:gpt-4o-mini:org::abc",
        ),
        (
            "/v1/models",
            {"anthropic-version": "2023-06-01"},
            "",
            Provider.ANTHROPIC,
            Operation.ANTHROPIC_MODELS,
            None,
        ),
        (
            "/v1/models/claude-x",
            {"x-api-key": "k"},
            "",
            Provider.ANTHROPIC,
            Operation.ANTHROPIC_MODELS,
            "claude-x",
        ),
        ("/v1/models", {"x-goog-api-key": "k"}, "", Provider.GEMINI, Operation.GEMINI_MODELS, None),
        (
            "/v1/models/gemini-2.5-pro",
            {},
            "key=k",
            Provider.GEMINI,
            Operation.GEMINI_MODELS,
            "gemini-2.5-pro",
        ),
        ("/v1beta/models", {}, "pageSize=50", Provider.GEMINI, Operation.GEMINI_MODELS, None),
        ("/v1beta/tunedModels", {}, "", Provider.GEMINI, Operation.GEMINI_MODELS, None),
        (
            "/v1beta/models/gemini-2.5-pro",
            {},
            "",
            Provider.GEMINI,
            Operation.GEMINI_MODELS,
            "gemini-2.5-pro",
        ),
    ],
)
def test_model_listing_and_lookup_pass_without_content(  # noqa: PLR0917 - parametrized
    path: str,
    headers: dict[str, str],
    query: str,
    provider: Provider,
    operation: Operation,
    model: str | None,
) -> None:
    """GET /v1/models (OpenAI, Anthropic by its headers, Gemini by its key), /v1beta/models
    and one model's lookup: content-free routes of the provider the client speaks."""
    route = classify("GET", path, headers, query)
    assert isinstance(route, Route)
    assert (route.provider, route.operation, route.model) == (provider, operation, model)
    assert route.method == "GET"
    assert not route.carries_content
    assert isinstance(classify("POST", path, headers, query), Refusal)


@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_root_probe_is_answered_locally(method: str) -> None:
    """Claude Code's start-up ``HEAD /`` is a probe, not a refused route."""
    probe = classify(method, "/", {"anthropic-version": "2023-06-01"})
    assert isinstance(probe, Probe)
    assert probe.provider is Provider.ANTHROPIC
    assert isinstance(classify("POST", "/", {}), Refusal)


@settings(max_examples=400, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "HEAD", "PUT"]),
    path=st.one_of(
        st.text(alphabet="/v1betalphmodsunMG:.%-_AZ09?&\\", max_size=60),
        st.builds(
            "/{}/{}/{}{}".format,
            st.sampled_from(["v1", "v1beta", "v1alpha", "v2"]),
            st.sampled_from(["models", "tunedModels", "files"]),
            st.text(alphabet="ab1./%-_:", min_size=0, max_size=12),
            st.sampled_from(["", ":generateContent", ":countTokens", ":predict", "/"]),
        ),
    ),
    headers=st.sampled_from([{}, {"anthropic-version": "1"}, {"x-goog-api-key": "k"}]),
)
def test_any_route_taken_is_a_plain_path(method: str, path: str, headers: dict[str, str]) -> None:
    """Whatever the path, a route is only taken for a plain one: forwarded exactly as given,
    under /v1, /v1beta or /v1alpha, no empty, ``.`` or ``..`` segment, no encoding, no query."""
    decision = classify(method, path, headers)
    if isinstance(decision, Route):
        assert decision.path == path
        assert path.split("/")[1] in ("v1", "v1beta", "v1alpha")
        assert all(seg not in ("", ".", "..") for seg in path.split("/")[1:])
        assert not set("%?\\&") & set(path)
        assert decision.method == method
    elif isinstance(decision, Probe):
        assert path == "/"
    else:
        assert decision.code == "proxy.unknown_route"
