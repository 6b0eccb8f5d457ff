"""The official ``google-genai`` SDK as a client of the firewall, against a stand-in provider.

The SDK's default API version is ``v1`` (every call used to be refused); ``v1beta`` is
checked too. generate_content plain and streamed (``alt=sse``), a function call and its
round trip, count_tokens, embed_content (``:batchEmbedContents``) and models.list. Each
scenario runs straight to the stand-in and through the firewall; the results must be equal
(the SDK's copy of the HTTP headers aside), and a secret in the prompt reaches the provider
only as a placeholder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google import genai
from google.genai import types

from .sdk_provider import Pair, run_pair

SECRET = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: redacted by the default policy
MODEL = "gemini-stand-in"
PROMPT_TEXT = f"deploy with key {SECRET} please"
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="run",
                description="Run a shell command.",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                },
            )
        ]
    )
]
VERSIONS = ["v1", "v1beta"]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with run_pair(tmp_path_factory.mktemp("sdk-gemini")) as p:
        yield p


def _client(url: str, version: str | None) -> genai.Client:
    options = types.HttpOptions(base_url=url, api_version=version)
    return genai.Client(api_key="gemini-dev-key", http_options=options)


def _dump(result: Any) -> Any:
    """A result as data, without ``sdk_http_response`` (the headers differ by design: the
    firewall adds its own and recomputes the length)."""
    return result.model_dump(mode="json", exclude={"sdk_http_response"})


def _both(
    pair: Pair, version: str | None, scenario: Callable[[genai.Client], Any]
) -> tuple[Any, Any]:
    """(result direct, result through the firewall); the secret never reached the stand-in
    on the firewall's run, and every request went to the expected API version."""
    with _client(pair.direct, version) as c:
        direct = scenario(c)
    pair.stand_in.received.clear()
    with _client(pair.firewall, version) as c:
        through = scenario(c)
    assert pair.stand_in.received, "the firewall forwarded nothing"
    assert SECRET.encode() not in pair.stand_in.bodies()
    expected = f"/{version or 'v1'}/"
    assert all(r.path.startswith(expected) for r in pair.stand_in.received)
    return direct, through


def test_default_api_version_is_v1(pair: Pair) -> None:
    """The SDK's default (no api_version given) is /v1/: forwarded, not refused."""

    def scenario(c: genai.Client) -> Any:
        return _dump(c.models.generate_content(model=MODEL, contents=PROMPT_TEXT))

    direct, through = _both(pair, None, scenario)
    assert through == direct
    assert through["candidates"][0]["content"]["parts"][0]["text"] == f"You said: {PROMPT_TEXT}"


@pytest.mark.parametrize("version", VERSIONS)
def test_generate_content(pair: Pair, version: str) -> None:
    """generate_content: equal results, the echo of the secret restored."""

    def scenario(c: genai.Client) -> Any:
        response = c.models.generate_content(
            model=MODEL,
            contents=PROMPT_TEXT,
            config=types.GenerateContentConfig(system_instruction="Be terse."),
        )
        return response.text, _dump(response)

    direct, through = _both(pair, version, scenario)
    assert through == direct
    assert through[0] == f"You said: {PROMPT_TEXT}"
    assert b"[REDACTED:" in pair.stand_in.bodies()


@pytest.mark.parametrize("version", VERSIONS)
def test_generate_content_stream(pair: Pair, version: str) -> None:
    """generate_content_stream (SSE, placeholders split across chunks): the chunks' text
    joins to what the SDK gets direct."""

    def scenario(c: genai.Client) -> Any:
        chunks = list(c.models.generate_content_stream(model=MODEL, contents=PROMPT_TEXT))
        return "".join(ch.text or "" for ch in chunks), _dump(chunks[-1])["usage_metadata"]

    direct, through = _both(pair, version, scenario)
    assert through == direct
    assert through[0] == f"You said: {PROMPT_TEXT}"


@pytest.mark.parametrize("version", VERSIONS)
def test_function_call_round_trip(pair: Pair, version: str) -> None:
    """A functionCall with the secret in its args comes back restored; the functionResponse
    carrying it goes up redacted; the answer to it is equal, restored."""
    config = types.GenerateContentConfig(
        tools=TOOLS,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )

    def scenario(c: genai.Client) -> Any:
        user = types.Content(role="user", parts=[types.Part(text=PROMPT_TEXT)])
        first = c.models.generate_content(model=MODEL, contents=[user], config=config)
        calls = first.function_calls or []
        assert len(calls) == 1
        args = calls[0].args or {}
        reply = types.Part.from_function_response(
            name="run", response={"output": f"ran {args['command']}"}
        )
        model_turn = first.candidates[0].content if first.candidates else None
        assert model_turn is not None
        contents = [user, model_turn, types.Content(role="user", parts=[reply])]
        second = c.models.generate_content(model=MODEL, contents=contents, config=config)
        return _dump(first), second.text, _dump(second)

    direct, through = _both(pair, version, scenario)
    assert through == direct
    call = through[0]["candidates"][0]["content"]["parts"][0]["function_call"]
    assert call["args"] == {"command": f"echo {PROMPT_TEXT}"}
    assert through[1] == f"Tool said: ran echo {PROMPT_TEXT}"


@pytest.mark.parametrize("version", VERSIONS)
def test_count_tokens(pair: Pair, version: str) -> None:
    """count_tokens (``:countTokens``): scanned and forwarded; the count is the one direct."""

    def scenario(c: genai.Client) -> Any:
        return _dump(c.models.count_tokens(model=MODEL, contents=PROMPT_TEXT))

    direct, through = _both(pair, version, scenario)
    assert through == direct
    assert through["total_tokens"] > 0
    assert pair.stand_in.received[-1].path.endswith(f"models/{MODEL}:countTokens")


@pytest.mark.parametrize("version", VERSIONS)
def test_embed_content(pair: Pair, version: str) -> None:
    """embed_content (``:batchEmbedContents``): the texts are scanned; vectors as direct."""

    def scenario(c: genai.Client) -> Any:
        result = c.models.embed_content(
            model="embedding-stand-in", contents=[PROMPT_TEXT, "a second text"]
        )
        return _dump(result)

    direct, through = _both(pair, version, scenario)
    assert through == direct
    assert len(through["embeddings"]) == 2
    assert pair.stand_in.received[-1].path.endswith(":batchEmbedContents")


@pytest.mark.parametrize("version", VERSIONS)
def test_models_list(pair: Pair, version: str) -> None:
    """models.list(): GET /{version}/models, forwarded as Gemini's by its x-goog-api-key."""
    pages = {}
    for url in (pair.direct, pair.firewall):
        with _client(url, version) as c:
            pages[url] = [_dump(m) for m in c.models.list()]
    assert pages[pair.firewall] == pages[pair.direct]
    assert pages[pair.firewall][0]["name"] == f"models/{MODEL}"
    last = pair.stand_in.received[-1]
    assert (last.method, last.path.split("?")[0]) == ("GET", f"/{version}/models")


@pytest.mark.parametrize("version", VERSIONS)
def test_models_get(pair: Pair, version: str) -> None:
    """models.get(model): GET /{version}/models/{model}, as direct."""
    got = {}
    for url in (pair.direct, pair.firewall):
        with _client(url, version) as c:
            got[url] = _dump(c.models.get(model=MODEL))
    assert got[pair.firewall] == got[pair.direct]
    assert got[pair.firewall]["name"] == f"models/{MODEL}"
    assert pair.stand_in.received[-1].path.split("?")[0] == f"/{version}/models/{MODEL}"
