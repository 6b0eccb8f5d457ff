"""A stand-in model provider for ``domestique demo``: local, Anthropic-shaped, no key needed.

It records every request body it receives and answers as a streamed Anthropic message that
repeats back every placeholder it saw, in its text and in a tool call, one character per event,
so the demo shows the firewall reassembling and restoring them. It never calls out anywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+:[0-9a-f]{8}\]")

Message = MutableMapping[str, Any]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class DemoUpstream:
    """ASGI app: ``received`` holds each request body exactly as it arrived."""

    def __init__(self) -> None:
        self.received: list[bytes] = []

    def answer_events(self, body: bytes) -> list[bytes]:
        seen = list(dict.fromkeys(PLACEHOLDER.findall(body.decode("utf-8", "replace"))))
        text = (
            "I only ever saw placeholders: " + ", ".join(seen) + ". Using them as asked."
            if seen
            else "Nothing was hidden from me."
        )
        command = "./deploy.sh --slack-token " + (seen[0] if seen else "none")
        args = json.dumps({"command": command})
        events = [
            _sse(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_demo",
                        "type": "message",
                        "role": "assistant",
                        "model": "demo-model",
                        "content": [],
                        "usage": {"input_tokens": 1, "output_tokens": 0},
                    },
                },
            ),
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
        ]
        # One character per event: the hardest case for restoring placeholders.
        events += [
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": ch},
                },
            )
            for ch in text
        ]
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        events.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_demo",
                        "name": "Bash",
                        "input": {},
                    },
                },
            )
        )
        events += [
            _sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": args[i : i + 3]},
                },
            )
            for i in range(0, len(args), 3)
        ]
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
        events.append(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": len(text)},
                },
            )
        )
        events.append(_sse("message_stop", {"type": "message_stop"}))
        return events

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.received.append(body)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for event in self.answer_events(body):
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
