"""Restoring placeholders in the model's answer, per provider. Pure (sans-I/O).

The mapping comes from the request itself (and, for Responses ``previous_response_id``, from
the local vault), so any worker can restore any answer. Text that the model streams is restored
per channel (content block, choice, output item, candidate), holding back only a tail that could
still become a placeholder. When a channel ends with such a tail, the tail is released as one
more delta of the same kind, before the event that ends the channel.

Signed or opaque parts (thinking, reasoning, signatures, ``encrypted_content``) are never
touched: the client sends them back, and a changed one would fail the provider's check.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Mapping
from typing import Any

from domestique.proxy.routes import Operation, Provider
from domestique.proxy.sse import SSEEvent, SSEParser, make_event, with_data
from domestique.redact import StreamRestorer, json_escaped, restore_text

_SKIP_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
_SKIP_KEYS = frozenset({"signature", "encrypted_content", "thoughtSignature", "thought_signature"})
_JSON_KEYS = frozenset({"arguments", "partial_json"})
# Responses events that stream text of one channel: type -> (channel, JSON source?)
_RESPONSES_DELTAS: dict[str, tuple[str, bool]] = {
    "response.output_text.delta": ("text", False),
    "response.refusal.delta": ("refusal", False),
    "response.function_call_arguments.delta": ("args", True),
    "response.mcp_call_arguments.delta": ("args", True),
    "response.custom_tool_call_input.delta": ("custom", False),
}
# Events that end a channel (and carry its full text): type -> channel
_RESPONSES_DONES: dict[str, str] = {
    "response.output_text.done": "text",
    "response.refusal.done": "refusal",
    "response.function_call_arguments.done": "args",
    "response.mcp_call_arguments.done": "args",
    "response.custom_tool_call_input.done": "custom",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _idx(value: Any) -> Any:
    """An index from the answer as a channel key: any JSON value, made hashable."""
    if value is None or isinstance(value, str | int | float):
        return value
    return ("json", _dumps(value))


def _items(value: Any) -> list[Any]:
    """A member that should be an array, as a list; anything else has no items."""
    return value if isinstance(value, list) else []


class Restoring:
    """Both forms of a mapping: plain text, and JSON source (argument strings)."""

    __slots__ = ("json", "plain")

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.plain = dict(mapping)
        self.json = json_escaped(mapping)

    def value(self, value: Any) -> tuple[Any, bool]:
        """``value`` with every complete placeholder restored; (new value, changed?)."""
        changed = False

        def walk(v: Any, key: str | None) -> Any:
            nonlocal changed
            if isinstance(v, str):
                mapping = self.json if key in _JSON_KEYS else self.plain
                out = restore_text(v, mapping)
                if out is not v and out != v:
                    changed = True
                return out
            if isinstance(v, dict):
                type_ = v.get("type")  # any JSON value: a schema may have a property "type"
                if (isinstance(type_, str) and type_ in _SKIP_TYPES) or v.get("thought") is True:
                    return v
                return {k: (x if k in _SKIP_KEYS else walk(x, k)) for k, x in v.items()}
            if isinstance(v, list):
                return [walk(x, key) for x in v]
            return v

        out = walk(value, None)
        return (out, True) if changed else (value, False)


def restore_body(body: bytes, mapping: Mapping[str, str]) -> bytes:
    """A whole (non-streamed) answer with placeholders restored; non-JSON passes unchanged."""
    if not mapping or b"[REDACTED:" not in body:
        return body
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return body
    out, changed = Restoring(mapping).value(value)
    return _dumps(out).encode("utf-8") if changed else body


def response_id_of(body: bytes) -> str | None:
    """The ``id`` of a non-streamed Responses answer (for the vault)."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    rid = value.get("id") if isinstance(value, dict) else None
    return rid if isinstance(rid, str) else None


class _Channel:
    __slots__ = ("kind", "restorer")

    def __init__(self, restorer: StreamRestorer, kind: str) -> None:
        self.restorer = restorer
        self.kind = kind


