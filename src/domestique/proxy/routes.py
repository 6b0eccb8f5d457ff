"""Route classification: which provider and operation a request is, or why it is refused.

Pure. The firewall knows every documented endpoint of the three APIs that the official SDKs
(anthropic, openai, google-genai) and the agent CLIs call, in two kinds:

* **content** routes (``POST``): the body is text bound for a model (messages, prompts, inputs
  to count or embed); it is scanned, redacted or blocked, and forwarded;
* **content-free** routes (``GET`` model listing and lookup): no body at all (a body is
  refused); forwarded after the policy is asked, and recorded.

A ``HEAD /`` or ``GET /`` is a connectivity probe (Claude Code sends one at start-up): the
firewall answers it itself, nothing is forwarded. Every other method, path or upgrade is
refused (``proxy.unknown_route``) in the error shape of the provider the client most likely
speaks, so the tool shows the refusal instead of a crash. Paths match exactly: no
normalisation, no ``..`` or empty segment, no trailing slash, no encoded characters, so the
path that was classified is the path that is forwarded.
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
    """The request shapes the firewall knows."""

    ANTHROPIC_MESSAGES = "anthropic.messages"
    ANTHROPIC_COUNT_TOKENS = "anthropic.count_tokens"
    ANTHROPIC_MODELS = "anthropic.models"
    OPENAI_CHAT = "openai.chat_completions"
    OPENAI_RESPONSES = "openai.responses"
    OPENAI_RESPONSES_COMPACT = "openai.responses.compact"
    OPENAI_RESPONSES_INPUT_TOKENS = "openai.responses.input_tokens"
    OPENAI_COMPLETIONS = "openai.completions"
    OPENAI_EMBEDDINGS = "openai.embeddings"
    OPENAI_MODERATIONS = "openai.moderations"
    OPENAI_MODELS = "openai.models"
    GEMINI_GENERATE = "gemini.generate_content"
    GEMINI_STREAM = "gemini.stream_generate_content"
    GEMINI_COUNT_TOKENS = "gemini.count_tokens"
    GEMINI_EMBED = "gemini.embed_content"
    GEMINI_BATCH_EMBED = "gemini.batch_embed_contents"
    GEMINI_MODELS = "gemini.models"


# Model listing and lookup: nothing in them is bound for a model.
CONTENT_FREE = frozenset(
    {Operation.ANTHROPIC_MODELS, Operation.OPENAI_MODELS, Operation.GEMINI_MODELS}
)


@dataclass(frozen=True, slots=True)
class Route:
    """A request the firewall judges and forwards."""

    provider: Provider
    operation: Operation
    path: str  # the path forwarded upstream (no query; the query is forwarded as is)
    model: str | None = None  # from the path (Gemini); otherwise read from the body
    method: str = "POST"

    @property
    def carries_content(self) -> bool:
        """True when the body is scanned; False for a route that must have no body at all."""
        return self.operation not in CONTENT_FREE


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused before its body is read."""

    provider: Provider  # whose error shape the answer uses
    status: int
    message: str
    code: str = "proxy.unknown_route"


@dataclass(frozen=True, slots=True)
class Probe:
    """A connectivity probe (``HEAD /``, ``GET /``): answered by the firewall, never forwarded."""

    provider: Provider
    method: str


_POST: dict[str, tuple[Provider, Operation]] = {
    "/v1/messages": (Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES),
    "/v1/messages/count_tokens": (Provider.ANTHROPIC, Operation.ANTHROPIC_COUNT_TOKENS),
    "/v1/chat/completions": (Provider.OPENAI, Operation.OPENAI_CHAT),
    "/v1/responses": (Provider.OPENAI, Operation.OPENAI_RESPONSES),
    "/v1/responses/compact": (Provider.OPENAI, Operation.OPENAI_RESPONSES_COMPACT),
    "/v1/responses/input_tokens": (Provider.OPENAI, Operation.OPENAI_RESPONSES_INPUT_TOKENS),
    "/v1/completions": (Provider.OPENAI, Operation.OPENAI_COMPLETIONS),
    "/v1/embeddings": (Provider.OPENAI, Operation.OPENAI_EMBEDDINGS),
    "/v1/moderations": (Provider.OPENAI, Operation.OPENAI_MODERATIONS),
}
_GEMINI_METHODS: dict[str, Operation] = {
    "generateContent": Operation.GEMINI_GENERATE,
    "streamGenerateContent": Operation.GEMINI_STREAM,
    "countTokens": Operation.GEMINI_COUNT_TOKENS,
    "embedContent": Operation.GEMINI_EMBED,
    "batchEmbedContents": Operation.GEMINI_BATCH_EMBED,
}
# One model-name segment: letters, digits, dot, dash, underscore, starting with a letter or
# digit (so never ``.`` or ``..``). A name may be namespaced (``models/org/name``): up to four
# segments. ``tunedModels/…`` names are the developer's tuned models.
_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_GEMINI_VERSION = r"/(?P<version>v1|v1beta|v1alpha)"
_GEMINI_NAME = rf"(?P<name>(?:models|tunedModels)/{_SEGMENT}(?:/{_SEGMENT}){{0,3}})"
_GEMINI_CALL = re.compile(rf"{_GEMINI_VERSION}/{_GEMINI_NAME}:(?P<method>[A-Za-z]{{1,40}})")
_GEMINI_LOOKUP = re.compile(rf"{_GEMINI_VERSION}/(?:models|tunedModels|{_GEMINI_NAME})")
# OpenAI model ids may hold colons (fine-tuned: ``ft:gpt-4o-mini:org::id``).
_MODEL_LOOKUP = re.compile(r"/v1/models(?:/[A-Za-z0-9][A-Za-z0-9._:-]{0,255})?")
_KEY_PARAM = re.compile(r"(?:^|&)key=")
_PROBE_PATHS = frozenset({"/"})


