"""The firewall's (and the hub's) guard on every client connection, over uvicorn's h11 protocol.

Imported only by :func:`domestique.proxy.server.guarded_protocol`, when a server starts: it
imports uvicorn and h11 at the top.
"""

from __future__ import annotations

import asyncio
import errno
import sys
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from domestique.proxy.server import ClientLimits


def _closing_answer(status: bytes, text: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\ncontent-length: " + str(len(text)).encode() + b"\r\n\r\n" + text
    )


_HEAD_TOO_LARGE = _closing_answer(
    b"431 Request Header Fields Too Large", b"request head over the firewall's size limit\n"
)
_TIMED_OUT = _closing_answer(b"408 Request Timeout", b"request not sent within the timeout\n")


def _cancel(timer: asyncio.TimerHandle | None) -> None:
    if timer is not None:
        timer.cancel()


def protocol_for(limits: ClientLimits, cap: int) -> type[GuardedH11Protocol]:
    """A protocol class of its own for one server: its limits, cap and waiting list."""
    attrs = {"limits": limits, "cap": cap, "waiting": OrderedDict()}
    return type("GuardedH11Protocol", (GuardedH11Protocol,), attrs)


# accept() failures asyncio survives by pausing the listener for a second (its own list)
_OUT_OF_ROOM = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
SHED_EVERY_S = 0.5  # one accept burst fails up to its backlog times in a row: shed once
LINE_EVERY_S = 10.0


class GuardedServer(uvicorn.Server):
    """uvicorn's server with :func:`keep_room` on its loop from before the first ``accept``."""

    def __init__(self, config: Any, name: str) -> None:
        super().__init__(config)
        self.name = name

    async def startup(self, sockets: Any = None) -> None:
        protocol = self.config.http_protocol_class
        if isinstance(protocol, type) and issubclass(protocol, GuardedH11Protocol):
            keep_room(asyncio.get_running_loop(), protocol, self.name)
        await super().startup(sockets)


def keep_room(
    loop: asyncio.AbstractEventLoop, protocol: type[GuardedH11Protocol], name: str
) -> None:
    """Make running out of descriptors in ``accept`` cost one line and the oldest idle clients.

    asyncio reports every failed ``accept`` of a burst to the loop's exception handler (with a
    traceback, up to the listen backlog's 2,048 times for one readiness event) and retries a
    second later. Written to a stderr pipe nobody drains, that flood filled the pipe and froze
    the whole server on its next write. Here such a failure closes the quarter of the
    connections that have waited longest for a request head (at most once per
    :data:`SHED_EVERY_S`), so the retry finds room, and says so on stderr at most once per
    :data:`LINE_EVERY_S`. Every other report goes to the handler that was there before.
    """
    before = loop.get_exception_handler()
    last = {"shed": -1e9, "line": -1e9}

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if not (
            isinstance(exc, OSError)
            and exc.errno in _OUT_OF_ROOM
            and str(context.get("message", "")).startswith("socket.accept()")
        ):
            if before is not None:
                before(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        now = loop.time()
        if now - last["shed"] < SHED_EVERY_S:
            return
        last["shed"] = now
        closed = protocol.shed(max(1, len(protocol.waiting) // 4))
        if now - last["line"] >= LINE_EVERY_S:
            last["line"] = now
            sys.stderr.write(
                f"{name}: out of open files ({exc.strerror}); closed {closed} connection(s) "
                "waiting longest for a request, new ones wait in the kernel's queue\n"
            )
            sys.stderr.flush()

    loop.set_exception_handler(handler)


class GuardedH11Protocol(H11Protocol):
    """The h11 protocol with :attr:`limits` enforced; made per server by :func:`protocol_for`."""

    limits: ClientLimits
    cap: int
    waiting: OrderedDict[Any, None]  # connections in the head phase, oldest first

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._phase: str | None = None  # "head", "body" or None (answering / closed)
        self._phase_start = 0.0
        self._phase_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None
        self._send_deadline: asyncio.TimerHandle | None = None

    @classmethod
    def shed(cls, count: int) -> int:
        """Close up to ``count`` of the connections that have waited longest for a head."""
        closed = 0
        while closed < count and cls.waiting:
            oldest, _ = cls.waiting.popitem(last=False)
            oldest._set_phase(None)
            oldest.transport.close()
            closed += 1
        return closed

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.cap:
            self.shed(1)
        self._follow_phase()

    def connection_lost(self, exc: Exception | None) -> None:
        self._set_phase(None)
        self._stop_send_deadline()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_deadline is None:
            self._send_deadline = self.loop.call_later(self.limits.send_timeout, self._not_read)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stop_send_deadline()

    def _stop_send_deadline(self) -> None:
        _cancel(self._send_deadline)
        self._send_deadline = None

    def _not_read(self) -> None:
        self._send_deadline = None
        if self.flow.write_paused and not self.transport.is_closing():
            self.transport.abort()  # close() would wait for a buffer nobody reads

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and self._head_too_large(data):
            return
        self._phase_bytes += len(data)
        super().data_received(data)
        self._follow_phase()

    def on_response_complete(self) -> None:
        if self.conn.our_state is h11.DONE and self._head_too_large(b""):
            return  # a pipelined head already buffered
        super().on_response_complete()
        self._follow_phase()

    def _head_too_large(self, data: bytes) -> bool:
        buffered = self.conn.trailing_data[0]
        if len(buffered) + len(data) <= self.limits.max_head:
            return False
        head = (bytes(buffered) + data)[: self.limits.max_head + 4]
        if b"\r\n\r\n" in head or b"\n\n" in head:
            return False
        self._set_phase(None)
        if not self.transport.is_closing():
            self.transport.write(_HEAD_TOO_LARGE)
            self.transport.close()
        return True

    def _follow_phase(self) -> None:
        state = self.conn.their_state
        phase = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if self.transport is None or self.transport.is_closing():
            phase = None
        if phase != self._phase:
            self._set_phase(phase)

    def _set_phase(self, phase: str | None) -> None:
        if self._phase == "head":
            self.waiting.pop(self, None)
        self._phase = phase
        self._phase_start = self.loop.time()
        self._phase_bytes = 0
        self._stop_deadline()
        if phase is not None:
            if phase == "head":
                self.waiting[self] = None
            self._schedule(self._timeout())

    def _timeout(self) -> float:
        base = self.limits.header_timeout if self._phase == "head" else self.limits.body_timeout
        allowed = base + self._phase_bytes / self.limits.min_rate
        return min(allowed, 2 * base) if self._phase == "head" else allowed

    def _schedule(self, after: float) -> None:
        self._deadline = self.loop.call_later(max(after, 0.01), self._check_deadline)

    def _stop_deadline(self) -> None:
        _cancel(self._deadline)
        self._deadline = None

    def _check_deadline(self) -> None:
        self._deadline = None
        if self._phase is None or self.transport.is_closing():
            return
        if self.flow.read_paused:  # uvicorn stopped reading: wait for it, not the client
            self._phase_start = self.loop.time()
            self._schedule(self._timeout())
            return
        left = self._phase_start + self._timeout() - self.loop.time()
        if left > 0:
            self._schedule(left)
            return
        began = self._phase_bytes > 0 or bool(self.conn.trailing_data[0])
        answered = self.cycle is not None and self.cycle.response_started
        body = self.conn.their_state is h11.SEND_BODY
        self._set_phase(None)
        if (body or began) and not answered:
            self.transport.write(_TIMED_OUT)
        self.transport.close()  # an idle connection is just closed
