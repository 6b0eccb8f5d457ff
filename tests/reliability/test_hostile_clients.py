"""Hostile clients against a real ``domestique proxy`` process and a real local upstream.

A thousand idle connections, slowloris heads and trickled bodies must not starve a normal
request, must not grow the process without bound, and must be cut by the idle / head / body
deadlines (``proxy.server.ClientLimits``, shortened here through the environment so the test
is bounded). Huge heads are refused with 431 and never forwarded; thousands of tiny chunks and
pipelined requests are judged like any other request: answered, recorded, secret withheld.

Descriptors are counted in ``/proc/PID/fd`` of the firewall process, memory is its ``VmRSS``.
The bounds are generous (the machine running this may be loaded) but real: the counts they
allow are far below what an unbounded server reaches with the same clients.
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from domestique.audit import AuditStore
from domestique.proxy.server import ClientLimits
from proxy.upstream import Upstream, run_upstream

from .faults import anthropic_request, firewall

SECRET = "AKIAZ3MHQX7B2LKWP4RN"
IDLE = 1000
SLOW = 20  # slowloris heads, and as many trickled bodies
# The head and body deadlines for this test's firewall: far longer than opening the hostile
# connections takes even on a loaded machine, so they are all held at once before any is cut.
TIMEOUT_S = 25.0


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _settled_fds(pid: int) -> int:
    """The firewall's descriptors once the start-up probe's connection is gone (the probe
    connects and closes at once; the firewall closes its side when it reads the end, a moment
    later: counted before that, the base is one too high)."""
    last, stable_since = _fds(pid), time.monotonic()
    deadline = stable_since + 10
    while time.monotonic() < deadline and time.monotonic() - stable_since < 1.0:
        time.sleep(0.1)
        now = _fds(pid)
        if now != last:
            last, stable_since = now, time.monotonic()
    return last


def _sockets(pid: int) -> int:
    return sum(
        os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        for fd in os.listdir(f"/proc/{pid}/fd")
    )


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _wait_for(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(condition())  # type: ignore[operator]


def _open_file_room(needed: int) -> None:
    """Raise this process's soft descriptor limit if it cannot hold ``needed`` sockets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the hard limit on open files ({hard}) is below {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


@contextmanager
def _proxy(tmp_path: Path, **env: str) -> Iterator[tuple[Upstream, str, int]]:
    extra = {
        "DOMESTIQUE_PROXY_HEADER_TIMEOUT": str(TIMEOUT_S),
        "DOMESTIQUE_PROXY_BODY_TIMEOUT": str(TIMEOUT_S),
        **env,
    }
    with run_upstream() as up, firewall(tmp_path, up.url, extra_env=extra) as (url, proc):
        yield up, url, proc.pid


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _closed_by_peer(sock: socket.socket) -> bytes | None:
    """What the firewall sent before closing, or None while the connection is still open."""
    sock.setblocking(False)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except BlockingIOError:
        return None
    except ConnectionResetError:
        pass
    return data


def _records(home: Path) -> list[tuple[str, tuple[str, ...]]]:
    store = AuditStore.open(home)
    try:
        return [(r.action.value, r.codes) for r in store.records()]
    finally:
        store.close()


