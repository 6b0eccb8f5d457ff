"""The guarded protocol sends a response's head with its first body part, in one write.

A real uvicorn server with the firewall's guarded protocol, on a real socket; the writes that
reach the real transport are counted by a protocol subclass that wraps the transport's
``write``. A whole answer leaves in one write; a streamed answer whose first part is late shows
its head at once; a ``100 Continue`` is not held; pipelined requests each get their answer.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from domestique.proxy.server import ClientLimits, guarded_protocol, tcp_listener

WRITES: list[bytes] = []


def _counting_protocol() -> type[Any]:
    base = guarded_protocol(ClientLimits())

    class Counting(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: Any) -> None:
            real = transport.write

            def write(data: bytes) -> None:
                if data:  # asyncio sends nothing for an empty write
                    WRITES.append(bytes(data))
                real(data)

            transport.write = write
            super().connection_made(transport)

    return Counting


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    slow = scope["path"] == "/slow"
    head = [(b"content-type", b"text/plain")]
    if not slow:
        head.append((b"content-length", b"5"))
    await send({"type": "http.response.start", "status": 200, "headers": head})
    if slow:
        await asyncio.sleep(1.5)  # a model thinking before its first event
        await send({"type": "http.response.body", "body": b"late", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    await send({"type": "http.response.body", "body": b"hello", "more_body": False})


@contextmanager
def _server() -> Iterator[int]:
    sock = tcp_listener("127.0.0.1", 0)
    config = uvicorn.Config(
        _app, http=_counting_protocol(), log_level="error", lifespan="off", loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _read_until(conn: socket.socket, marker: bytes, timeout: float) -> bytes:
    conn.settimeout(timeout)
    got = b""
    while marker not in got:
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_a_whole_answer_leaves_in_one_write() -> None:
    WRITES.clear()
    with _server() as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\nhi")
        got = _read_until(conn, b"hello", 10)
    assert got.startswith(b"HTTP/1.1 200 ")
    assert got.endswith(b"\r\n\r\nhello")
    assert len(WRITES) == 1
    assert WRITES[0] == got


def test_a_late_stream_shows_its_head_at_once() -> None:
    """The head is held for one pass of the loop, not until the first body part."""
    WRITES.clear()
    with _server() as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET /slow HTTP/1.1\r\nhost: a\r\n\r\n")
        started = time.monotonic()
        head = _read_until(conn, b"\r\n\r\n", 10)
        head_after = time.monotonic() - started
        rest = _read_until(conn, b"0\r\n\r\n", 10)
    assert head.startswith(b"HTTP/1.1 200 ")
    assert head_after < 1.0, head_after  # the body comes 1.5 s later
    assert b"late" in head + rest


def test_100_continue_is_not_held_and_pipelined_requests_are_answered() -> None:
    WRITES.clear()
    with _server() as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(
            b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n"
        )
        cont = _read_until(conn, b"\r\n\r\n", 10)
        assert cont.startswith(b"HTTP/1.1 100 ")
        conn.sendall(b"hi")
        first = _read_until(conn, b"hello", 10)
        assert first.startswith(b"HTTP/1.1 200 ")
        two = b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 1\r\n\r\nz"
        conn.sendall(two * 2)
        got = b""
        while got.count(b"hello") < 2:
            got += _read_until(conn, b"hello", 10)
    assert got.count(b"HTTP/1.1 200 ") == 2
