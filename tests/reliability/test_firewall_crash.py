"""The firewall SIGKILLed under load: nothing answered is missing from the log, the chain holds.

Eight clients send requests (half carrying a secret, so redacted) to a real ``domestique proxy``
process as fast as it answers; the process is killed with SIGKILL mid-load. Every 2xx answer a
client received names its decision record (``x-domestique-record``): each of those must be in
the store, ``domestique audit verify`` must pass on what the killed process left, and a
restarted firewall must keep working on the same store.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from domestique.audit import AuditStore
from domestique.audit import verify as audit_verify
from proxy.upstream import run_upstream

from .faults import anthropic_request, firewall

SECRET = "AKIAZ3MHQX7B2LKWP4RN"
CLIENTS = 8
MIN_ANSWERS = 32  # answered before the kill; more arrive while it lands


def test_sigkill_under_load_loses_no_answered_decision(tmp_path: Path) -> None:
    answered: list[str] = []  # record ids of 2xx answers
    failed = 0
    stop = threading.Event()
    lock = threading.Lock()

    def client(url: str, n: int) -> None:
        nonlocal failed
        with httpx.Client(timeout=10, trust_env=False) as c:
            i = 0
            while not stop.is_set():
                i += 1
                text = f"deploy {n}-{i} with {SECRET}" if i % 2 else f"hello {n}-{i}"
                try:
                    resp = anthropic_request(c, url, text)
                except httpx.HTTPError:
                    with lock:
                        failed += 1
                    continue
                if 200 <= resp.status_code < 300:
                    with lock:
                        answered.append(resp.headers["x-domestique-record"])

    with run_upstream() as up:
        with firewall(tmp_path, up.url) as (url, proc):
            threads = [threading.Thread(target=client, args=(url, n)) for n in range(CLIENTS)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 30
            while len(answered) < MIN_ANSWERS and time.monotonic() < deadline:
                time.sleep(0.02)
            proc.kill()
            proc.wait(timeout=10)
            time.sleep(0.3)
            stop.set()
            for t in threads:
                t.join(timeout=20)
        assert len(answered) >= MIN_ANSWERS, "the load never got going"

        env = {**os.environ, "DOMESTIQUE_HOME": str(tmp_path)}
        verify = [sys.executable, "-m", "domestique", "audit", "verify"]
        check = subprocess.run(verify, env=env, capture_output=True, timeout=60, check=False)
        assert check.returncode == 0, check.stdout + check.stderr

        store = AuditStore.open(tmp_path)
        try:
            ids = {r.id for r in store.records()}
        finally:
            store.close()
        missing = [rid for rid in answered if rid not in ids]
        # Shown with ``pytest -s``: the figures quoted in docs/reliability.md.
        print(f"answered 2xx {len(answered)}, failed {failed}, records {len(ids)}")
        assert not missing, f"{len(missing)} of {len(answered)} answered requests have no record"

        with firewall(tmp_path, up.url) as (url, _), httpx.Client(trust_env=False) as c:
            again = anthropic_request(c, url, f"after the crash {SECRET}")
        assert again.status_code == 200
        assert again.headers["x-domestique-record"] not in ids
    result = audit_verify(tmp_path)
    assert result.ok, result.problem
    assert result.records == len(ids) + 1
