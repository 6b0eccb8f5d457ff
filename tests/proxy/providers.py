"""Provider answer shapes for the tests: SSE streams and bodies, and client-side accumulators.

Written from the providers' documented wire shapes (REFERENCE.md section C). ``one_char``
streams send every character of the text and of the tool arguments as its own event.
"""

from __future__ import annotations

import json
from typing import Any


def _sse(event: str | None, data: Any) -> str:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n"


def _pieces(text: str, one_char: bool) -> list[str]:
    return list(text) if one_char else [text[: len(text) // 2], text[len(text) // 2 :]]


def anthropic_stream(text: str, args_json: str, *, one_char: bool = True) -> bytes:
    out = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "claude-x",
                },
            },
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
        )
    )
    for p in _pieces(text, one_char):
        out.append(
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": p},
                },
            )
        )
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
            },
        )
    )
    for p in _pieces(args_json, one_char):
        out.append(
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                },
            )
        )
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


def anthropic_collect(raw: bytes) -> tuple[str, str]:
    text, args = "", ""
    for data in _datas(raw):
        if data.get("type") == "content_block_delta":
            d = data["delta"]
            if d["type"] == "text_delta":
                text += d["text"]
            elif d["type"] == "input_json_delta":
                args += d["partial_json"]
    return text, args


def anthropic_body(text: str, args_json: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": json.loads(args_json)},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def chat_stream(text: str, args_json: str, *, one_char: bool = True) -> bytes:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}
    out = [
        _sse(
            None,
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            },
        )
    ]
    for p in _pieces(text, one_char):
        out.append(
            _sse(
                None,
                {**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]},
            )
        )
    out.append(
        _sse(
            None,
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_1",
                                    "type": "function",
                                    "function": {"name": "sh", "arguments": ""},
                                }
                            ]
                        },
                        "finish_reason": None,
                    }
                ],
            },
        )
    )
    for p in _pieces(args_json, one_char):
        out.append(
            _sse(
                None,
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": 0, "function": {"arguments": p}}]},
                            "finish_reason": None,
                        }
                    ],
                },
            )
        )
    out.append(
        _sse(None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    )
    out.append(_sse(None, "[DONE]"))
    return "".join(out).encode()


def chat_collect(raw: bytes) -> tuple[str, str]:
    text, args = "", ""
    for data in _datas(raw):
        for choice in data.get("choices", []):
            delta = choice.get("delta", {})
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                args += call.get("function", {}).get("arguments") or ""
    return text, args


def chat_body(text: str, args_json: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-x",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": text,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "sh", "arguments": args_json},
                        }
                    ],
                },
            }
        ],
    }


def responses_stream(
    text: str,
    args_json: str,
    *,
    one_char: bool = True,
    rid: str = "resp_1",
    tools: list[Any] | None = None,
) -> bytes:
    """A Responses SSE stream; like the real API, the response objects echo the ``tools``."""
    seq = iter(range(10_000))
    out: list[str] = []

    def ev(kind: str, **data: Any) -> None:
        out.append(_sse(kind, {"type": kind, "sequence_number": next(seq), **data}))

    ev(
        "response.created",
        response={
            "id": rid,
            "object": "response",
            "status": "in_progress",
            "output": [],
            "tools": tools or [],
        },
    )
    ev(
        "response.output_item.added",
        output_index=0,
        item={"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    )
    for p in _pieces(text, one_char):
        ev("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=p)
    ev("response.output_text.done", item_id="msg_1", output_index=0, content_index=0, text=text)
    ev(
        "response.output_item.added",
        output_index=1,
        item={
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_1",
            "name": "sh",
            "arguments": "",
        },
    )
    for p in _pieces(args_json, one_char):
        ev("response.function_call_arguments.delta", item_id="fc_1", output_index=1, delta=p)
    ev("response.function_call_arguments.done", item_id="fc_1", output_index=1, arguments=args_json)
    ev(
        "response.completed",
        response={
            "id": rid,
            "object": "response",
            "status": "completed",
            "tools": tools or [],
            "output": [
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                },
                {
                    "id": "fc_1",
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "sh",
                    "arguments": args_json,
                },
            ],
        },
    )
    return "".join(out).encode()


def responses_collect(raw: bytes) -> tuple[str, str]:
    text, args = "", ""
    seqs = []
    for data in _datas(raw):
        seqs.append(data.get("sequence_number"))
        if data.get("type") == "response.output_text.delta":
            text += data["delta"]
        elif data.get("type") == "response.function_call_arguments.delta":
            args += data["delta"]
    assert seqs == list(range(len(seqs))), "sequence numbers stay consecutive"
    return text, args


def responses_body(
    text: str, args_json: str, rid: str = "resp_1", tools: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "status": "completed",
        "tools": tools or [],
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
            {
                "id": "fc_1",
                "type": "function_call",
                "call_id": "call_1",
                "name": "sh",
                "arguments": args_json,
            },
        ],
    }


def gemini_stream(text: str, args_json: str, *, one_char: bool = True) -> bytes:
    out = []
    for p in _pieces(text, one_char):
        out.append(
            _sse(
                None,
                {
                    "candidates": [
                        {"index": 0, "content": {"role": "model", "parts": [{"text": p}]}}
                    ]
                },
            )
        )
    out.append(
        _sse(
            None,
            {
                "candidates": [
                    {
                        "index": 0,
                        "content": {
                            "role": "model",
                            "parts": [
                                {"functionCall": {"name": "sh", "args": json.loads(args_json)}}
                            ],
                        },
                        "finishReason": "STOP",
                    }
                ]
            },
        )
    )
    return "".join(out).encode()


def gemini_collect(raw: bytes) -> tuple[str, str]:
    text, args = "", ""
    for data in _datas(raw):
        for cand in data.get("candidates", []):
            for part in cand.get("content", {}).get("parts", []):
                text += part.get("text", "")
                if "functionCall" in part:
                    args = json.dumps(part["functionCall"]["args"])
    return text, args


def gemini_body(text: str, args_json: str) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "index": 0,
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": text},
                        {"functionCall": {"name": "sh", "args": json.loads(args_json)}},
                    ],
                },
                "finishReason": "STOP",
            }
        ]
    }


def _datas(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data:"):
                payload = line[5:].strip()
                if payload != "[DONE]":
                    out.append(json.loads(payload))
    return out


STREAMS = {
    "anthropic": (anthropic_stream, anthropic_collect),
    "chat": (chat_stream, chat_collect),
    "responses": (responses_stream, responses_collect),
    "gemini": (gemini_stream, gemini_collect),
}


def gemini_array(text: str, args_json: str, *, one_char: bool = True) -> bytes:
    """The same answer as ``gemini_stream``, as the JSON array sent without ``alt=sse``."""
    elements = [
        json.dumps(d, indent=1) for d in _datas(gemini_stream(text, args_json, one_char=one_char))
    ]
    return ("[" + ",\r\n".join(elements) + "]").encode()


def gemini_array_collect(raw: bytes) -> tuple[str, str]:
    text, args = "", ""
    for data in json.loads(raw):
        for cand in data.get("candidates", []):
            for part in cand.get("content", {}).get("parts", []):
                text += part.get("text", "")
                if "functionCall" in part:
                    args = json.dumps(part["functionCall"]["args"])
    return text, args
