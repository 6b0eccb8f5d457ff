"""The audit store full, damaged or missing its directory: every decision stops, nothing leaks.

The promise under test: a decision that cannot be recorded is not carried out. The firewall
answers each request with a clear error naming ``audit.write_failed`` and forwards nothing; the
command guard and the hooks deny. Real processes, a real SQLite file, a real file-size limit
(``RLIMIT_FSIZE``: the disk is full as far as the process can tell).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from domestique.audit import AuditStore, verify
from domestique.audit._store import DB_NAME
from proxy.upstream import run_upstream

from .faults import anthropic_request, firewall, full_disk

SECRET = "AKIAZ3MHQX7B2LKWP4RN"
N = 6


def _seed_store(home: Path) -> int:
    """A store with one record, as a machine that has been used; its record count."""
    from domestique.records import Action, Component, DecisionRecord, PolicyRef, Subject

    store = AuditStore.open(home)
    try:
        store.append(
            DecisionRecord(
                component=Component.GUARD,
                action=Action.ALLOW,
                reasons=(),
                subject=Subject(user="dev", host="box"),
                object={"command": "true"},
                policy=PolicyRef("t", "0" * 64),
                engine={},
                latency_us=1,
            )
        )
    finally:
        store.close()
    return 1


def _firewall_stops_everything(home: Path, preexec: Callable[[], None] | None = None) -> None:
    with run_upstream() as up, firewall(home, up.url, preexec=preexec) as (url, _):
        with httpx.Client(timeout=30, trust_env=False) as client:
            answers = [
                anthropic_request(client, url, f"deploy with {SECRET}" if i % 2 else "hello")
                for i in range(N)
            ]
        assert not up.received, "a request was forwarded without its decision record"
    for resp in answers:
        # 500 for a plain request; a request that also held a secret keeps the 403 of its
        # first reason. Either way an error the SDKs raise, naming audit.write_failed.
        assert resp.status_code in (403, 500), resp.text[:300]
        body = resp.json()
        assert body["type"] == "error"
        assert "audit.write_failed" in body["domestique"]["reasons"], body
        assert SECRET not in resp.text


def test_firewall_on_a_full_disk_blocks_every_request(tmp_path: Path) -> None:
    before = _seed_store(tmp_path)
    size = (tmp_path / DB_NAME).stat().st_size
    _firewall_stops_everything(tmp_path, full_disk(1024))
    result = verify(tmp_path)
    assert result.ok, result.problem
    assert result.records == before, "a record was half-written"
    assert size == (tmp_path / DB_NAME).stat().st_size


def test_firewall_on_a_damaged_store_blocks_every_request(tmp_path: Path) -> None:
    _seed_store(tmp_path)
    db = tmp_path / DB_NAME
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not a SQLite database" * 200)
    _firewall_stops_everything(tmp_path)


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "DOMESTIQUE_HOME": str(home), "DOMESTIQUE_HOOKD": "off"}


def test_guard_on_a_full_disk_denies_with_exit_2(tmp_path: Path) -> None:
    _seed_store(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "check", "--json", "--", "git", "status"],
        env=_env(tmp_path),
        capture_output=True,
        timeout=60,
        check=False,
        preexec_fn=full_disk(1024),
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["decision"] in ("deny", "block"), out
    assert "audit.write_failed" in proc.stdout.decode()


@pytest.mark.parametrize("host", ["claude-code", "gemini", "cursor"])
def test_hook_on_a_full_disk_denies(tmp_path: Path, host: str) -> None:
    """A harmless command the hook would allow is denied when its decision cannot be kept."""
    _seed_store(tmp_path)
    payloads = {
        "claude-code": {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "git status"},
            "cwd": str(tmp_path),
            "session_id": "s",
        },
        "gemini": {
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "git status"},
            "cwd": str(tmp_path),
        },
        "cursor": {
            "hook_event_name": "beforeShellExecution",
            "command": "git status",
            "cwd": str(tmp_path),
        },
    }
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", "hook", host],
        input=json.dumps(payloads[host]).encode(),
        env=_env(tmp_path),
        capture_output=True,
        timeout=60,
        check=False,
        preexec_fn=full_disk(1024),
    )
    assert b"audit.write_failed" in proc.stdout + proc.stderr
    if host == "cursor":
        assert json.loads(proc.stdout)["permission"] == "deny"
    else:
        assert proc.returncode == 2
