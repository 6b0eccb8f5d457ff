"""Helpers for the fault-injection tests: processes under a file-size limit, a firewall process.

``full_disk`` runs a child with ``RLIMIT_FSIZE`` set (and ``SIGXFSZ`` ignored, so a write past
the limit fails with ``EFBIG`` instead of killing the process): every file the child tries to
grow past the limit (SQLite's database and WAL included) is a full disk to it.
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def full_disk(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def firewall(
    home: Path,
    upstream: str,
    *,
    preexec: Callable[[], None] | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``domestique proxy`` as a real process for every provider at ``upstream``."""
    port = free_port()
    # One worker unless told: these tests count one process's descriptors and memory, and
    # limit its resources (every worker runs the same guarded protocol).
    env = {
        **os.environ,
        "DOMESTIQUE_HOME": str(home),
        "DOMESTIQUE_PROXY_WORKERS": "1",
        **(extra_env or {}),
    }
    args = [f"--upstream={n}={upstream}" for n in ("anthropic", "openai", "gemini")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "domestique", "proxy", "--port", str(port), "--quiet", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=preexec,  # noqa: PLW1509 - a resource limit for this child only, no threads yet
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read() if proc.stderr else b""
                proc.kill()
                raise RuntimeError(f"firewall did not start: {err[-2000:]!r}") from None
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()


def anthropic_request(client: httpx.Client, url: str, text: str) -> httpx.Response:
    return client.post(
        url + "/v1/messages",
        json={"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": text}]},
        headers={"x-api-key": "k"},
    )
