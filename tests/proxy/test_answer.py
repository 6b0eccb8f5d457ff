"""Restoring answers: non-streamed bodies and every provider's SSE format, one char per event."""

from __future__ import annotations

import json

import pytest

from domestique.proxy.answer import (
    AnswerStream,
    JsonArrayStream,
    response_id_of,
    restore_body,
    stream_error_event,
)
from domestique.proxy.routes import Operation, Provider
from domestique.redact import PlaceholderMaker

from . import providers

M = PlaceholderMaker(b"a" * 32)
SECRET = 'ghp_Value"with\\quote'
PH = M.placeholder("secret.github_token", SECRET)
MAPPING = {PH: SECRET}
TEXT = f"Your token [is] {PH}, and again {PH} ["
ARGS = json.dumps({"command": f"echo {PH}", "n": 1})

FORMATS = {
    "anthropic": (Operation.ANTHROPIC_MESSAGES, Provider.ANTHROPIC),
    "chat": (Operation.OPENAI_CHAT, Provider.OPENAI),
    "responses": (Operation.OPENAI_RESPONSES, Provider.OPENAI),
    "gemini": (Operation.GEMINI_STREAM, Provider.GEMINI),
}


def _run(fmt: str, raw: bytes, step: int) -> bytes:
    op, prov = FORMATS[fmt]
    stream = AnswerStream(op, prov, MAPPING)
    out = b"".join(stream.feed(raw[i : i + step]) for i in range(0, len(raw), step))
    return out + stream.close()


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("step", [1, 7, 10_000])
def test_one_char_events_restore_text_and_tool_arguments(fmt: str, step: int) -> None:
    """Text and tool-call arguments streamed one character per event come back restored.

    Bytes are also fed in pieces of 1 and 7 bytes, so events are split mid-line too.
    """
    make, collect = providers.STREAMS[fmt]
    out = _run(fmt, make(TEXT, ARGS), step)
    text, args = collect(out)
    assert text == TEXT.replace(PH, SECRET)
    assert json.loads(args) == {"command": f"echo {SECRET}", "n": 1}
    assert PH.encode() not in out


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_stream_without_placeholders_is_byte_identical(fmt: str) -> None:
    """An answer with no ``[`` passes through byte for byte; with one, only text moves.

    A ``[`` may start a placeholder, so it is held until the next character says otherwise:
    the event boundaries shift by that character, the text the client assembles does not.
    """
    make, collect = providers.STREAMS[fmt]
    raw = make("plain answer (no placeholder)", json.dumps({"a": 1}))
    assert _run(fmt, raw, 5) == raw
    bracket = make("plain [not a placeholder] [", json.dumps({"a": "["}))
    assert collect(_run(fmt, bracket, 5)) == collect(bracket)


def test_responses_done_and_completed_events_are_restored_and_numbered() -> None:
    """Full texts in .done and response.completed are restored; sequence numbers stay in order."""
    out = _run("responses", providers.responses_stream(TEXT, ARGS), 3)
    datas = providers._datas(out)
    done = next(d for d in datas if d["type"] == "response.output_text.done")
    assert done["text"] == TEXT.replace(PH, SECRET)
    completed = next(d for d in datas if d["type"] == "response.completed")
    assert (
        json.loads(completed["response"]["output"][1]["arguments"])["command"] == f"echo {SECRET}"
    )
    providers.responses_collect(out)  # asserts consecutive sequence numbers


def test_responses_stream_reports_the_response_id() -> None:
    """The restorer reads the response id (for the previous_response_id vault)."""
    op, prov = FORMATS["responses"]
    stream = AnswerStream(op, prov, MAPPING)
    stream.feed(providers.responses_stream("x", "{}", rid="resp_42"))
    assert stream.response_id == "resp_42"


def test_thinking_deltas_are_never_touched() -> None:
    """A placeholder inside thinking stays: the signed block must come back unchanged."""
    raw = (
        "event: content_block_delta\n"
        'data: {"type":"content_block_delta","index":0,'
        '"delta":{"type":"thinking_delta","thinking":"' + PH + '"}}\n\n'
    ).encode()
    assert _run("anthropic", raw, 4) == raw


@pytest.mark.parametrize(
    ("body_fn", "get"),
    [
        (
            providers.anthropic_body,
            lambda b: (b["content"][0]["text"], b["content"][1]["input"]["command"]),
        ),
        (
            providers.chat_body,
            lambda b: (
                b["choices"][0]["message"]["content"],
                json.loads(b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])[
                    "command"
                ],
            ),
        ),
        (
            providers.responses_body,
            lambda b: (
                b["output"][0]["content"][0]["text"],
                json.loads(b["output"][1]["arguments"])["command"],
            ),
        ),
        (
            providers.gemini_body,
            lambda b: (
                b["candidates"][0]["content"]["parts"][0]["text"],
                b["candidates"][0]["content"]["parts"][1]["functionCall"]["args"]["command"],
            ),
        ),
    ],
)
def test_non_streamed_bodies_are_restored(body_fn, get) -> None:  # type: ignore[no-untyped-def]
    """Whole answers: text restored, JSON-string arguments restored with proper escaping."""
    raw = json.dumps(body_fn(TEXT, ARGS)).encode()
    text, command = get(json.loads(restore_body(raw, MAPPING)))
    assert text == TEXT.replace(PH, SECRET)
    assert command == f"echo {SECRET}"


def test_body_restoring_skips_thinking_and_non_json() -> None:
    """Thinking blocks keep their placeholders; a non-JSON body passes unchanged."""
    raw = json.dumps({"content": [{"type": "thinking", "thinking": PH, "signature": "s"}]}).encode()
    assert restore_body(raw, MAPPING) == raw
    assert restore_body(b"<html>" + PH.encode(), MAPPING) == b"<html>" + PH.encode()
    assert response_id_of(b'{"id": "resp_9"}') == "resp_9"


