"""Restoring answers: non-streamed bodies and every provider's SSE format, one char per event."""

from __future__ import annotations

import json

import pytest

from domestique.proxy.answer import AnswerStream, response_id_of, restore_body
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
