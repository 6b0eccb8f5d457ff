"""RFC 5424 syslog over TCP or TLS, octet-counted (RFC 6587 section 3.4.1; RFC 5425 for TLS).

One message per event::

    <PRI>1 TIMESTAMP HOSTNAME domestique hub MSGID [domestique@32473 id="…" endpoint="…"
        kind="…" action="…" codes="…" class_uid="…" seq="…" user="…"] BOM{OCSF JSON}

``PRI`` = facility (default 13, *log audit*) × 8 + severity (allow 6 info, redact and ask 5
notice, deny and block 4 warning, integrity alert 2 critical). ``HOSTNAME`` is the endpoint
that decided, ``MSGID`` ``decision`` or ``integrity``, ``id`` the dedup key. 32473 is the
enterprise number RFC 5612 reserves for examples; the SD-ID is stable so SIEM parsers can key on
it. Each message is framed as ``LENGTH SP MESSAGE``.

Delivery: a batch counts as delivered only once the receiver's TCP stack has acknowledged every
byte of it (Linux: the socket's unacknowledged send queue, ``TIOCOUTQ``, is empty); a broken
connection before that re-sends the batch on a new one. TCP syslog has no application-level
acknowledgement, so a receiver that dies after its kernel acknowledged bytes it never read can
lose them: where that matters, use OTLP, which acknowledges each request.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import struct
import sys
import termios
import time
from collections.abc import Sequence

from domestique.hub.sinks._base import SinkError, describe_os_error, os_error_code, tls_context
from domestique.hub.sinks.config import SinkSpec
from domestique.hub.sinks.events import Event

SD_ID = "domestique@32473"
APP_NAME = "domestique"
PROC_ID = "hub"
BOM = b"\xef\xbb\xbf"
CONNECT_TIMEOUT_S = 10.0
ACK_TIMEOUT_S = 30.0
_SD_ESCAPE = str.maketrans({"\\": "\\\\", '"': '\\"', "]": "\\]"})


def _header_field(value: str, limit: int) -> str:
    """A HOSTNAME/APP-NAME token: printable US-ASCII without space, else NILVALUE."""
    clean = "".join(c if 33 <= ord(c) <= 126 else "_" for c in value[:limit])
    return clean or "-"


def _timestamp(value: str) -> str:
    """The stored RFC 3339 UTC time (at most 6 fraction digits), else NILVALUE."""
    if len(value) >= 20 and value.endswith("Z") and value[10] == "T" and value.isascii():
        head, _, frac = value[:-1].partition(".")
        if len(head) == 19 and (not frac or (frac.isdigit() and len(frac) <= 6)):
            return value
    return "-"


def _param(name: str, value: object) -> str:
    text = str(value).translate(_SD_ESCAPE)
    return f' {name}="{text}"'


def format_message(event: Event, facility: int) -> bytes:
    """One RFC 5424 message (without framing)."""
    severity = event.severity[0]
    sd = (
        f"[{SD_ID}"
        + _param("id", event.uid)
        + _param("endpoint", event.endpoint.id)
        + _param("kind", event.kind)
        + _param("action", event.action)
        + _param("codes", " ".join(event.codes))
        + _param("class_uid", event.class_uid)
        + (_param("seq", event.seq) if event.seq is not None else "")
        + (_param("user", event.endpoint.user) if event.endpoint.user else "")
        + "]"
    )
    head = (
        f"<{facility * 8 + severity}>1 {_timestamp(event.time)} "
        f"{_header_field(event.endpoint.host, 255)} {APP_NAME} {PROC_ID} "
        f"{'decision' if event.kind == 'decision' else 'integrity'} {sd} "
    )
    return head.encode("utf-8") + BOM + event.body


def frame(message: bytes) -> bytes:
    """RFC 6587 octet counting: ``LENGTH SP MESSAGE``."""
    return str(len(message)).encode("ascii") + b" " + message


def encode_batch(events: Sequence[Event], facility: int) -> bytes:
    return b"".join(frame(format_message(e, facility)) for e in events)


class SyslogSink:
    """A persistent TCP (or TLS) connection to one syslog receiver."""

    def __init__(self, spec: SinkSpec) -> None:
        self.spec = spec
        self._sock: socket.socket | None = None

    def _connect(self) -> socket.socket:
        spec = self.spec
        try:
            raw = socket.create_connection((spec.host, spec.port), timeout=CONNECT_TIMEOUT_S)
        except OSError as exc:
            raise SinkError(
                os_error_code(exc),
                f"cannot connect to {spec.host}:{spec.port}: {describe_os_error(exc)}",
            ) from None
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock: socket.socket = raw
        if spec.tls:
            try:
                sock = tls_context(spec).wrap_socket(raw, server_hostname=spec.host)
            except (OSError, ValueError) as exc:
                raw.close()
                raise SinkError(
                    os_error_code(exc) if isinstance(exc, OSError) else "hub.sink.tls",
                    f"TLS to {spec.host}:{spec.port}: {describe_os_error(exc)}",
                ) from None
        sock.settimeout(ACK_TIMEOUT_S)
        return sock

    def send(self, events: Sequence[Event]) -> None:
        if not events:
            return
        data = encode_batch(events, self.spec.facility)
        if self._sock is not None and not _established(self._sock):
            self.close()  # the receiver went away since the last batch: reconnect
        if self._sock is None:
            self._sock = self._connect()
        try:
            self._sock.sendall(data)
            _wait_acknowledged(self._sock, ACK_TIMEOUT_S)
        except OSError as exc:
            self.close()
            raise SinkError(
                os_error_code(exc),
                f"sending to {self.spec.host}:{self.spec.port}: {describe_os_error(exc)}",
            ) from None

    def close(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None


_TCP_ESTABLISHED = 1
_TCP_CLOSE_WAIT = 8


def _unacknowledged(sock: socket.socket) -> int:
    buf = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    return int(struct.unpack("i", buf)[0])


def _tcp_state(sock: socket.socket) -> int:
    return int(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0])


def _established(sock: socket.socket) -> bool:
    """Still open both ways (a receiver that closed or reset it is not)."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        return _tcp_state(sock) == _TCP_ESTABLISHED
    except OSError:
        return False


def _wait_acknowledged(sock: socket.socket, timeout: float) -> None:
    """Return once the peer's TCP acknowledged every byte sent; OSError if the connection
    broke first (a reset empties the send queue, so the state is checked too), TimeoutError
    after ``timeout``."""
    if not sys.platform.startswith("linux"):
        return  # no portable way to ask: a sent batch counts as delivered
    deadline = time.monotonic() + timeout
    delay = 0.0002
    while True:
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            raise OSError(err, os.strerror(err))
        if _tcp_state(sock) not in (_TCP_ESTABLISHED, _TCP_CLOSE_WAIT):
            # Reset or gone: what was still queued is lost. (CLOSE_WAIT: the receiver closed
            # after acknowledging; the next batch reconnects.)
            raise ConnectionResetError(104, "the receiver closed the connection")
        if _unacknowledged(sock) == 0:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the receiver did not acknowledge the batch")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
