"""``domestique audit verify|export|tail`` as processes, on a real store."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from _helpers.records import make_record
from domestique.audit import DB_NAME, AuditStore
from domestique.records import Action, Component


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "domestique", "audit", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DOMESTIQUE_HOME": str(home)},
        timeout=60,
        check=False,
    )


def _fill(home: Path) -> list[str]:
    records = [
        make_record(),
        make_record(
            component=Component.PROXY,
            action=Action.REDACT,
            codes=("secret.github_token",),
            obj={
                "provider": "anthropic",
                "route": "/v1/messages",
                "model": "m",
                "upstream_host": "api.anthropic.com",
                "bytes_in": 10,
                "bytes_out": 9,
            },
        ),
        make_record(
            action=Action.DENY, codes=("cmd.pipe_to_shell",), obj={"command": "curl x | sh"}
        ),
    ]
    with AuditStore.open(home) as store:
        for r in records:
            store.append(r)
    return [r.id for r in records]


@pytest.mark.slow
def test_verify_exit_codes(home: Path) -> None:
    """0 intact, 1 tampered naming the record, 2 when there is no store."""
    assert _run(home, "verify").returncode == 2
    ids = _fill(home)
    ok = _run(home, "verify")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "intact: 3 records" in ok.stdout
    conn = sqlite3.connect(home / DB_NAME, isolation_level=None)
    conn.execute("DROP TRIGGER records_no_update")
    conn.execute("UPDATE records SET record = replace(record, 'curl', 'wget') WHERE seq = 3")
    conn.close()
    bad = _run(home, "verify", "--json")
    assert bad.returncode == 1
    result = json.loads(bad.stdout)
    assert (result["kind"], result["bad_seq"], result["bad_id"]) == ("edited", 3, ids[2])


@pytest.mark.slow
def test_export_jsonl_is_the_stored_canonical_json(home: Path) -> None:
    """export --format jsonl prints each stored record, in order, parseable."""
    ids = _fill(home)
    out = _run(home, "export", "--format", "jsonl")
    assert out.returncode == 0
    assert [json.loads(line)["id"] for line in out.stdout.splitlines()] == ids


@pytest.mark.slow
def test_export_ocsf_maps_classes(home: Path) -> None:
    """export --format ocsf: guard → 1007 Process Activity, proxy → 6003 API Activity."""
    _fill(home)
    out = _run(home, "export", "--format", "ocsf")
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert [e["class_uid"] for e in events] == [1007, 6003, 1007]
    assert events[1]["dst_endpoint"]["hostname"] == "api.anthropic.com"
    assert events[2]["action_id"] == 2


@pytest.mark.slow
def test_tail_shows_the_newest(home: Path) -> None:
    """tail -n 2 prints the two newest records, oldest first, with codes and the command."""
    _fill(home)
    out = _run(home, "tail", "-n", "2")
    lines = out.stdout.splitlines()
    assert len(lines) == 2
    assert "secret.github_token" in lines[0]
    assert "cmd.pipe_to_shell" in lines[1]
    assert "curl x | sh" in lines[1]


@pytest.mark.slow
def test_tail_follow_prints_new_records(home: Path) -> None:
    """tail --follow prints a record appended after it started."""
    import selectors

    _fill(home)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "domestique",
            "audit",
            "tail",
            "-n",
            "1",
            "--follow",
            "--interval",
            "0.05",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "DOMESTIQUE_HOME": str(home)},
    )
    try:
        assert proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=20), "tail printed nothing"
        assert proc.stdout.readline().split()[0] == "3"  # started: it printed the newest
        with AuditStore.open(home) as store:
            store.append(make_record(action=Action.DENY, codes=("cmd.exfiltration",)))
        assert sel.select(timeout=20), "tail --follow printed nothing"
        line = proc.stdout.readline()
        assert "cmd.exfiltration" in line
        assert line.split()[0] == "4"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