def _post(path: str, body: bytes, *, extra: bytes = b"") -> bytes:
    return (
        b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"content-type: application/json\r\nx-api-key: k\r\n" + extra
        + b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


def _header(size: int) -> bytes:
    return b"x-big: " + b"a" * size + b"\r\n"


def _message(text: str) -> bytes:
    return (
        b'{"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "'
        + text.encode()
        + b'"}]}'
    )


def _read_answers(sock: socket.socket, count: int, timeout: float = 30) -> list[bytes]:
    """``count`` HTTP/1.1 answers with a content-length, in the order they came."""
    sock.settimeout(timeout)
    buf = b""
    answers: list[bytes] = []
    while len(answers) < count:
        head_end = buf.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buf[:head_end].decode("latin-1")
            length = next(
                int(line.split(":", 1)[1])
                for line in head.split("\r\n")
                if line.lower().startswith("content-length:")
            )
            if len(buf) >= head_end + 4 + length:
                answers.append(buf[: head_end + 4 + length])
                buf = buf[head_end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    return answers


def test_idle_slowloris_and_slow_body_clients_do_not_starve_a_normal_request(
    tmp_path: Path,
) -> None:
    _open_file_room(IDLE + 2 * SLOW + 256)
    with _proxy(tmp_path) as (up, url, pid):
        port = _port(url)
        base_fds, base_rss = _settled_fds(pid), _rss_kib(pid)

        t0 = time.monotonic()
        idle = [_connect(port) for _ in range(IDLE)]
        heads = [_connect(port) for _ in range(SLOW)]
        bodies = [_connect(port) for _ in range(SLOW)]
        for sock in heads:
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for sock in bodies:  # a whole head announcing 4 KB, then a byte at a time
            sock.sendall(_post("/v1/messages", b" " * 4096)[:-4095])
        stop = threading.Event()

        def trickle() -> None:
            n = 0
            while not stop.wait(0.4):
                n += 1
                for sock in heads:
                    with suppress(OSError):
                        sock.send(f"x-h{n}: 1\r\n".encode())
                for sock in bodies:
                    with suppress(OSError):
                        sock.send(b" ")

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        try:
            # every hostile connection is held by the firewall at once
            held = _wait_for(lambda: _fds(pid) >= base_fds + IDLE + 2 * SLOW, TIMEOUT_S * 0.6)
            assert held, (_fds(pid), f"{time.monotonic() - t0:.1f} s after the first connect")
            held_fds, held_rss = _fds(pid), _rss_kib(pid)

            # a normal client is answered at once meanwhile
            times = []
            with httpx.Client(timeout=10, trust_env=False) as client:
                for i in range(5):
                    t0 = time.monotonic()
                    resp = anthropic_request(client, url, f"hello {i}")
                    times.append(time.monotonic() - t0)
                    assert resp.status_code == 200
            assert statistics.median(times) < 1.0, times
            assert max(times) < 3.0, times
            # about 5 KB per connection here; unbounded buffering would show in megabytes
            assert held_rss - base_rss < 64 * 1024, (base_rss, held_rss)

            # the deadlines cut them all: idle ones closed silently, the slow ones with 408
            assert _wait_for(lambda: _fds(pid) <= base_fds + 8, 4 * TIMEOUT_S + 10), _fds(pid)
            after_fds = _fds(pid)
            outcomes = [_closed_by_peer(s) for s in idle + heads + bodies]
        finally:
            stop.set()
            trickler.join(5)
            for sock in idle + heads + bodies:  # also when an assertion failed above
                sock.close()

    assert held_fds >= base_fds + IDLE + 2 * SLOW
    assert after_fds <= base_fds + 8
    assert outcomes[:IDLE] == [b""] * IDLE  # idle: closed without a word
    for answer in outcomes[IDLE:]:
        assert answer is not None
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:80]
    # nothing trickled reached the upstream: only the 5 normal requests did
    assert len(up.received) == 5
    records = _records(tmp_path)
    assert records.count(("allow", ())) == 5
    # each cut body is refused and recorded as a client that left (a head never reached the app)
    assert [r for r in records if r[0] != "allow"] == [("block", ("proxy.truncated_body",))] * SLOW


LIMIT = 256  # the descriptor limit of the firewalls below; their connection cap is 64


@contextmanager
def _limited_firewall(tmp_path: Path) -> Iterator[tuple[Upstream, str, subprocess.Popen[bytes]]]:
    """A firewall under a 256-descriptor limit whose head deadline (60 s) sheds nobody here:
    only room does."""
    _open_file_room(400 + 256)

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))

    extra = {"DOMESTIQUE_PROXY_HEADER_TIMEOUT": "60"}
    with (
        run_upstream() as up,
        firewall(tmp_path, up.url, preexec=low_limit, extra_env=extra) as (url, proc),
    ):
        yield up, url, proc


def _said_so_far(proc: subprocess.Popen[bytes]) -> str:
    """What the firewall wrote to its stderr pipe, which nobody drains while it runs."""
    assert proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    return (proc.stderr.read() or b"").decode()


def test_more_idle_clients_than_descriptors_are_shed_for_a_real_one(tmp_path: Path) -> None:
    """Under a 256-descriptor limit, 400 idle connections: the firewall never runs out for
    long (it closes the longest-waiting idle ones past its cap of 64, and more when ``accept``
    fails), says so in a line, not a traceback per failure, and a real client is answered."""
    with _limited_firewall(tmp_path) as (up, url, proc):
        port = _port(url)
        idle: list[socket.socket] = []
        most = 0
        try:  # the 400 sockets are closed however the test ends (not left to the collector)
            for _ in range(400):
                idle.append(_connect(port))
                most = max(most, _fds(proc.pid))
            assert _wait_for(lambda: _fds(proc.pid) <= 64 + 16, 10), _fds(proc.pid)
            times = []
            with httpx.Client(timeout=10, trust_env=False) as client:
                for i in range(5):
                    t0 = time.monotonic()
                    assert anthropic_request(client, url, f"hello {i}").status_code == 200
                    times.append(time.monotonic() - t0)
            closed = sum(_closed_by_peer(s) == b"" for s in idle)
            # a traceback per failed accept once filled the pipe and froze the firewall on its
            # next write; running out is one line now
            said = _said_so_far(proc)
        finally:
            for sock in idle:
                sock.close()
    assert "Traceback" not in said, said[-2000:]
    assert said.count("out of open files") <= 2, said[-2000:]
    assert most < LIMIT
    assert statistics.median(times) < 1.0, times
    # the oldest were closed to make room; the newest are still held
    assert 400 - 64 - 8 <= closed < 400
    assert len(up.received) == 5


