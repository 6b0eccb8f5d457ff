"""A real local upstream for the tests: an HTTP server on 127.0.0.1 that records every request
it receives and answers like the provider the path belongs to, streaming included.

It is deliberately not built on the proxy's own stack (stdlib ``http.server``, threads), so a
bug shared by the two cannot hide itself. The answer echoes every placeholder found in the
request, in the text and in a tool call's arguments, so restoring can be checked end to end.
"""

from __future__ import annotations

import gzip
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn

from . import providers

PLACEHOLDER = re.compile(rb"\[REDACTED:[a-z0-9_]+:[0-9a-f]{8}\]")


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Upstream:
    url: str
    received: list[Received] = field(default_factory=list)
    gzip_answers: bool = False
    one_char: bool = True
    event_delay_s: float = 0.0  # pause between streamed events (a slow model)
    aborted: bool = False  # a streamed answer could not be written to the end
    silence_s: float = 0.0  # after the first event, stay silent this long (a thinking model)
    break_after: int | None = None  # announce the whole stream, send this many events, hang up
    gemini_array: bool = False  # Gemini streams as one JSON array (no ``alt=sse``)

    def bodies(self) -> bytes:
        return b"\n".join(r.body for r in self.received)


def _answer(up: Upstream, path: str, body: bytes) -> tuple[bytes, str]:
    found = list(dict.fromkeys(m.decode() for m in PLACEHOLDER.findall(body)))
    text = "I saw: " + " ".join(found) if found else "I saw nothing to hide."
    args = json.dumps({"command": "echo " + " ".join(found)})
    try:
        req = json.loads(body)
    except ValueError:
        req = {}
    stream = req.get("stream") is True or ":streamGenerateContent" in path
    kind = (
        "anthropic"
        if path.startswith("/v1/messages")
        else "gemini"
        if path.startswith("/v1beta")
        else "responses"
        if path == "/v1/responses"
        else "chat"
    )
    if path == "/v1/messages/count_tokens":
        return json.dumps({"input_tokens": 7}).encode(), "application/json"
    if path in ("/v1/embeddings", "/v1/completions"):
        return json.dumps({"object": "list", "data": [], "text": text}).encode(), "application/json"
    if stream and kind == "gemini" and up.gemini_array:
        return providers.gemini_array(text, args, one_char=up.one_char), "application/json"
    if kind == "responses":  # the Response object echoes the request's tools
        tools = req.get("tools") if isinstance(req, dict) else None
        tools = tools if isinstance(tools, list) else None
        if stream:
            return (
                providers.responses_stream(text, args, one_char=up.one_char, tools=tools),
                "text/event-stream",
            )
        return json.dumps(providers.responses_body(text, args, tools=tools)).encode(), (
            "application/json"
        )
    if stream:
        make = providers.STREAMS[kind][0]
        return make(text, args, one_char=up.one_char), "text/event-stream"
    bodies: dict[str, Any] = {
        "anthropic": providers.anthropic_body,
        "chat": providers.chat_body,
        "responses": providers.responses_body,
        "gemini": providers.gemini_body,
    }
    return json.dumps(bodies[kind](text, args)).encode(), "application/json"


def _handler(up: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            # Headers and body go out as separate writes: without this, Nagle's algorithm
            # and delayed ACKs add 40 ms to every answer.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            n = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(n)
            up.received.append(
                Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            data, ctype = _answer(up, self.path.split("?")[0], body)
            self.send_response(200)
            self.send_header("content-type", ctype)
            if ctype == "text/event-stream":
                # Streamed: written event by event, then the connection closes.
                self.send_header("connection", "close")
                chunks = [c for c in re.split(rb"(?<=\n\n)", data) if c]
                if up.break_after is not None:
                    # A length the stream never reaches: the reader sees it cut short.
                    self.send_header("content-length", str(len(data)))
                    chunks = chunks[: up.break_after]
                self.end_headers()
                try:
                    for i, chunk in enumerate(chunks):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if up.event_delay_s:
                            time.sleep(up.event_delay_s)
                        if i == 0 and up.silence_s and self._peer_left(up.silence_s):
                            up.aborted = True
                            break
                except OSError:  # the proxy hung up: the reader went away
                    up.aborted = True
                self.close_connection = True
                return
            if up.gzip_answers:
                data = gzip.compress(data)
                self.send_header("content-encoding", "gzip")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _peer_left(self, wait_s: float) -> bool:
            """Wait up to ``wait_s``; True as soon as the proxy closes the connection."""
            import select

            ready, _, _ = select.select([self.connection], [], [], wait_s)
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""

        def do_GET(self) -> None:
            up.received.append(Received("GET", self.path, dict(self.headers.items()), b""))
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    return Handler


@contextmanager
def run_upstream() -> Iterator[Upstream]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Upstream("")))
    up = Upstream(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(up)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield up
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def run_asgi(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1 (ephemeral port) in a thread."""
    from domestique.proxy.server import tcp_listener

    sock = tcp_listener("127.0.0.1", 0)  # IPPROTO_TCP: asyncio then turns Nagle off
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("proxy did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
