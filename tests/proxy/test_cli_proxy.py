"""``domestique proxy`` as a process: options per the contract, a real request through it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .upstream import run_upstream

SECRET = "AKIAZ3MHQX7B2LKWP4RN"


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("workers", ["1", "2"])
def test_proxy_command_redacts_and_forwards(private_home: Path, workers: str) -> None:
    """``domestique proxy --port P --upstream anthropic=URL`` scans, redacts and forwards.

    With DOMESTIQUE_PROXY_WORKERS=2 the same holds, and stopping the parent stops every worker
    (the port is free again).
    """
    port = _free_port()
    with run_upstream() as up:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "domestique",
                "proxy",
                "--port",
                str(port),
                "--upstream",
                f"anthropic={up.url}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ},
        )
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
            resp = httpx.post(
                f"http://127.0.0.1:{port}/v1/messages",
                content=json.dumps(
                    {"model": "m", "messages": [{"role": "user", "content": SECRET}]}
                ),
                headers={"x-api-key": "k"},
                timeout=30,
                trust_env=False,
            )
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
        assert resp.status_code == 200
        assert SECRET in resp.text
        assert SECRET.encode() not in up.bodies()
        assert b"listening on" in err
    deadline = time.monotonic() + 10
    while True:  # every worker is gone: nothing answers on the port any more
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            break
        assert time.monotonic() < deadline, "a worker outlived the parent"
        time.sleep(0.1)


def test_bad_upstream_option_exits_2() -> None:
    """An unknown upstream name is an error (exit 2), not a proxy to somewhere else."""
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "proxy", "--upstream", "evil=http://x"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert b"unknown upstream name" in proc.stderr
