"""A real upstream on 127.0.0.1 that cuts its streamed answers short.

Each stream is close-delimited (no ``Content-Length``, no chunked framing), the way an SSE
answer over a plain HTTP/1.1 connection may be sent: the server writes ``keep`` events of a
complete answer, then closes the connection (``reset=True``: with an RST instead of a FIN). To
an HTTP client this looks like a finished answer; only the missing terminal event says
otherwise. Standard library only, not the firewall's stack.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from proxy import providers


@dataclass
class Cutter:
    url: str = ""
    keep: int | None = 2  # events sent before the cut; None sends the whole answer
    reset: bool = False
    hang_s: float = 0.0  # after the events, stay silent this long before closing
    garbage: bytes | None = None  # sent instead of the provider's events
    requests: int = 0


def _kind(path: str) -> str:
    if path.startswith("/v1/messages"):
        return "anthropic"
    if path.startswith(("/v1beta", "/v1/models")):
        return "gemini"
    return "responses" if path == "/v1/responses" else "chat"


def _handler(state: Cutter) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            state.requests += 1
            make = providers.STREAMS[_kind(self.path.split("?")[0])][0]
            data = make("a complete answer", json.dumps({"command": "ls"}), one_char=False)
            events = [e for e in re.split(rb"(?<=\n\n)", data) if e]
            if state.keep is not None:
                events = events[: state.keep]
            if state.garbage is not None:
                events = [state.garbage]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for ev in events:
                self.wfile.write(ev)
            self.wfile.flush()
            if state.hang_s:
                time.sleep(state.hang_s)
            if state.reset:
                # SO_LINGER 0: close() sends RST, a reset rather than an orderly end.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            self.close_connection = True

    return Handler


@contextmanager
def run_cutter(
    keep: int | None = 2, *, reset: bool = False, hang_s: float = 0.0, garbage: bytes | None = None
) -> Iterator[Cutter]:
    state = Cutter(keep=keep, reset=reset, hang_s=hang_s, garbage=garbage)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