class AnswerStream:
    """Restores one SSE answer. ``feed(bytes) -> bytes``; ``close() -> bytes`` at the end."""

    def __init__(self, operation: Operation, provider: Provider, mapping: Mapping[str, str]):
        self._r = Restoring(mapping)
        self._parser = SSEParser()
        self._channels: dict[Any, _Channel] = {}
        self.response_id: str | None = None
        self._seq_offset = 0
        self._last_seq = -1
        self._template: dict[str, Any] | None = None
        handlers: dict[Provider, Callable[[SSEEvent], list[SSEEvent]]] = {
            Provider.ANTHROPIC: self._anthropic,
            Provider.GEMINI: self._gemini,
        }
        self._handle = handlers.get(provider) or (
            self._responses if operation is Operation.OPENAI_RESPONSES else self._chat
        )
        self._provider = provider
        self._operation = operation

    # -- plumbing -------------------------------------------------------------------------
    def feed(self, chunk: bytes) -> bytes:
        out = [e.render() for ev in self._parser.feed(chunk) for e in self._handle(ev)]
        return "".join(out).encode("utf-8")

    def close(self) -> bytes:
        out = [e.render() for ev in self._parser.close() for e in self._handle(ev)]
        out += [e.render() for e in self._flush_all()]
        return "".join(out).encode("utf-8")

    def abort(self, message: str) -> bytes:
        """The end of a stream the upstream broke off: held text, then an error event.

        An event cut off mid-way is dropped (it cannot be completed); text held back as a
        possible placeholder prefix is released, restored, as one more delta; then the
        provider's own error event says the answer is incomplete.
        """
        self._parser = SSEParser()
        out = [e.render() for e in self._flush_all()]
        out.append(stream_error_event(self._provider, self._operation, message, self._last_seq + 1))
        return "".join(out).encode("utf-8")

    def _channel(self, key: Any, kind: str, json_mode: bool) -> _Channel:
        ch = self._channels.get(key)
        if ch is None:
            ch = _Channel(StreamRestorer(self._r.json if json_mode else self._r.plain), kind)
            self._channels[key] = ch
        return ch

    def _pop(self, key: Any) -> _Channel | None:
        return self._channels.pop(key) if key in self._channels else None

    def _take(self, key: Any) -> str:
        ch = self._pop(key)
        return ch.restorer.flush() if ch is not None else ""

    @staticmethod
    def _json(ev: SSEEvent) -> Any:
        if ev.data is None:
            return None
        try:
            return json.loads(ev.data)
        except (ValueError, RecursionError):
            return None

    def _generic(self, ev: SSEEvent, data: Any) -> list[SSEEvent]:
        out, changed = self._r.value(data)
        return [with_data(ev, _dumps(out))] if changed else [ev]

    def _flush_all(self) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        for key in list(self._channels):
            ch = self._channels[key]
            pending = ch.restorer.flush()
            if pending:
                events.extend(self._synthetic(key, ch.kind, pending))
        self._channels.clear()
        return events

    def _synthetic(self, key: Any, kind: str, text: str) -> list[SSEEvent]:
        """One more delta carrying ``text`` for channel ``key`` (a held tail at the end)."""
        if self._provider is Provider.ANTHROPIC:
            field = "partial_json" if kind == "input_json_delta" else "text"
            data = {
                "type": "content_block_delta",
                "index": key,
                "delta": {"type": kind, field: text},
            }
            return [make_event("content_block_delta", _dumps(data))]
        if self._provider is Provider.GEMINI:
            data = {
                "candidates": [
                    {"index": key, "content": {"role": "model", "parts": [{"text": text}]}}
                ]
            }
            return [make_event(None, _dumps(data))]
        if self._operation is Operation.OPENAI_RESPONSES:
            kind_name, ids = kind.split("|", 1)
            base = json.loads(ids)
            field = "delta"
            self._seq_offset += 1
            self._last_seq += 1
            data = {"type": kind_name, **base, field: text, "sequence_number": self._last_seq}
            return [make_event(kind_name, _dumps(data))]
        # OpenAI chat: a chunk like the last one seen, with one delta.
        tmpl = dict(self._template or {"object": "chat.completion.chunk"})
        choice, what = key[0], key[1]
        if what == "tool":
            delta: dict[str, Any] = {
                "tool_calls": [{"index": key[2], "function": {"arguments": text}}]
            }
        elif what == "text":  # legacy completions: text on the choice, no delta
            tmpl["choices"] = [{"index": choice, "text": text, "finish_reason": None}]
            return [make_event(None, _dumps(tmpl))]
        else:
            delta = {what: text}
        tmpl["choices"] = [{"index": choice, "delta": delta, "finish_reason": None}]
        return [make_event(None, _dumps(tmpl))]

    # -- Anthropic Messages -----------------------------------------------------------------
    def _anthropic(self, ev: SSEEvent) -> list[SSEEvent]:
        data = self._json(ev)
        if not isinstance(data, dict):
            return [ev]
        kind = data.get("type")
        index = _idx(data.get("index"))
        if kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            delta = data["delta"]
            dtype = delta.get("type")
            field = {"text_delta": "text", "input_json_delta": "partial_json"}.get(str(dtype))
            if field is None or not isinstance(delta.get(field), str):
                return self._generic(ev, data) if dtype == "citations_delta" else [ev]
            ch = self._channel(index, str(dtype), dtype == "input_json_delta")
            piece = delta[field]
            out = ch.restorer.feed(piece)
            if out == piece:
                return [ev]
            delta[field] = out
            return [with_data(ev, _dumps(data))]
        if kind == "content_block_stop":
            stopped = self._pop(index)
            pending = stopped.restorer.flush() if stopped else ""
            if stopped is None or not pending:
                return [ev]
            return [*self._synthetic(index, stopped.kind, pending), ev]
        if kind == "message_stop":
            return [*self._flush_all(), ev]
        return self._generic(ev, data)

    # -- OpenAI Chat Completions ------------------------------------------------------------
    def _chat(self, ev: SSEEvent) -> list[SSEEvent]:
        if ev.data is not None and ev.data.strip() == "[DONE]":
            return [*self._flush_all(), ev]
        data = self._json(ev)
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            return [ev] if data is None else self._generic(ev, data)
        self._template = {k: v for k, v in data.items() if k not in ("choices", "usage")}
        changed = False
        for choice in data["choices"]:
            if not isinstance(choice, dict):
                continue
            c = _idx(choice.get("index", 0))
            piece = choice.get("text")
            if isinstance(piece, str):  # legacy /v1/completions chunks
                out = self._channel((c, "text"), "chat", False).restorer.feed(piece)
                if out != piece:
                    choice["text"], changed = out, True
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for what in ("content", "refusal"):
                    piece = delta.get(what)
                    if isinstance(piece, str):
                        out = self._channel((c, what), "chat", False).restorer.feed(piece)
                        if out != piece:
                            delta[what], changed = out, True
                for call in _items(delta.get("tool_calls")):
                    fn = call.get("function") if isinstance(call, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        key = (c, "tool", _idx(call.get("index", 0)))
                        piece = fn["arguments"]
                        out = self._channel(key, "chat", True).restorer.feed(piece)
                        if out != piece:
                            fn["arguments"], changed = out, True
            if choice.get("finish_reason") is not None:
                changed |= self._chat_flush_into(c, choice)
        return [with_data(ev, _dumps(data))] if changed else [ev]

    def _chat_flush_into(self, c: Any, choice: dict[str, Any]) -> bool:
        delta = choice.setdefault("delta", {})
        if not isinstance(delta, dict):
            return False
        changed = False
        for key in [k for k in self._channels if k[0] == c]:
            holder, name = (choice, "text") if key[1] == "text" else (delta, key[1])
            if key[1] == "tool":
                name = "tool_calls"
            present = holder.get(name)
            wanted = list if key[1] == "tool" else str
            if present is not None and not isinstance(present, wanted):
                continue  # an odd chunk: the held text goes out as its own chunk at the end
            pending = self._take(key)
            if not pending:
                continue
            changed = True
            if key[1] == "tool":
                calls: list[Any] = holder.setdefault(name, [])
                calls.append({"index": key[2], "function": {"arguments": pending}})
            else:
                holder[name] = str(present or "") + pending
        return changed

    # -- OpenAI Responses -------------------------------------------------------------------
    def _responses(self, ev: SSEEvent) -> list[SSEEvent]:
        data = self._json(ev)
        if not isinstance(data, dict):
            return [ev]
        kind = str(data.get("type") or ev.event or "")
        if kind == "response.created" and isinstance(data.get("response"), dict):
            rid = data["response"].get("id")
            self.response_id = rid if isinstance(rid, str) else self.response_id
        before: list[SSEEvent] = []
        changed = False
        ids = {k: data[k] for k in ("item_id", "output_index", "content_index") if k in data}
        key = (_idx(data.get("output_index")), _idx(data.get("content_index")))
        if kind in _RESPONSES_DELTAS and isinstance(data.get("delta"), str):
            what, json_mode = _RESPONSES_DELTAS[kind]
            ch = self._channel((*key, what), f"{kind}|{_dumps(ids)}", json_mode)
            piece = data["delta"]
            out = ch.restorer.feed(piece)
            if out != piece:
                data["delta"], changed = out, True
        elif kind in _RESPONSES_DONES:
            what = _RESPONSES_DONES[kind]
            ended = self._pop((*key, what))
            pending = ended.restorer.flush() if ended else ""
            if ended is not None and pending:
                before = self._synthetic(None, ended.kind, pending)
            restored, changed = self._r.value(data)
            data = restored
        else:
            restored, changed = self._r.value(data)
            data = restored
        seq = data.get("sequence_number")
        if isinstance(seq, int):
            if self._seq_offset:
                data["sequence_number"] = seq + self._seq_offset
                changed = True
            self._last_seq = data["sequence_number"]
        # A synthetic delta takes the done event's number; the done event moves up by one.
        if before and isinstance(seq, int):
            before_data = json.loads(before[0].data or "{}")
            before_data["sequence_number"] = data["sequence_number"] - 1
            before = [make_event(before[0].event, _dumps(before_data))]
        return [*before, with_data(ev, _dumps(data)) if changed else ev]

    # -- Gemini -----------------------------------------------------------------------------
    def _gemini(self, ev: SSEEvent) -> list[SSEEvent]:
        data = self._json(ev)
        if not isinstance(data, dict):
            return [ev]
        changed = False
        for pos, cand in enumerate(_items(data.get("candidates"))):
            if not isinstance(cand, dict):
                continue
            c = _idx(cand.get("index", pos))
            content = cand.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            last_text: dict[str, Any] | None = None
            for part in parts if isinstance(parts, list) else ():
                if not isinstance(part, dict) or part.get("thought") is True:
                    continue
                if isinstance(part.get("text"), str):
                    piece = part["text"]
                    out = self._channel(c, "gemini", False).restorer.feed(piece)
                    if out != piece:
                        part["text"], changed = out, True
                    last_text = part
                else:
                    for k in list(part):
                        if k in _SKIP_KEYS:
                            continue
                        new, ch_ = self._r.value(part[k])
                        if ch_:
                            part[k], changed = new, True
            if cand.get("finishReason") is not None:
                pending = self._take(c)
                if pending:
                    changed = True
                    if last_text is not None:
                        last_text["text"] += pending
                    elif isinstance(parts, list):
                        parts.append({"text": pending})
                    else:
                        cand["content"] = {"role": "model", "parts": [{"text": pending}]}
        return [with_data(ev, _dumps(data))] if changed else [ev]


def stream_error_event(
    provider: Provider, operation: Operation, message: str, sequence_number: int = 0
) -> str:
    """An SSE error event in ``provider``'s own shape, for a stream that cannot finish.

    Anthropic: ``event: error`` with ``{"type": "error", "error": {...}}``; OpenAI Responses:
    ``event: error`` with ``{"type": "error", "code", "message", "param", "sequence_number"}``;
    OpenAI chat and completions: a ``data:`` chunk holding an ``error`` object (the SDKs raise
    on it); Gemini: a ``data:`` object with Google's ``error`` (code, message, status).
    """
    if provider is Provider.ANTHROPIC:
        data: dict[str, Any] = {"type": "error", "error": {"type": "api_error", "message": message}}
        return make_event("error", _dumps(data)).render()
    if provider is Provider.GEMINI:
        data = {"error": {"code": 502, "message": message, "status": "UNAVAILABLE"}}
        return make_event(None, _dumps(data)).render()
    if operation is Operation.OPENAI_RESPONSES:
        data = {
            "type": "error",
            "code": "server_error",
            "message": message,
            "param": None,
            "sequence_number": sequence_number,
        }
        return make_event("error", _dumps(data)).render()
    data = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    return make_event(None, _dumps(data)).render()


class JsonArrayStream:
    """Gemini ``streamGenerateContent`` without ``alt=sse``: one JSON array, sent as it grows.

    Each element (a ``GenerateContentResponse``) is cut out as soon as its closing brace
    arrives and restored like the SSE form's events (text held per candidate while it could
    still be a placeholder prefix), then written as an element of the array the client reads.
    Anything not shaped like an array of objects is held and restored whole at the end.
    """

    __slots__ = (
        "_decoder",
        "_depth",
        "_elem",
        "_esc",
        "_in_str",
        "_opened",
        "_raw",
        "_sent",
        "_stream",
    )

    def __init__(self, stream: AnswerStream) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._depth = 0  # 1 inside the top-level array
        self._in_str = False
        self._esc = False
        self._elem: list[str] = []
        self._opened = False
        self._sent = 0  # elements written
        self._raw: list[str] | None = None  # not an array of objects: held whole

    def _emit(self, data: str) -> str:
        out = ("[" if self._sent == 0 else ",\r\n") + data
        self._sent += 1
        return out

    def _element(self, text: str) -> str:
        ev = SSEEvent([f"data: {text}"], None, text)
        return "".join(self._emit(e.data or "") for e in self._stream._gemini(ev))

    def feed(self, chunk: bytes) -> bytes:
        text = self._decoder.decode(chunk)
        if self._raw is not None:
            self._raw.append(text)
            return b""
        out: list[str] = []
        for i, ch in enumerate(text):
            if self._depth == 0:
                if ch.isspace():
                    continue
                if ch == "[" and not self._opened:
                    self._opened = True
                    self._depth = 1
                    continue
                self._raw = [*self._elem, text[i:]]  # not the shape expected: hold it all
                return "".join(out).encode("utf-8")
            if self._depth == 1 and not self._elem:
                if ch.isspace() or ch == ",":
                    continue
                if ch == "]":
                    self._depth = 0
                    continue
                if ch != "{":
                    # Not an object: the rest is held whole, after the separator it needs.
                    self._raw = ["[" if self._sent == 0 else ",", text[i:]]
                    return "".join(out).encode("utf-8")
            self._elem.append(ch)
            if self._in_str:
                if self._esc:
                    self._esc = False
                elif ch == "\\":
                    self._esc = True
                elif ch == '"':
                    self._in_str = False
                continue
            if ch == '"':
                self._in_str = True
            elif ch in "{[":
                self._depth += 1
            elif ch in "}]":
                self._depth -= 1
                if self._depth == 1:
                    out.append(self._element("".join(self._elem)))
                    self._elem = []
        return "".join(out).encode("utf-8")

    def _end(self, extra: list[str]) -> bytes:
        if self._raw is not None:
            held = "".join(self._raw) + self._decoder.decode(b"", final=True)
            if self._sent == 0:
                return restore_body(held.encode("utf-8"), self._stream._r.plain)
            # The array went odd after elements were sent: restore the rest as JSON source.
            return restore_text(held, self._stream._r.json).encode("utf-8")
        out = [self._emit(e.data or "") for e in self._stream._flush_all()]
        out.extend(self._emit(x) for x in extra)
        out.append("[]" if self._sent == 0 else "]")
        return "".join(out).encode("utf-8")

    def close(self) -> bytes:
        return self._end([])

    def abort(self, message: str) -> bytes:
        """Held text, then Google's error object as a last element; the array is closed."""
        self._elem = []
        if self._raw is not None:
            return b""
        error = {"error": {"code": 502, "message": message, "status": "UNAVAILABLE"}}
        return self._end([_dumps(error)])