def test_legacy_completions_stream_text_is_restored() -> None:
    """/v1/completions chunks carry ``choices[].text``; split placeholders are restored."""
    chunks = [
        {
            "id": "c",
            "object": "text_completion",
            "choices": [{"index": 0, "text": ch, "finish_reason": None}],
        }
        for ch in f"say {PH} ["
    ]
    raw = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
    out = _run("chat", raw, 3)
    text = "".join(c["text"] for d in providers._datas(out) for c in d["choices"])
    assert text == f"say {SECRET} ["


@pytest.mark.parametrize(
    ("provider", "operation", "event", "check"),
    [
        (Provider.ANTHROPIC, Operation.ANTHROPIC_MESSAGES, "error", ("error", "type")),
        (Provider.OPENAI, Operation.OPENAI_RESPONSES, "error", ("message",)),
        (Provider.OPENAI, Operation.OPENAI_CHAT, None, ("error", "message")),
        (Provider.GEMINI, Operation.GEMINI_STREAM, None, ("error", "status")),
    ],
)
def test_stream_error_event_has_the_providers_shape(
    provider: Provider, operation: Operation, event: str | None, check: tuple[str, ...]
) -> None:
    """The error event that ends a broken stream is one SSE event in the provider's shape."""
    raw = stream_error_event(provider, operation, "cut [proxy.upstream_error]", 7)
    assert raw.endswith("\n\n")
    assert raw.count("\n\n") == 1
    lines = raw.strip().split("\n")
    assert (lines[0] == f"event: {event}") if event else lines[0].startswith("data: ")
    data = json.loads(lines[-1][len("data: ") :])
    value = data
    for key in check:
        value = value[key]
    assert value
    if operation is Operation.OPENAI_RESPONSES:
        assert (data["type"], data["sequence_number"]) == ("error", 7)


def test_abort_releases_held_text_restored_then_the_error() -> None:
    """A held placeholder prefix is released (restored) before the error; a cut event is dropped."""
    maker = PlaceholderMaker(b"k" * 32)
    mapping: dict[str, str] = {}
    ph = maker.placeholder("secret.github_token", "ghp_value")
    mapping[ph] = "ghp_value"
    stream = AnswerStream(Operation.ANTHROPIC_MESSAGES, Provider.ANTHROPIC, mapping)
    delta = {"type": "content_block_delta", "index": 0}
    out = stream.feed(
        b"event: content_block_delta\ndata: "
        + json.dumps({**delta, "delta": {"type": "text_delta", "text": ph}}).encode()
        + b"\n\nevent: content_block_delta\ndata: "
        + json.dumps({**delta, "delta": {"type": "text_delta", "text": ph[:5]}}).encode()
        + b'\n\nevent: content_block_delta\ndata: {"type": "content_bl'
    )
    tail = stream.abort("cut")
    assert b"ghp_value" in out
    assert tail.count(b"\n\n") == 2  # the held "[REDA" as a delta, then the error event
    assert b"[REDA" in tail
    assert tail.endswith(b"\n\n")
    assert b"cut-off-marker" not in tail
    assert b"event: error" in tail


def _run_array(raw: bytes, step: int, mapping: dict[str, str] | None = None) -> bytes:
    stream = JsonArrayStream(
        AnswerStream(
            Operation.GEMINI_STREAM, Provider.GEMINI, MAPPING if mapping is None else mapping
        )
    )
    out = b"".join(stream.feed(raw[i : i + step]) for i in range(0, len(raw), step))
    return out + stream.close()


@pytest.mark.parametrize("step", [1, 7, 10_000])
def test_gemini_json_array_stream_is_restored_element_by_element(step: int) -> None:
    """Without alt=sse Gemini streams one JSON array; one character per element is restored."""
    raw = providers.gemini_array(TEXT, ARGS)
    out = _run_array(raw, step)
    text, args = providers.gemini_array_collect(out)
    assert text == TEXT.replace(PH, SECRET)
    assert json.loads(args) == {"command": f"echo {SECRET}", "n": 1}
    assert PH.encode() not in out


def test_gemini_json_array_elements_leave_as_they_complete() -> None:
    """An element is sent as soon as its closing brace arrives, not at the end of the array."""
    stream = JsonArrayStream(AnswerStream(Operation.GEMINI_STREAM, Provider.GEMINI, {}))
    first = stream.feed(b'[{"candidates": [{"index": 0, "content": {"parts": [{"text": "hi"}]}}]}')
    assert json.loads(first + b"]")[0]["candidates"][0]["content"]["parts"][0]["text"] == "hi"
    assert stream.feed(b",\r\n") == b""
    assert json.loads(first + stream.close()) == json.loads(first + b"]")


def test_gemini_json_array_abort_ends_with_an_error_element() -> None:
    """A broken array stream ends as a valid array whose last element is Google's error."""
    stream = JsonArrayStream(AnswerStream(Operation.GEMINI_STREAM, Provider.GEMINI, MAPPING))
    out = stream.feed(b'[{"candidates": []},\r\n{"candidates": [{"ind')
    out += stream.abort("cut [proxy.upstream_error]")
    value = json.loads(out)
    assert value[-1]["error"]["status"] == "UNAVAILABLE"
    assert len(value) == 2


def test_gemini_answer_not_shaped_as_an_array_is_restored_whole() -> None:
    """A JSON answer that is not an array of objects is held and restored as one body."""
    raw = json.dumps({"candidates": [{"content": {"parts": [{"text": PH}]}}]}).encode()
    out = _run_array(raw, 3)
    assert json.loads(out)["candidates"][0]["content"]["parts"][0]["text"] == SECRET
