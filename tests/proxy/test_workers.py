"""``domestique proxy`` with several worker processes, as a real process tree.

One forked worker per core by default (at most 4): the parent binds every ``SO_REUSEPORT``
socket before it says "listening", the workers share the audit store (one valid chain) and the
vault, a dead worker stops the proxy, and SIGTERM lets answers in flight finish.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from domestique.proxy.server import MAX_DEFAULT_WORKERS, default_workers

from .upstream import run_upstream

SECRET = "AKIAZ3MHQX7B2LKWP4RN"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_REUSEPORT, /proc")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_default_is_one_worker_per_core_capped() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    expected = min(cores, MAX_DEFAULT_WORKERS) if sys.platform.startswith("linux") else 1
    assert default_workers({}) == expected
    assert default_workers({"DOMESTIQUE_PROXY_WORKERS": "3"}) == 3
    assert default_workers({"DOMESTIQUE_PROXY_WORKERS": "1"}) == 1


@pytest.mark.parametrize("raw", ["0", "-2", "two", "", "65", "1.5"])
def test_bad_worker_count_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="DOMESTIQUE_PROXY_WORKERS"):
        default_workers({"DOMESTIQUE_PROXY_WORKERS": raw})


def test_bad_worker_count_exits_2(private_home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "proxy", "--port", str(_free_port())],
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "DOMESTIQUE_PROXY_WORKERS": "lots"},
    )
    assert proc.returncode == 2
    assert b"DOMESTIQUE_PROXY_WORKERS must be a number" in proc.stderr
    assert b"Traceback" not in proc.stderr


def _start(port: int, upstream: str, workers: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "domestique",
            "proxy",
            "--port",
            str(port),
            "--upstream",
            f"anthropic={upstream}",
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "DOMESTIQUE_PROXY_WORKERS": str(workers)},
    )


def _until_listening(proc: subprocess.Popen[bytes]) -> None:
    """Read stderr up to the "listening" line (the parent prints it once the sockets listen)."""
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        assert line, f"the proxy stopped before listening (exit {proc.wait()})"
        if b"listening on" in line:
            return


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _post(port: int, text: str, **kw: object) -> httpx.Response:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": text}], **kw}
    return httpx.post(
        f"http://127.0.0.1:{port}/v1/messages",
        content=json.dumps(body),
        headers={"x-api-key": "k", "connection": "close"},  # a new connection each time
        timeout=60,
        trust_env=False,
    )


def _verify(home: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "domestique", "audit", "verify"],
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "DOMESTIQUE_HOME": str(home)},
    )
    return done.returncode, (done.stdout + done.stderr).decode()


@linux_only
def test_two_workers_serve_at_once_and_keep_one_valid_chain(private_home: Path) -> None:
    """A request sent the moment "listening" is printed is answered (it waits in the kernel's
    queue for its worker); 60 concurrent requests on their own connections are spread over
    both workers, each is redacted, restored and recorded exactly once, and the one audit log
    the two processes appended to verifies intact."""
    port = _free_port()
    with run_upstream() as up:
        proc = _start(port, up.url, 2)
        try:
            _until_listening(proc)
            first = _post(port, f"first {SECRET}")
            workers = _children(proc.pid)
            assert len(workers) == 2
            before = {w: _cpu_ticks(w) for w in workers}
            with ThreadPoolExecutor(20) as pool:
                answers = list(pool.map(lambda i: _post(port, f"n{i} {SECRET}"), range(60)))
            after = {w: _cpu_ticks(w) for w in workers}
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
        assert proc.returncode == 0
        for resp in [first, *answers]:
            assert resp.status_code == 200, resp.text
            assert SECRET in resp.text  # the placeholder came back restored
        assert SECRET.encode() not in up.bodies()
        assert len(up.received) == 61
    # Both workers judged requests (a judged request costs milliseconds of CPU; idle: none).
    assert all(after[w] - before[w] >= 2 for w in workers), (before, after)
    code, said = _verify(private_home)
    assert code == 0, said
    assert "intact: 61 records" in said
    ids = {r.headers["x-domestique-record"] for r in [first, *answers]}
    assert len(ids) == 61


@linux_only
def test_a_dead_worker_stops_the_proxy(private_home: Path) -> None:
    """Never half-judging: when one worker dies the parent stops the others and exits 1."""
    port = _free_port()
    with run_upstream() as up:
        proc = _start(port, up.url, 2)
        try:
            _until_listening(proc)
            assert _post(port, "hello").status_code == 200
            workers = _children(proc.pid)
            os.kill(workers[0], signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 1
    assert b"a worker stopped" in err
    with pytest.raises(ConnectionRefusedError):  # the other worker is gone too: nothing listens
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


@linux_only
def test_sigterm_lets_an_answer_in_flight_finish(private_home: Path) -> None:
    """SIGTERM to the parent: a streamed answer under way is relayed to its end, then every
    worker exits and the port is free."""
    port = _free_port()
    with run_upstream() as up:
        up.event_delay_s = 0.1  # a slow model: the stream takes about a second
        up.one_char = False
        proc = _start(port, up.url, 2)
        try:
            _until_listening(proc)
            with ThreadPoolExecutor(1) as pool:
                pending = pool.submit(_post, port, f"stream {SECRET}", stream=True)
                deadline = time.monotonic() + 30
                while not up.received:  # the request reached the upstream: answer under way
                    assert time.monotonic() < deadline
                    time.sleep(0.02)
                proc.send_signal(signal.SIGTERM)
                resp = pending.result(timeout=60)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert resp.status_code == 200
    assert "message_stop" in resp.text  # the whole stream, to its terminal event
    assert SECRET in resp.text
    assert proc.returncode == 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
