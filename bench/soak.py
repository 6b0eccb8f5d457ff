"""Soak: the real ``domestique proxy`` process at a steady rate for N minutes (not CI).

    python bench/soak.py [--minutes 30] [--rate 5] [--clients 8]     (or: ./dev soak MINUTES)

Requests go to a real local upstream (a stdlib HTTP server in this process that answers as
Anthropic's Messages API, JSON or streamed, echoing every placeholder it was sent). The mix:
bodies of about 1 KB (40 %), 10 KB (35 %), 100 KB (20 %) and 1 MB (5 %), built by
``bench_proxy.make_body`` from real source files; half of them streamed; a quarter carry a
secret (redacted on the way up, restored on the way down). Each answer is checked: status
200, a streamed answer ends with ``message_stop``, a secret request gets its secret back
restored, and the upstream never receives the secret.

Printed: one row per minute (requests, errors, latency median / p95 / max, the firewall's RSS
and open descriptors from ``/proc``), then the "nothing lost" checks: decision records in the
store against answers received, ``domestique audit verify``, secrets seen by the upstream.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from bench_proxy import make_body

SECRET = "AKIAZ3MHQX7B2LKWP4RN"
PLACEHOLDER = re.compile(rb"\[REDACTED:[a-z0-9_]+:[0-9a-f]{8}\]")
SIZES = ((1_000, 40), (10_000, 35), (100_000, 20), (1_000_000, 5))


class Upstream:
    """Counts only (the soak must not grow here either): requests, and secrets it was sent."""

    def __init__(self) -> None:
        self.requests = 0
        self.secrets_seen = 0
        self.lock = threading.Lock()


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


_EMPTY_TEXT = {"type": "text", "text": ""}
_END_TURN = {"stop_reason": "end_turn"}


def _stream(text: str) -> list[bytes]:
    message = {
        "id": "msg_soak",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 0},
    }
    events = [
        _sse("message_start", {"type": "message_start", "message": message}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for i in range(0, len(text), 7):  # 7-character pieces: placeholders always split
        delta = {"type": "text_delta", "text": text[i : i + 7]}
        events.append(
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    events += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 9},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return events


def _handler(up: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with up.lock:
                up.requests += 1
                up.secrets_seen += SECRET.encode() in body
            seen = " ".join(dict.fromkeys(p.decode() for p in PLACEHOLDER.findall(body)))
            text = f"Working on it. I saw: {seen or 'nothing hidden'}. " + "Done. " * 20
            if json.loads(body).get("stream"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for event in _stream(text):
                    self.wfile.write(event)
                    self.wfile.flush()
                self.close_connection = True
                return
            answer = json.dumps(
                {
                    "id": "msg_soak",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1, "output_tokens": 9},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    return Handler


@contextmanager
def upstream() -> Iterator[tuple[str, Upstream]]:
    up = Upstream()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(up))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", up
    finally:
        server.shutdown()
        server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def firewall(home: Path, upstream_url: str) -> Iterator[tuple[str, int]]:
    port = _free_port()
    env = {**os.environ, "DOMESTIQUE_HOME": str(home), "DOMESTIQUE_HOOKD": "off"}
    ups = [f"--upstream={n}={upstream_url}" for n in ("anthropic", "openai", "gemini")]
    log = (home / "proxy.log").open("wb")  # its "listening" lines; any error it writes
    proc = subprocess.Popen(
        [sys.executable, "-m", "domestique", "proxy", "--port", str(port), "--quiet", *ups],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("the firewall did not start") from None
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Bodies:
    """A few prebuilt bodies per size (building a 1 MB body each time would load the driver)."""

    def __init__(self) -> None:
        self.by_size = {size: json.dumps(make_body(size)) for size, _ in SIZES}

    def pick(self, rng: random.Random) -> tuple[bytes, bool, bool]:
        size = rng.choices([s for s, _ in SIZES], weights=[w for _, w in SIZES])[0]
        stream = rng.random() < 0.5
        secret = rng.random() < 0.25
        obj = json.loads(self.by_size[size])
        obj["stream"] = stream
        # a unique first message: the firewall cannot answer from its scan cache every time
        first = f"Task {rng.getrandbits(48):x}: " + obj["messages"][0]["content"]
        if secret:
            first += f" Deploy with the key {SECRET} please."
        obj["messages"][0]["content"] = first
        return json.dumps(obj).encode(), stream, secret


def one_request(client: httpx.Client, url: str, body: bytes, stream: bool, secret: bool) -> str:
    """'' when the answer is right, else what was wrong."""
    headers = {"x-api-key": "k", "content-type": "application/json"}
    if stream:
        with client.stream("POST", url + "/v1/messages", content=body, headers=headers) as resp:
            if resp.status_code != 200:
                return f"status {resp.status_code}"
            text, stopped = [], False
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    if data.get("type") == "content_block_delta":
                        text.append(data["delta"].get("text", ""))
                    stopped = stopped or data.get("type") == "message_stop"
            answer = "".join(text)
            if not stopped:
                return "stream without message_stop"
    else:
        resp = client.post(url + "/v1/messages", content=body, headers=headers)
        if resp.status_code != 200:
            return f"status {resp.status_code}"
        answer = resp.json()["content"][0]["text"]
    if secret and SECRET not in answer:
        return "secret not restored"
    if "[REDACTED:" in answer:
        return "placeholder reached the client"
    return ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=float, default=5, help="requests per second, all clients")
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args(argv)

    bodies = Bodies()
    lock = threading.Lock()
    minute_rows: list[dict[str, Any]] = []
    current: dict[str, Any] = {"lat": [], "errors": 0, "streams": 0}
    counts = {"answered": 0, "errors": 0}
    problems: dict[str, int] = {}
    stop = threading.Event()
    interval = args.clients / args.rate  # each client's period

    with tempfile.TemporaryDirectory() as tmp, upstream() as (up_url, up):
        home = Path(tmp)
        with firewall(home, up_url) as (url, pid):

            def client(n: int) -> None:
                rng = random.Random(n)
                next_at = time.monotonic() + n * interval / args.clients
                with httpx.Client(timeout=60, trust_env=False) as c:
                    while not stop.is_set():
                        delay = next_at - time.monotonic()
                        if delay > 0 and stop.wait(delay):
                            break
                        next_at += interval
                        body, stream, secret = bodies.pick(rng)
                        t0 = time.perf_counter()
                        try:
                            problem = one_request(c, url, body, stream, secret)
                        except (httpx.HTTPError, ValueError, KeyError) as exc:
                            problem = type(exc).__name__
                        took = time.perf_counter() - t0
                        with lock:
                            if problem:
                                current["errors"] += 1
                                counts["errors"] += 1
                                problems[problem] = problems.get(problem, 0) + 1
                            else:
                                counts["answered"] += 1
                            current["lat"].append(took)
                            current["streams"] += stream

            threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
            start = time.monotonic()
            start_rss, start_fds = _rss_mb(pid), _fds(pid)
            for t in threads:
                t.start()
            print(
                f"firewall pid {pid}: at start RSS {start_rss:.1f} MB, {start_fds} fds; "
                f"{args.rate:g} req/s from {args.clients} clients for {args.minutes:g} min"
            )
            columns = ("minute", "requests", "streamed", "errors", "p50 ms", "p95 ms", "max ms")
            print("| " + " | ".join((*columns, "RSS MB", "fds")) + " |")
            print("|---:" * (len(columns) + 2) + "|")
            minute = 0
            end = start + args.minutes * 60
            while time.monotonic() < end:
                minute += 1
                target = min(start + minute * 60, end)
                time.sleep(max(0.0, target - time.monotonic()))
                with lock:
                    lat = sorted(current["lat"])
                    row = {
                        "minute": minute,
                        "n": len(lat),
                        "errors": current["errors"],
                        "streams": current["streams"],
                    }
                    current.update(lat=[], errors=0, streams=0)
                rss, fds = _rss_mb(pid), _fds(pid)
                if lat:
                    p50 = statistics.median(lat) * 1000
                    p95 = lat[min(len(lat) - 1, int(len(lat) * 0.95))] * 1000
                    top = lat[-1] * 1000
                else:
                    p50 = p95 = top = float("nan")
                row.update(rss=rss, fds=fds)
                minute_rows.append(row)
                print(
                    f"| {minute} | {row['n']} | {row['streams']} | {row['errors']} | {p50:.0f} "
                    f"| {p95:.0f} | {top:.0f} | {rss:.1f} | {fds} |",
                    flush=True,
                )
            stop.set()
            for t in threads:
                t.join(120)
        # the firewall has stopped (SIGTERM: its batched records are flushed)
        env = {**os.environ, "DOMESTIQUE_HOME": str(home)}
        verify = subprocess.run(
            [sys.executable, "-m", "domestique", "audit", "verify"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        from domestique.audit import AuditStore

        store = AuditStore.open(home)
        try:
            records = sum(1 for _ in store.records())
        finally:
            store.close()
        errors = counts["errors"]
        total = counts["answered"] + errors  # the last minute's stragglers included
        print()
        print(
            f"requests {total}, answered correctly {counts['answered']}, errors {errors} {problems}"
        )
        lost = "one per request" if records == total else "NOT one per request"
        print(f"decision records {records} for {total} requests: {lost}")
        print(f"upstream received {up.requests} requests, {up.secrets_seen} with the secret")
        print(f"audit verify: exit {verify.returncode} {verify.stdout.strip()[:200]}")
        rss = [r["rss"] for r in minute_rows]
        fds = [r["fds"] for r in minute_rows]
        if rss:
            print(f"RSS {min(rss):.1f}-{max(rss):.1f} MB, fds {min(fds)}-{max(fds)} over the run")
        ok = errors == 0 and up.secrets_seen == 0 and verify.returncode == 0 and records == total
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
