"""The official ``openai`` SDK as a client of the firewall, against a stand-in provider.

Chat Completions and Responses, plain and streamed, with tools and a tool round trip, plus
``responses.input_tokens.count``, embeddings and ``models.list``. Each scenario runs straight
to the stand-in and through the firewall; the SDK's results must be equal, and a secret in
the prompt reaches the provider only as a placeholder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from .sdk_provider import Pair, run_pair

SECRET = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: redacted by the default policy
MODEL = "gpt-stand-in"
PROMPT_TEXT = f"deploy with key {SECRET} please"
CHAT: list[Any] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": PROMPT_TEXT},
]
CHAT_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
RESPONSES_TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "run",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        "strict": False,
    }
]
RESPONSES_INPUT: list[Any] = [{"role": "user", "content": PROMPT_TEXT}]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    with run_pair(tmp_path_factory.mktemp("sdk-openai")) as p:
        yield p


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="sk-dev-key", max_retries=0)


def _both(pair: Pair, scenario: Callable[[openai.OpenAI], Any]) -> tuple[Any, Any]:
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


# -- Chat Completions --------------------------------------------------------------------------
def test_chat_create(pair: Pair) -> None:
    """chat.completions.create: equal results, the echo of the secret restored."""

    def scenario(c: openai.OpenAI) -> Any:
        return c.chat.completions.create(model=MODEL, messages=CHAT).model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through["choices"][0]["message"]["content"] == f"You said: {PROMPT_TEXT}"
    assert b"[REDACTED:" in pair.stand_in.bodies()


def test_chat_stream(pair: Pair) -> None:
    """chat.completions.stream: the SDK's accumulated completion is the one direct."""

    def scenario(c: openai.OpenAI) -> Any:
        with c.chat.completions.stream(model=MODEL, messages=CHAT) as stream:
            deltas = [e.delta for e in stream if e.type == "content.delta"]
            final = stream.get_final_completion()
        return "".join(deltas), final.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through[0] == f"You said: {PROMPT_TEXT}"


