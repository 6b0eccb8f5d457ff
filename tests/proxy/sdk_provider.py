"""A stand-in model provider for the official-SDK tests: a real HTTP server on 127.0.0.1.

It speaks the three wire formats as the SDKs read them (REFERENCE.md section C and the SDKs'
own types): Anthropic Messages (plain and SSE, count_tokens, models), OpenAI Chat Completions
and Responses (plain and SSE), input_tokens, embeddings and models, and Gemini
generateContent, streamGenerateContent (``alt=sse``), countTokens, batchEmbedContents and
models, under ``/v1`` and ``/v1beta``.

Its answers depend on the request only through text the firewall restores: it echoes the
last user turn (``You said: …``), calls the first tool with ``{"command": "echo …"}`` when
tools are offered, and answers a tool result with ``Tool said: …``. Token counts and
embeddings are word counts (a placeholder is one word, as the value it replaces). So an SDK's
result through the firewall must equal its result direct, and every id and timestamp is fixed.

Streams go out in pieces of a few characters, one event each, so a placeholder is split across
events. Built on the standard library (``http.server``), not on the firewall's stack.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

CREATED = 1_767_225_600  # 2026-01-01T00:00:00Z
PIECE = 5  # characters per streamed event


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class StandIn:
    url: str = ""
    received: list[Received] = field(default_factory=list)

    def bodies(self) -> bytes:
        return b"\n".join(r.body for r in self.received)


@dataclass(frozen=True)
class Turn:
    """What the stand-in answers: the last user turn, the tools offered, the model."""

    text: str
    tool_result: bool
    tools: tuple[str, ...]
    model: str


def words(value: Any) -> int:
    """Words in every string value of ``value`` (keys and a few fixed fields aside)."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(words(v) for v in value)
    if isinstance(value, dict):
        skip = {"model", "role", "type", "encoding_format", "mimeType"}
        return sum(words(v) for k, v in value.items() if k not in skip)
    return 0


def _pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def _reply(turn: Turn) -> tuple[str, dict[str, str] | None]:
    """(text, None) or ("", tool arguments) for ``turn``."""
    if turn.tool_result:
        return f"Tool said: {turn.text}", None
    if turn.tools:
        return "", {"command": f"echo {turn.text}"}
    return f"You said: {turn.text}", None


