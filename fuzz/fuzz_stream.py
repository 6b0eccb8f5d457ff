"""Restoring placeholders in streamed answers, under any fragmentation of the bytes.

A provider-shaped SSE answer (Anthropic, OpenAI Chat, OpenAI Responses, Gemini) whose text holds
placeholders, split into events at arbitrary points (a placeholder cut across events), with LF
or CRLF line ends, is fed to ``AnswerStream`` in arbitrary byte pieces. Invariants: the output
is byte-identical however the input was cut (one piece, many, one byte at a time); the text the
client reads is exactly the original text with every placeholder replaced by its value; no
placeholder the vault knows reaches the client; and ``StreamEnd`` calls the whole answer
complete and any prefix that stops before the terminal event cut.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import strategies as st

from domestique.proxy.answer import AnswerStream
from domestique.proxy.routes import Operation, Provider
from domestique.proxy.stream_end import StreamEnd

from ._harness import Target

MAPPING = {
    "[REDACTED:aws_access_key:0a1b2c3d]": "AKIAZ3MHQX7B2LKWP4RN",
    "[REDACTED:github_token:deadbeef]": "ghp_" + "x" * 36,
}
PIECES = st.one_of(
    st.sampled_from([*MAPPING, "[", "[REDACTED:", "]", " ", "é", "\n"]), st.text(max_size=6)
)
KINDS = ("anthropic", "chat", "responses", "gemini")
OPS = {
    "anthropic": (Operation.ANTHROPIC_MESSAGES, Provider.ANTHROPIC),
    "chat": (Operation.OPENAI_CHAT, Provider.OPENAI),
    "responses": (Operation.OPENAI_RESPONSES, Provider.OPENAI),
    "gemini": (Operation.GEMINI_STREAM, Provider.GEMINI),
}


def _sse(event: str | None, data: Any, nl: str) -> str:
    head = f"event: {event}{nl}" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}{nl}{nl}"


def _events(kind: str, deltas: list[str], nl: str) -> list[str]:
    if kind == "anthropic":
        out = [
            _sse(
                "message_start",
                {"type": "message_start", "message": {"id": "m", "content": []}},
                nl,
            )
        ]
        out.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                nl,
            )
        )
        out += [
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": d},
                },
                nl,
            )
            for d in deltas
        ]
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}, nl))
        out.append(_sse("message_stop", {"type": "message_stop"}, nl))
    elif kind == "chat":
        out = [
            _sse(None, {"id": "c", "choices": [{"index": 0, "delta": {"content": d}}]}, nl)
            for d in deltas
        ]
        out.append(
            _sse(
                None,
                {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                nl,
            )
        )
        out.append(_sse(None, "[DONE]", nl))
    elif kind == "responses":
        out = [
            _sse(
                "response.created",
                {"type": "response.created", "sequence_number": 0, "response": {"id": "r"}},
                nl,
            )
        ]
        out += [
            _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": i + 1,
                    "item_id": "i",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": d,
                },
                nl,
            )
            for i, d in enumerate(deltas)
        ]
        out.append(
            _sse(
                "response.completed",
                {
                    "type": "response.completed",
                    "sequence_number": len(deltas) + 1,
                    "response": {"id": "r"},
                },
                nl,
            )
        )
    else:
        out = [
            _sse(
                None,
                {
                    "candidates": [
                        {"index": 0, "content": {"role": "model", "parts": [{"text": d}]}}
                    ]
                },
                nl,
            )
            for d in deltas
        ]
        out.append(
            _sse(
                None,
                {
                    "candidates": [
                        {
                            "index": 0,
                            "content": {"role": "model", "parts": [{"text": ""}]},
                            "finishReason": "STOP",
                        }
                    ]
                },
                nl,
            )
        )
    return out


def _text(kind: str, out: bytes) -> str:
    """The answer text a client assembles from the restored stream."""
    parts: list[str] = []
    for block in out.decode().replace("\r\n", "\n").split("\n\n"):
        for line in block.split("\n"):
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            d = json.loads(line[6:])
            if kind == "anthropic" and d.get("type") == "content_block_delta":
                parts.append(d["delta"]["text"])
            elif kind == "chat":
                parts += [c["delta"].get("content") or "" for c in d.get("choices", [])]
            elif kind == "responses" and d.get("type") == "response.output_text.delta":
                parts.append(d["delta"])
            elif kind == "gemini":
                for c in d.get("candidates", []):
                    parts += [p.get("text", "") for p in c.get("content", {}).get("parts", [])]
    return "".join(parts)


# (kind, deltas, line end, cut points)
Case = tuple[str, list[str], str, list[int]]


def _cases(corpus: list[bytes]) -> st.SearchStrategy[Case]:
    deltas = st.lists(st.lists(PIECES, max_size=4).map("".join), min_size=1, max_size=8)
    return st.tuples(
        st.sampled_from(KINDS),
        deltas,
        st.sampled_from(["\n", "\r\n"]),
        st.lists(st.integers(0, 4000), max_size=12),
    )


def _run(kind: str, data: bytes, cuts: list[int]) -> bytes:
    op, provider = OPS[kind]
    stream = AnswerStream(op, provider, MAPPING)
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    out = b"".join(stream.feed(data[a:b]) for a, b in itertools.pairwise(edges))
    return out + stream.close()


def check(case: Case) -> None:
    kind, deltas, nl, cuts = case
    events = _events(kind, deltas, nl)
    data = "".join(events).encode()
    whole = _run(kind, data, [])
    assert _run(kind, data, cuts) == whole, "the output depends on how the input was cut"
    if len(data) < 600:
        assert _run(kind, data, list(range(len(data)))) == whole, "byte-at-a-time differs"
    expected = "".join(deltas)
    for placeholder, value in MAPPING.items():
        expected = expected.replace(placeholder, value)
    assert _text(kind, whole) == expected, "restored text differs from the original"
    for placeholder in MAPPING:
        assert placeholder.encode() not in whole
    op, _ = OPS[kind]
    for upto, complete in ((len(events), True), (len(events) - 1, False), (1, False)):
        end = StreamEnd(op)
        prefix = "".join(events[:upto]).encode()
        edges = sorted({0, len(prefix), *(c % (len(prefix) + 1) for c in cuts)})
        for a, b in itertools.pairwise(edges):
            end.feed(prefix[a:b])
        assert end.complete is complete, f"StreamEnd on {upto}/{len(events)} events"


def _from_bytes(raw: bytes) -> Case:
    value = json.loads(raw)
    return value["kind"], value["deltas"], value["nl"], value["cuts"]


TARGET = Target(
    "stream",
    _cases,
    check,
    from_bytes=_from_bytes,
    to_bytes=lambda c: json.dumps(
        {"kind": c[0], "deltas": c[1], "nl": c[2], "cuts": c[3]}
    ).encode(),
)
