"""Route classification: which provider and operation a request is, or why it is refused.

Pure. The firewall scans and forwards exactly the routes in DESIGN.md's command-line contract;
every other method, path or upgrade is refused (``proxy.unknown_route``) in the error shape of
the provider the client most likely speaks, so the tool shows the refusal instead of a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Provider(StrEnum):
    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    GEMINI = "gemini"


class Operation(StrEnum):
    """The request shapes the field extractor knows."""

    ANTHROPIC_MESSAGES = "anthropic.messages"
    ANTHROPIC_COUNT_TOKENS = "anthropic.count_tokens"
    OPENAI_CHAT = "openai.chat_completions"
    OPENAI_RESPONSES = "openai.responses"
    OPENAI_COMPLETIONS = "openai.completions"
    OPENAI_EMBEDDINGS = "openai.embeddings"
    GEMINI_GENERATE = "gemini.generate_content"
    GEMINI_STREAM = "gemini.stream_generate_content"


@dataclass(frozen=True, slots=True)
class Route:
    """A request the firewall scans and forwards."""

    provider: Provider
    operation: Operation
    path: str  # the path forwarded upstream (no query; the query is forwarded as is)
    model: str | None = None  # from the path (Gemini); otherwise read from the body


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused before its body is read."""

    provider: Provider  # whose error shape the answer uses
    status: int
    message: str
    code: str = "proxy.unknown_route"


_STATIC: dict[str, tuple[Provider, Operation]] = {
    "/v1/messages": (Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES),
    "/v1/messages/count_tokens": (Provider.ANTHROPIC, Operation.ANTHROPIC_COUNT_TOKENS),
    "/v1/chat/completions": (Provider.OPENAI, Operation.OPENAI_CHAT),
    "/v1/responses": (Provider.OPENAI, Operation.OPENAI_RESPONSES),
    "/v1/completions": (Provider.OPENAI, Operation.OPENAI_COMPLETIONS),
    "/v1/embeddings": (Provider.OPENAI, Operation.OPENAI_EMBEDDINGS),
}
# Model names: letters, digits, dot, dash, underscore (gemini-2.5-pro, tunedModels are not routed).
_GEMINI = re.compile(
    r"/v1beta/models/(?P<model>[A-Za-z0-9][A-Za-z0-9._-]{0,127})"
    r":(?P<method>generateContent|streamGenerateContent)"
)


def guess_provider(path: str, headers: Mapping[str, str]) -> Provider:
    """The provider whose error shape a refused request should get."""
    if path.startswith("/v1/messages") or "anthropic-version" in headers:
        return Provider.ANTHROPIC
    if path.startswith(("/v1beta", "/v1alpha", "/upload/v1beta")) or "x-goog-api-key" in headers:
        return Provider.GEMINI
    if "x-api-key" in headers:
        return Provider.ANTHROPIC
    return Provider.OPENAI


def classify(method: str, path: str, headers: Mapping[str, str]) -> Route | Refusal:
    """Classify one request by method, path (no query) and lower-cased headers.

    Only ``POST`` without an ``Upgrade`` header is ever a :class:`Route`. A WebSocket upgrade
    on ``/v1/responses`` is refused with 404 at once: Codex then falls back to HTTP + SSE.
    Paths are matched exactly: no normalisation, no ``..``, no trailing slash, no encoded
    characters, so the path that was classified is the path that is forwarded.
    """
    if "upgrade" in headers:
        return Refusal(
            guess_provider(path, headers),
            404,
            f"upgrade to {headers['upgrade'][:32]!r} is not supported here; use HTTP",
        )
    provider_op = _STATIC.get(path)
    model: str | None = None
    if provider_op is None:
        match = _GEMINI.fullmatch(path)
        if match is not None:
            model = match.group("model")
            op = (
                Operation.GEMINI_GENERATE
                if match.group("method") == "generateContent"
                else Operation.GEMINI_STREAM
            )
            provider_op = (Provider.GEMINI, op)
    if provider_op is None:
        return Refusal(guess_provider(path, headers), 404, "route not scanned by the firewall")
    if method != "POST":
        return Refusal(provider_op[0], 405, f"method {method[:16]} not allowed on this route")
    return Route(provider_op[0], provider_op[1], path, model)