def test_chat_tool_call(pair: Pair) -> None:
    """A tool call's JSON arguments carry the secret back, restored (plain and streamed)."""

    def scenario(c: openai.OpenAI) -> Any:
        plain = c.chat.completions.create(model=MODEL, messages=CHAT, tools=CHAT_TOOLS)
        with c.chat.completions.stream(model=MODEL, messages=CHAT, tools=CHAT_TOOLS) as stream:
            streamed = stream.get_final_completion()
        return plain.model_dump(), streamed.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    for result in through:
        call = result["choices"][0]["message"]["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"command": f"echo {PROMPT_TEXT}"}


def test_chat_tool_round_trip(pair: Pair) -> None:
    """The tool's output goes back as a ``tool`` message; the answer is equal, restored."""

    def scenario(c: openai.OpenAI) -> Any:
        first = c.chat.completions.create(model=MODEL, messages=CHAT, tools=CHAT_TOOLS)
        message = first.choices[0].message
        call = message.tool_calls[0] if message.tool_calls else None
        assert call is not None
        assert call.type == "function"
        output = "ran " + json.loads(call.function.arguments)["command"]
        history: list[Any] = [
            *CHAT,
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": output},
        ]
        second = c.chat.completions.create(model=MODEL, messages=history, tools=CHAT_TOOLS)
        # The usage of the second answer is left out: see the strict xfail below.
        return first.model_dump(), second.choices[0].model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    answer = through[1]["message"]["content"]
    assert answer == f"Tool said: ran echo {PROMPT_TEXT}"


def test_redacted_tool_arguments_keep_their_text(pair: Pair) -> None:
    """Only the secret changes in the tool-call arguments sent back: the rest of the string,
    spacing included, is forwarded as the SDK wrote it."""
    arguments = json.dumps({"command": f"echo {PROMPT_TEXT}"})  # '{"command": "echo …"}'
    call = {
        "id": "call_01",
        "type": "function",
        "function": {"name": "run", "arguments": arguments},
    }
    history: list[Any] = [*CHAT, {"role": "assistant", "tool_calls": [call]}]
    history.append({"role": "tool", "tool_call_id": "call_01", "content": "done"})
    pair.stand_in.received.clear()
    with _client(pair.firewall) as c:
        c.chat.completions.create(model=MODEL, messages=history)
    sent = json.loads(pair.stand_in.received[-1].body)["messages"][2]["tool_calls"][0]
    forwarded = sent["function"]["arguments"]
    assert SECRET not in forwarded
    assert re.sub(r"\[REDACTED:[a-z0-9_]+:[0-9a-f]{8}\]", SECRET, forwarded) == arguments


# -- Responses ---------------------------------------------------------------------------------
def test_responses_create(pair: Pair) -> None:
    """responses.create: equal results, output_text restored."""

    def scenario(c: openai.OpenAI) -> Any:
        response = c.responses.create(model=MODEL, input=RESPONSES_INPUT, instructions="Be terse.")
        return response.output_text, response.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through[0] == f"You said: {PROMPT_TEXT}"


def test_responses_stream(pair: Pair) -> None:
    """responses.stream: text deltas and the final response as direct."""

    def scenario(c: openai.OpenAI) -> Any:
        with c.responses.stream(model=MODEL, input=RESPONSES_INPUT) as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
        return "".join(deltas), final.model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through[0] == f"You said: {PROMPT_TEXT}"


def test_responses_tool_round_trip(pair: Pair) -> None:
    """function_call (plain and streamed), then function_call_output: equal, restored."""

    def scenario(c: openai.OpenAI) -> Any:
        first = c.responses.create(model=MODEL, input=RESPONSES_INPUT, tools=RESPONSES_TOOLS)
        with c.responses.stream(
            model=MODEL, input=RESPONSES_INPUT, tools=RESPONSES_TOOLS
        ) as stream:
            streamed = stream.get_final_response()
        call = first.output[0]
        assert call.type == "function_call"
        output = "ran " + json.loads(call.arguments)["command"]
        history: list[Any] = [
            *RESPONSES_INPUT,
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": output},
        ]
        second = c.responses.create(model=MODEL, input=history, tools=RESPONSES_TOOLS)
        return first.model_dump(), streamed.model_dump(), second.output_text

    direct, through = _both(pair, scenario)
    assert through == direct
    assert json.loads(through[0]["output"][0]["arguments"]) == {"command": f"echo {PROMPT_TEXT}"}
    assert through[1]["output"][0]["arguments"] == through[0]["output"][0]["arguments"]
    assert through[2] == f"Tool said: ran echo {PROMPT_TEXT}"


def test_responses_input_tokens(pair: Pair) -> None:
    """responses.input_tokens.count: POST /v1/responses/input_tokens, scanned and forwarded."""

    def scenario(c: openai.OpenAI) -> Any:
        return c.responses.input_tokens.count(model=MODEL, input=RESPONSES_INPUT).model_dump()

    direct, through = _both(pair, scenario)
    assert through == direct
    assert through["input_tokens"] > 0
    assert pair.stand_in.received[-1].path == "/v1/responses/input_tokens"


# -- embeddings and models ---------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["float", "base64"])
def test_embeddings(pair: Pair, encoding: str) -> None:
    """embeddings.create: the input is scanned; the vectors are what the SDK gets direct."""

    def scenario(c: openai.OpenAI) -> Any:
        return c.embeddings.create(
            model="embed-stand-in",
            input=[PROMPT_TEXT, "a second input"],
            encoding_format=encoding,  # type: ignore[arg-type]
        ).model_dump(warnings=False)  # base64: the SDK hands the strings back undecoded

    direct, through = _both(pair, scenario)
    assert through == direct
    assert len(through["data"]) == 2


def test_models_list(pair: Pair) -> None:
    """models.list(): GET /v1/models reaches OpenAI's upstream, as direct."""
    pages = {}
    for url in (pair.direct, pair.firewall):
        with _client(url) as c:
            pages[url] = [m.model_dump() for m in c.models.list()]
    assert pages[pair.firewall] == pages[pair.direct]
    assert pages[pair.firewall][0]["id"] == MODEL
    last = pair.stand_in.received[-1]
    assert (last.method, last.path) == ("GET", "/v1/models")


def test_models_retrieve(pair: Pair) -> None:
    """models.retrieve(id): GET /v1/models/{id}, as direct."""
    got = {}
    for url in (pair.direct, pair.firewall):
        with _client(url) as c:
            got[url] = c.models.retrieve(MODEL).model_dump()
    assert got[pair.firewall] == got[pair.direct]
    assert got[pair.firewall]["id"] == MODEL
    assert pair.stand_in.received[-1].path == f"/v1/models/{MODEL}"