def guess_provider(path: str, headers: Mapping[str, str]) -> Provider:
    """The provider whose error shape a refused request should get."""
    if path.startswith("/v1/messages") or "anthropic-version" in headers:
        return Provider.ANTHROPIC
    if path.startswith(("/v1beta", "/v1alpha", "/upload/")) or "x-goog-api-key" in headers:
        return Provider.GEMINI
    if "x-api-key" in headers:
        return Provider.ANTHROPIC
    if _GEMINI_CALL.fullmatch(path) or path.startswith("/v1/tunedModels"):
        return Provider.GEMINI
    return Provider.OPENAI


def _gemini_model(name: str) -> str:
    """The model as the body of other providers names it: ``models/x`` -> ``x``."""
    return name.removeprefix("models/")


def _classify_path(
    path: str, headers: Mapping[str, str], query: str
) -> tuple[Provider, Operation, str | None, str] | None:
    """(provider, operation, model from the path, the one method it takes) or None."""
    static = _POST.get(path)
    if static is not None:
        return static[0], static[1], None, "POST"
    match = _GEMINI_CALL.fullmatch(path)
    if match is not None:
        op = _GEMINI_METHODS.get(match.group("method"))
        if op is None:
            return None
        return Provider.GEMINI, op, _gemini_model(match.group("name")), "POST"
    match = _GEMINI_LOOKUP.fullmatch(path)
    provider = Provider.GEMINI
    if match is not None and match.group("version") == "v1" and "/tunedModels" not in path:
        # ``/v1/models[/{m}]`` is Gemini's, OpenAI's and Anthropic's: the client tells which.
        # google-genai and Gemini CLI send ``x-goog-api-key`` (or ``?key=``); the Anthropic
        # SDK and Claude Code send ``anthropic-version``; OpenAI clients neither.
        gemini = "x-goog-api-key" in headers or _KEY_PARAM.search(query) is not None
        provider = Provider.GEMINI if gemini else guess_provider(path, headers)
    if match is not None and provider is Provider.GEMINI:
        name = match.group("name")
        model = _gemini_model(name) if name else None
        return Provider.GEMINI, Operation.GEMINI_MODELS, model, "GET"
    if _MODEL_LOOKUP.fullmatch(path):
        model = path.removeprefix("/v1/models").removeprefix("/") or None
        if provider is Provider.ANTHROPIC:
            return provider, Operation.ANTHROPIC_MODELS, model, "GET"
        return Provider.OPENAI, Operation.OPENAI_MODELS, model, "GET"
    return None


def classify(
    method: str, path: str, headers: Mapping[str, str], query: str = ""
) -> Route | Refusal | Probe:
    """Classify one request by method, path (no query), lower-cased headers and query.

    A WebSocket (or any other) upgrade is refused with 404 at once: Codex then falls back to
    HTTP + SSE. A known path with another method is refused with 405.
    """
    if "upgrade" in headers:
        return Refusal(
            guess_provider(path, headers),
            404,
            f"upgrade to {headers['upgrade'][:32]!r} is not supported here; use HTTP",
        )
    if path in _PROBE_PATHS and method in ("HEAD", "GET"):
        return Probe(guess_provider(path, headers), method)
    found = _classify_path(path, headers, query)
    if found is None:
        return Refusal(guess_provider(path, headers), 404, "route not scanned by the firewall")
    provider, operation, model, allowed = found
    if method != allowed:
        return Refusal(provider, 405, f"method {method[:16]} not allowed on this route")
    return Route(provider, operation, path, model, method)