def _texts(content: Any, *kinds: str) -> str:
    """The text of a content string or a list of parts of the given types."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type", "text") in kinds and "text" in p
        )
    return ""


# -- Anthropic ---------------------------------------------------------------------------------
def anthropic_turn(body: dict[str, Any]) -> Turn:
    last = body["messages"][-1]
    content = last["content"]
    results = (
        [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
    )
    if results:
        text = _texts(results[-1].get("content", ""), "text")
        return Turn(text, True, (), body["model"])
    tools = tuple(t["name"] for t in body.get("tools", []))
    return Turn(_texts(content, "text"), False, tools, body["model"])


def anthropic_message(turn: Turn, in_tokens: int) -> dict[str, Any]:
    text, args = _reply(turn)
    if args is not None:
        content: list[dict[str, Any]] = [
            {"type": "tool_use", "id": "toolu_01", "name": turn.tools[0], "input": args}
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": text}]
        stop = "end_turn"
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": in_tokens, "output_tokens": words(content)},
    }


def _sse(event: str | None, data: Any, end: str = "\n\n") -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}{end}".encode()


def anthropic_stream(turn: Turn, in_tokens: int) -> list[bytes]:
    final = anthropic_message(turn, in_tokens)
    start = {**final, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": in_tokens, "output_tokens": 1}
    out = [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse("ping", {"type": "ping"}),
    ]
    block = final["content"][0]
    if block["type"] == "text":
        first = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
    else:
        first = {**block, "input": {}}
        raw = json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw)]
    out.append(
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": first},
        )
    )
    for delta in deltas:
        out.append(
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": final["usage"]["output_tokens"]},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


ANTHROPIC_MODELS = {
    "data": [
        {
            "type": "model",
            "id": "claude-stand-in",
            "display_name": "Claude Stand-in",
            "created_at": "2026-01-01T00:00:00Z",
        }
    ],
    "has_more": False,
    "first_id": "claude-stand-in",
    "last_id": "claude-stand-in",
}


# -- OpenAI Chat Completions -------------------------------------------------------------------
def chat_turn(body: dict[str, Any]) -> Turn:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Turn(_texts(last["content"], "text"), True, (), body["model"])
    tools = tuple(t["function"]["name"] for t in body.get("tools", []) if t["type"] == "function")
    return Turn(_texts(last["content"], "text"), False, tools, body["model"])


def chat_completion(turn: Turn, in_tokens: int) -> dict[str, Any]:
    text, args = _reply(turn)
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    finish = "stop"
    if args is not None:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": "call_01",
                "type": "function",
                "function": {"name": turn.tools[0], "arguments": json.dumps(args)},
            }
        ]
        finish = "tool_calls"
    out_tokens = words(message)
    return {
        "id": "chatcmpl-01",
        "object": "chat.completion",
        "created": CREATED,
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": in_tokens,
            "completion_tokens": out_tokens,
            "total_tokens": in_tokens + out_tokens,
        },
    }


def chat_stream(turn: Turn, in_tokens: int) -> list[bytes]:
    final = chat_completion(turn, in_tokens)
    message = final["choices"][0]["message"]
    head = {"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": CREATED}
    head["model"] = turn.model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse(None, {**head, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        fn = {"name": call["function"]["name"], "arguments": ""}
        out.append(
            chunk(
                {"tool_calls": [{"index": 0, "id": call["id"], "type": "function", "function": fn}]}
            )
        )
        for p in _pieces(call["function"]["arguments"]):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
    else:
        out.extend(chunk({"content": p}) for p in _pieces(message["content"]))
    out.append(chunk({}, final["choices"][0]["finish_reason"]))
    out.append(b"data: [DONE]\n\n")
    return out


# -- OpenAI Responses --------------------------------------------------------------------------
def responses_turn(body: dict[str, Any]) -> Turn:
    tools = tuple(t["name"] for t in body.get("tools", []) if t.get("type") == "function")
    items = body["input"]
    if isinstance(items, str):
        return Turn(items, False, tools, body["model"])
    last = items[-1]
    if last.get("type") == "function_call_output":
        return Turn(str(last["output"]), True, (), body["model"])
    return Turn(_texts(last["content"], "input_text", "text"), False, tools, body["model"])


def _response_item(turn: Turn) -> dict[str, Any]:
    text, args = _reply(turn)
    if args is not None:
        return {
            "type": "function_call",
            "id": "fc_01",
            "call_id": "call_01",
            "name": turn.tools[0],
            "arguments": json.dumps(args),
            "status": "completed",
        }
    return {
        "type": "message",
        "id": "msg_01",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def response_object(turn: Turn, in_tokens: int, status: str = "completed") -> dict[str, Any]:
    item = _response_item(turn)
    out_tokens = words(item)
    return {
        "id": "resp_01",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "model": turn.model,
        "output": [item] if status == "completed" else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": {
            "input_tokens": in_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": in_tokens + out_tokens,
        }
        if status == "completed"
        else None,
    }


def responses_stream(turn: Turn, in_tokens: int) -> list[bytes]:
    seq = iter(range(1_000_000))
    out: list[bytes] = []

    def event(kind: str, **data: Any) -> None:
        out.append(_sse(kind, {"type": kind, "sequence_number": next(seq), **data}))

    final = response_object(turn, in_tokens)
    event("response.created", response=response_object(turn, in_tokens, "in_progress"))
    event("response.in_progress", response=response_object(turn, in_tokens, "in_progress"))
    item = final["output"][0]
    if item["type"] == "function_call":
        event(
            "response.output_item.added",
            output_index=0,
            item={**item, "arguments": "", "status": "in_progress"},
        )
        for p in _pieces(item["arguments"]):
            event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=0,
                delta=p,
            )
        event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=0,
            name=item["name"],
            arguments=item["arguments"],
        )
    else:
        text = item["content"][0]["text"]
        event(
            "response.output_item.added",
            output_index=0,
            item={**item, "content": [], "status": "in_progress"},
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        event("response.content_part.added", **ids, part=part)
        for p in _pieces(text):
            event("response.output_text.delta", **ids, delta=p, logprobs=[])
        event("response.output_text.done", **ids, text=text, logprobs=[])
        event("response.content_part.done", **ids, part={**part, "text": text})
    event("response.output_item.done", output_index=0, item=item)
    event("response.completed", response=final)
    return out


def _floats(values: list[float], encoding: str) -> list[float] | str:
    if encoding == "base64":
        return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return values


def openai_embeddings(body: dict[str, Any]) -> dict[str, Any]:
    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
    encoding = body.get("encoding_format", "float")
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": _floats([float(words(t)), 0.5, -1.0], encoding),
        }
        for i, t in enumerate(inputs)
    ]
    n = words(inputs)
    return {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": n, "total_tokens": n},
    }


OPENAI_MODELS = {
    "object": "list",
    "data": [{"id": "gpt-stand-in", "object": "model", "created": CREATED, "owned_by": "system"}],
}


# -- Gemini ------------------------------------------------------------------------------------
def gemini_turn(body: dict[str, Any], model: str) -> Turn:
    parts = body["contents"][-1]["parts"]
    responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
    if responses:
        answer = responses[-1].get("response", {})
        text = answer.get("output") if isinstance(answer.get("output"), str) else json.dumps(answer)
        return Turn(text, True, (), model)
    tools = tuple(
        d["name"] for t in body.get("tools", []) for d in t.get("functionDeclarations", [])
    )
    return Turn(" ".join(p["text"] for p in parts if "text" in p), False, tools, model)


def gemini_response(turn: Turn, in_tokens: int) -> dict[str, Any]:
    text, args = _reply(turn)
    part: dict[str, Any] = (
        {"functionCall": {"name": turn.tools[0], "args": args}}
        if args is not None
        else {"text": text}
    )
    out_tokens = words(part)
    return {
        "candidates": [
            {"content": {"parts": [part], "role": "model"}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": in_tokens,
            "candidatesTokenCount": out_tokens,
            "totalTokenCount": in_tokens + out_tokens,
        },
        "modelVersion": turn.model,
        "responseId": "resp-01",
    }


def gemini_stream(turn: Turn, in_tokens: int) -> list[bytes]:
    final = gemini_response(turn, in_tokens)
    part = final["candidates"][0]["content"]["parts"][0]
    if "functionCall" in part:
        return [_sse(None, final, "\r\n\r\n")]
    out = []
    pieces = _pieces(part["text"])
    for i, p in enumerate(pieces):
        candidate: dict[str, Any] = {
            "content": {"parts": [{"text": p}], "role": "model"},
            "index": 0,
        }
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": turn.model}
        chunk["responseId"] = "resp-01"
        if i == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = final["usageMetadata"]
        out.append(_sse(None, chunk, "\r\n\r\n"))
    return out


GEMINI_MODELS = {
    "models": [
        {
            "name": "models/gemini-stand-in",
            "version": "001",
            "displayName": "Gemini Stand-in",
            "inputTokenLimit": 1000,
            "outputTokenLimit": 100,
            "supportedGenerationMethods": ["generateContent", "countTokens", "embedContent"],
        }
    ]
}
_GEMINI_CALL = re.compile(r"/v1(?:beta)?/(?P<model>(?:models|tunedModels)/[^:]+):(?P<method>\w+)")


# -- the server --------------------------------------------------------------------------------
def answer(
    method: str, target: str, headers: dict[str, str], body: bytes
) -> tuple[int, str, list[bytes]]:
    """(status, content type, chunks) for one request, as the provider would answer."""
    parts = urlsplit(target)
    path, query = parts.path, parse_qs(parts.query)
    if method == "GET":
        gemini = "x-goog-api-key" in headers or "key" in query
        if path in ("/v1/models", "/v1beta/models") and gemini:
            return 200, "application/json", [json.dumps(GEMINI_MODELS).encode()]
        if path == "/v1/models" and "anthropic-version" in headers:
            return 200, "application/json", [json.dumps(ANTHROPIC_MODELS).encode()]
        if path == "/v1/models":
            return 200, "application/json", [json.dumps(OPENAI_MODELS).encode()]
        one = re.fullmatch(r"/v1(?:beta)?/models/([\w.:-]+)", path)
        if one is not None:
            if gemini:
                model: dict[str, Any] = {**GEMINI_MODELS["models"][0], "name": f"models/{one[1]}"}
            elif "anthropic-version" in headers:
                model = {**ANTHROPIC_MODELS["data"][0], "id": one[1]}
            else:
                model = {**OPENAI_MODELS["data"][0], "id": one[1]}
            return 200, "application/json", [json.dumps(model).encode()]
        return 404, "application/json", [b'{"error": {"message": "no such route"}}']
    req = json.loads(body)
    n = words(req)
    sse = "text/event-stream"
    if path == "/v1/messages":
        turn = anthropic_turn(req)
        if req.get("stream"):
            return 200, sse, anthropic_stream(turn, n)
        return 200, "application/json", [json.dumps(anthropic_message(turn, n)).encode()]
    if path == "/v1/messages/count_tokens":
        return 200, "application/json", [json.dumps({"input_tokens": n}).encode()]
    if path == "/v1/chat/completions":
        turn = chat_turn(req)
        if req.get("stream"):
            return 200, sse, chat_stream(turn, n)
        return 200, "application/json", [json.dumps(chat_completion(turn, n)).encode()]
    if path == "/v1/responses":
        turn = responses_turn(req)
        if req.get("stream"):
            return 200, sse, responses_stream(turn, n)
        return 200, "application/json", [json.dumps(response_object(turn, n)).encode()]
    if path == "/v1/responses/input_tokens":
        counted = {"object": "response.input_tokens", "input_tokens": n}
        return 200, "application/json", [json.dumps(counted).encode()]
    if path == "/v1/embeddings":
        return 200, "application/json", [json.dumps(openai_embeddings(req)).encode()]
    match = _GEMINI_CALL.fullmatch(path)
    if match is not None:
        model, call = match.group("model"), match.group("method")
        if call == "generateContent":
            turn = gemini_turn(req, model)
            return 200, "application/json", [json.dumps(gemini_response(turn, n)).encode()]
        if call == "streamGenerateContent" and query.get("alt") == ["sse"]:
            return 200, sse, gemini_stream(gemini_turn(req, model), n)
        if call == "countTokens":
            return 200, "application/json", [json.dumps({"totalTokens": n}).encode()]
        if call == "batchEmbedContents":
            values = [{"values": [float(words(r["content"])), 0.5, -1.0]} for r in req["requests"]]
            return 200, "application/json", [json.dumps({"embeddings": values}).encode()]
    return 404, "application/json", [b'{"error": {"message": "no such route"}}']


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _serve(self) -> None:
            n = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(n) if n else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.command, self.path, headers, body))
            status, ctype, chunks = answer(self.command, self.path, headers, body)
            self.send_response(status)
            self.send_header("content-type", ctype)
            if ctype == "text/event-stream":
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                self.close_connection = True
                return
            data = b"".join(chunks)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _serve
        do_POST = _serve

    return Handler


@contextmanager
def run_stand_in() -> Iterator[StandIn]:
    state = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Pair:
    """The stand-in, and a real firewall (uvicorn, real scanner and audit store) before it."""

    stand_in: StandIn
    firewall: str  # the firewall's base URL

    @property
    def direct(self) -> str:
        return self.stand_in.url


@contextmanager
def run_pair(home: Any) -> Iterator[Pair]:
    from domestique.proxy.server import build_app, parse_upstreams

    from .upstream import run_asgi

    with run_stand_in() as stand_in:
        names = ("anthropic", "openai", "gemini")
        app = build_app(parse_upstreams([f"{n}={stand_in.url}" for n in names]), home=home)
        with run_asgi(app) as url:
            yield Pair(stand_in, url)
