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
            env={**os.environ, "DOMESTIQUE_PROXY_WORKERS": workers},
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
        # One line for the request: route, action, codes; never the secret.
        lines = [ln for ln in err.splitlines() if b"anthropic.messages" in ln]
        assert len(lines) == 1
        assert b" redact codes=secret.aws_access_key" in lines[0]
        assert SECRET.encode() not in err
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


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "domestique", "proxy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )


def _wait_port(proc: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_quiet_prints_no_request_lines(private_home: Path) -> None:
    """``--quiet``: the start-up lines only, nothing per request."""
    port = _free_port()
    with run_upstream() as up:
        proc = _start(["--port", str(port), "--quiet", "--upstream", f"openai={up.url}"])
        try:
            _wait_port(proc, port)
            resp = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=30, trust_env=False)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
    assert resp.status_code == 200
    assert b"listening on" in err
    assert b"openai.models" not in err


def test_port_in_use_fails_before_listening() -> None:
    """A taken port: exit 2 with a clear message, and nothing ever said "listening"."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "domestique", "proxy", "--port", str(port)],
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}".encode() in proc.stderr
    assert b"in use" in proc.stderr
    assert b"listening" not in proc.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_non_loopback_host_is_refused_without_allow_remote(host: str) -> None:
    """The firewall relays with the developer's key: it binds loopback unless told otherwise."""
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "proxy", "--host", host, "--port", "1"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert b"not a loopback address" in proc.stderr
    assert b"--allow-remote" in proc.stderr
    assert b"listening" not in proc.stderr


def test_loopback_names_are_accepted() -> None:
    """127.0.0.1, ::1 and localhost are loopback; other names and addresses are not."""
    from domestique.proxy.server import is_loopback

    assert is_loopback("127.0.0.1")
    assert is_loopback("127.8.9.10")
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("192.0.2.1")
    assert not is_loopback("no-such-host.invalid")


def test_allow_remote_listens_with_a_warning(private_home: Path) -> None:
    """``--host 0.0.0.0 --allow-remote`` starts (reached here over loopback) and warns."""
    port = _free_port()
    proc = _start(["--host", "0.0.0.0", "--port", str(port), "--allow-remote"])
    try:
        _wait_port(proc, port)
        resp = httpx.head(f"http://127.0.0.1:{port}/", timeout=30, trust_env=False)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert resp.status_code == 200
    assert b"warning: listening on 0.0.0.0" in err
    assert b"listening on http://0.0.0.0" in err
