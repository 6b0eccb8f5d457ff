"""The official ``anthropic`` SDK as a client of the firewall, against a stand-in provider.

Each scenario runs twice, once straight to the stand-in and once through the firewall, and
the SDK's results must be equal: the firewall changes nothing a client can see, except that a
secret in the prompt reaches the provider as a placeholder and comes back restored. (The
Anthropic API has no embeddings endpoint.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from .sdk_provider import Pair, run_pair

SECRET = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: redacted by the default policy
MODEL = "claude-stand-in"
TOOLS: list[Any] = [
    {
        "name": "run",
        "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
PROMPT = [{"role": "user", "content": f"deploy with key {SECRET} please"}]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with run_pair(tmp_path_factory.mktemp("sdk-anthropic")) as p:
        yield p


def _client(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="sk-ant-dev-key", max_retries=0)


def _both(pair: Pair, scenario: Callable[[anthropic.Anthropic], Any]) -> tuple[Any, Any]:
    """(result direct, result through the firewall); the secret never reached the stand-in
    on the firewall's run."""
    with _client(pair.direct) as c:
        direct = scenario(c)
    pair.stand_in.received.clear()
    with _client(pair.firewall) as c:
        through = scenario(c)
    assert pair.stand_in.received, "the firewall forwarded nothing"
    assert SECRET.encode() not in pair.stand_in.bodies()
    return direct, through


def test_messages_create(pair: Pair) -> None:
    """messages.create: equal results, the echo of the secret restored."""

    def scenario(c: anthropic.Anthropic) -> Any:
        return c.messages.create(model=MODEL, max_tokens=64, messages=PROMPT).model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through["content"][0]["text"] == f"You said: deploy with key {SECRET} please"
    assert b"[REDACTED:" in pair.stand_in.bodies()


def test_messages_stream(pair: Pair) -> None:
    """messages.stream: the text deltas (placeholders split across events) and the final
    message are what the SDK gets direct."""

    def scenario(c: anthropic.Anthropic) -> Any:
        with c.messages.stream(model=MODEL, max_tokens=64, messages=PROMPT) as stream:
            text = "".join(stream.text_stream)
            final = stream.get_final_message()
        return text, final.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert SECRET in through[0]


def test_tool_use(pair: Pair) -> None:
    """A tool call whose input carries the secret comes back with the secret restored."""

    def scenario(c: anthropic.Anthropic) -> Any:
        return c.messages.create(
            model=MODEL, max_tokens=64, messages=PROMPT, tools=TOOLS
        ).model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through["content"][0]["input"] == {"command": f"echo deploy with key {SECRET} please"}


def test_tool_use_streamed(pair: Pair) -> None:
    """Streamed tool input (input_json_delta pieces) is restored before the SDK parses it."""

    def scenario(c: anthropic.Anthropic) -> Any:
        with c.messages.stream(model=MODEL, max_tokens=64, messages=PROMPT, tools=TOOLS) as stream:
            return stream.get_final_message().model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert SECRET in through["content"][0]["input"]["command"]


def test_tool_round_trip(pair: Pair) -> None:
    """The tool's output (with the secret) goes back as a tool_result; the answer to it is
    the same through the firewall, secret restored."""

    def scenario(c: anthropic.Anthropic) -> Any:
        first = c.messages.create(model=MODEL, max_tokens=64, messages=PROMPT, tools=TOOLS)
        call = first.content[0]
        assert call.type == "tool_use"
        history: list[Any] = [
            *PROMPT,
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": f"ran {call.input['command']}",  # type: ignore[index]
                    }
                ],
            },
        ]
        second = c.messages.create(model=MODEL, max_tokens=64, messages=history, tools=TOOLS)
        return first.model_dump(), second.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert (
        through[1]["content"][0]["text"] == f"Tool said: ran echo deploy with key {SECRET} please"
    )


def test_count_tokens(pair: Pair) -> None:
    """messages.count_tokens is scanned and forwarded; the count is the one direct."""

    def scenario(c: anthropic.Anthropic) -> Any:
        return c.messages.count_tokens(model=MODEL, messages=PROMPT, tools=TOOLS).model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through["input_tokens"] > 0
    assert pair.stand_in.received[-1].path == "/v1/messages/count_tokens"


def test_models_list(pair: Pair) -> None:
    """models.list(): GET /v1/models, recognised as Anthropic's by its headers."""
    pages = {}
    for url in (pair.direct, pair.firewall):
        with _client(url) as c:
            pages[url] = [m.model_dump() for m in c.models.list()]
    assert pages[pair.firewall] == pages[pair.direct]
    assert pages[pair.firewall][0]["id"] == MODEL
    last = pair.stand_in.received[-1]
    assert (last.method, last.path.split("?")[0]) == ("GET", "/v1/models")


def test_models_retrieve(pair: Pair) -> None:
    """models.retrieve(id): GET /v1/models/{id}, as direct."""
    got = {}
    for url in (pair.direct, pair.firewall):
        with _client(url) as c:
            got[url] = c.models.retrieve(MODEL).model_dump()
    assert got[pair.firewall] == got[pair.direct]
    assert got[pair.firewall]["id"] == MODEL
    assert pair.stand_in.received[-1].path == f"/v1/models/{MODEL}"