def test_a_burst_past_the_descriptor_limit_costs_a_line_not_the_server(tmp_path: Path) -> None:
    """400 connections already queued when the firewall next runs (stopped while they
    connect): one readiness event accepts until the 256-descriptor limit and then fails. It
    sheds the longest-waiting idle clients, writes at most a line or two to a stderr nobody
    drains (a traceback per failed accept once filled the pipe and froze the server for
    good), and answers a real client."""
    import signal

    with _limited_firewall(tmp_path) as (up, url, proc):
        port = _port(url)
        idle: list[socket.socket] = []
        try:
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                idle = [_connect(port) for _ in range(400)]  # the kernel's queue holds them
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            assert _wait_for(lambda: _fds(proc.pid) <= 64 + 16, 10), _fds(proc.pid)
            with httpx.Client(timeout=10, trust_env=False) as client:
                assert anthropic_request(client, url, "hello").status_code == 200
            said = _said_so_far(proc)
        finally:
            for sock in idle:
                sock.close()
    assert "Traceback" not in said, said[-2000:]
    assert 1 <= said.count("out of open files") <= 2, said[-2000:]
    assert len(up.received) == 1


@contextmanager
def _endless_upstream() -> Iterator[tuple[str, threading.Event, list[float]]]:
    """An Anthropic upstream whose streamed answer never ends (1 KB events, for up to 60 s).
    The event is set when the firewall has hung up on it (a write failed)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hung_up = threading.Event()
    started: list[float] = []
    event = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"' + b"x" * 1000 + b'"}}\n\n'
    )

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            started.append(time.monotonic())
            end = time.monotonic() + 60
            try:
                self.wfile.write(b'event: message_start\ndata: {"type":"message_start",'
                                 b'"message":{"id":"m","content":[]}}\n\n')  # fmt: skip
                while time.monotonic() < end:
                    self.wfile.write(event)
            except OSError:
                hung_up.set()
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hung_up, started
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_that_stops_reading_an_answer_is_dropped_and_the_upstream_closed(
    tmp_path: Path,
) -> None:
    """The client reads the head of a streamed answer, then nothing: past the send deadline
    (2 s here) the firewall drops it and closes the upstream stream, instead of holding both."""
    extra = {"DOMESTIQUE_PROXY_SEND_TIMEOUT": "2"}
    with (
        _endless_upstream() as (up_url, hung_up, started),
        firewall(tmp_path, up_url, extra_env=extra) as (url, proc),
    ):
        base_sockets = _sockets(proc.pid)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(10)
        sock.connect(("127.0.0.1", _port(url)))
        body = b'{"model": "m", "max_tokens": 9, "stream": true, "messages": [{"role": '
        body += b'"user", "content": "hi"}]}'
        sock.sendall(_post("/v1/messages", body))
        assert sock.recv(100).startswith(b"HTTP/1.1 200 ")
        # ... and never reads again
        assert hung_up.wait(40), "the upstream stream was never closed"
        gave_up = time.monotonic() - started[0]
        # neither the client's nor the upstream's socket is held any more
        assert _wait_for(lambda: _sockets(proc.pid) <= base_sockets, 10), _sockets(proc.pid)
        sock.close()
    assert 2 <= gave_up < 30, gave_up
    assert _records(tmp_path) == [("allow", ())]  # the decision stands recorded


@pytest.mark.parametrize("pieces", [1, 64], ids=["one-read", "1k-reads"])
def test_a_huge_head_is_refused_431_and_never_forwarded(tmp_path: Path, pieces: int) -> None:
    limit = ClientLimits().max_head
    with _proxy(tmp_path) as (up, url, pid):
        port = _port(url)
        huge = _post("/v1/messages", _message("hi"), extra=_header(limit + 1))
        many = _post(
            "/v1/messages",
            _message("hi"),
            extra=b"".join(b"x-%d: v\r\n" % i for i in range(limit // 8)),
        )
        for request in (huge, many):
            sock = _connect(port)
            step = -(-len(request) // pieces)
            with suppress(OSError):  # the firewall may close before the last piece
                for i in range(0, len(request), step):
                    sock.sendall(request[i : i + step])
                    if pieces > 1:
                        time.sleep(0.002)
            assert _wait_for(lambda s=sock: _closed_by_peer(s) is not None, 10)
            sock.setblocking(True)
            sock.close()
        # under the limit, however split: judged and forwarded as usual
        sock = _connect(port)
        fits = _post("/v1/messages", _message("hi"), extra=_header(limit // 2))
        step = -(-len(fits) // pieces)
        for i in range(0, len(fits), step):
            sock.sendall(fits[i : i + step])
        (answer,) = _read_answers(sock, 1)
        sock.close()
        assert _fds(pid) < 32
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert [r.headers.get("x-big", "")[:3] for r in up.received] == ["aaa"]
    # refused before any request existed: nothing forwarded, nothing judged, nothing recorded
    assert _records(tmp_path) == [("allow", ())]


def test_a_huge_head_pipelined_behind_a_normal_request_is_refused(tmp_path: Path) -> None:
    limit = ClientLimits().max_head
    with _proxy(tmp_path) as (up, url, _pid):
        sock = _connect(_port(url))
        normal = _post("/v1/messages", _message("first"))
        huge = _post("/v1/messages", _message("second"), extra=_header(limit))
        sock.sendall(normal + huge)
        (first,) = _read_answers(sock, 1)
        assert _wait_for(lambda: _closed_by_peer(sock) is not None, 10)
        sock.setblocking(True)
        sock.settimeout(5)
        sock.close()
    assert first.startswith(b"HTTP/1.1 200 ")
    assert len(up.received) == 1
    assert b"first" in up.received[0].body


def test_thousands_of_tiny_chunks_are_judged_whole(tmp_path: Path) -> None:
    """A chunked body in 1-3 byte chunks: the secret split across chunks is still withheld."""
    body = _message(f"deploy with {SECRET} " + "padding " * 600)
    chunks = []
    i = 0
    while i < len(body):
        size = 1 + i % 3
        chunks.append(body[i : i + size])
        i += size
    assert len(chunks) > 2000
    wire = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    head = (
        b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"x-api-key: k\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    with _proxy(tmp_path) as (up, url, _pid):
        for writes in (1, 200):  # all at once, then in 200 separate writes
            sock = _connect(_port(url))
            sock.sendall(head)
            step = -(-len(wire) // writes)
            for j in range(0, len(wire), step):
                sock.sendall(wire[j : j + step])
            (answer,) = _read_answers(sock, 1)
            sock.close()
            assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert len(up.received) == 2
    for received in up.received:
        assert SECRET.encode() not in received.body
        assert b"[REDACTED:" in received.body
        assert received.body.count(b"padding") == 600
    assert len(_records(tmp_path)) == 2


def test_pipelined_requests_are_each_answered_in_order_and_recorded(tmp_path: Path) -> None:
    texts = [f"request {i} with {SECRET}" if i % 2 else f"request {i}" for i in range(10)]
    with _proxy(tmp_path) as (up, url, _pid):
        sock = _connect(_port(url))
        sock.sendall(b"".join(_post("/v1/messages", _message(t)) for t in texts))
        answers = _read_answers(sock, len(texts))
        sock.close()
    assert len(answers) == len(texts)
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    # in order: upstream saw them in the order sent, each answer names its own record
    assert [r.body.count(b"request %d" % i) for i, r in enumerate(up.received)] == [1] * 10
    assert not any(SECRET.encode() in r.body for r in up.received)
    ids = [
        next(
            line.split(b":", 1)[1].strip()
            for line in a.split(b"\r\n")
            if line.lower().startswith(b"x-domestique-record:")
        ).decode()
        for a in answers
    ]
    store = AuditStore.open(tmp_path)
    try:
        stored = {r.id for r in store.records()}
    finally:
        store.close()
    assert len(set(ids)) == 10
    assert set(ids) <= stored


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", ""])
def test_a_bad_timeout_setting_stops_the_start_in_one_line(tmp_path: Path, value: str) -> None:
    import subprocess
    import sys

    env = {**os.environ, "DOMESTIQUE_HOME": str(tmp_path), "DOMESTIQUE_PROXY_BODY_TIMEOUT": value}
    result = subprocess.run(
        [sys.executable, "-m", "domestique", "proxy", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "domestique proxy: DOMESTIQUE_PROXY_BODY_TIMEOUT must be a number of seconds above 0, "
        f"got {value!r}\n"
    )


def test_the_default_limits() -> None:
    limits = ClientLimits.from_env({})
    assert (limits.header_timeout, limits.body_timeout, limits.send_timeout) == (20.0, 20.0, 60.0)
    assert limits.keep_alive == 5
    assert (limits.min_rate, limits.max_head) == (500, 64 * 1024)
    assert ClientLimits.from_env({"DOMESTIQUE_PROXY_HEADER_TIMEOUT": "2.5"}).header_timeout == 2.5
