"""Writers from several processes queue on the head file's lock instead of SQLite's busy sleeps.

A real child process holds the lock the way another writer's append does; the append here waits
for it, goes on at once when it is let go, and fails (nothing written) when it is held past the
busy timeout, so a stuck writer turns decisions into blocks instead of hanging them forever.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from _helpers.records import make_record
from domestique.audit import HEAD_NAME, AuditStore, AuditStoreError, verify
from domestique.audit import _store as store_module


def _holder(home: Path, seconds: float) -> subprocess.Popen[str]:
    """A process that takes the writers' lock, says so, keeps it ``seconds``, then exits."""
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys, time
        fd = os.open({str(home / HEAD_NAME)!r}, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep({seconds})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_an_append_waits_for_another_writer_and_goes_on_when_it_lets_go(home: Path) -> None:
    with AuditStore.open(home) as store:
        store.append(make_record())
        holder = _holder(home, 0.6)
        try:
            started = time.monotonic()
            store.append(make_record())
            waited = time.monotonic() - started
        finally:
            holder.wait(10)
            if holder.stdout:
                holder.stdout.close()
        assert store.count() == 2
    assert waited >= 0.3, waited  # it did wait for the holder (which held ~0.6 s from "held")
    assert waited < 5.0, waited  # and went on once the holder was gone, not at a busy timeout
    assert verify(home).ok


def test_a_writer_held_past_the_busy_timeout_fails_the_append(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.3)
    with AuditStore.open(home) as store:
        store.append(make_record())
        holder = _holder(home, 3.0)
        try:
            started = time.monotonic()
            with pytest.raises(AuditStoreError, match="cannot write audit store"):
                store.append(make_record())
            assert time.monotonic() - started < 2.5
        finally:
            holder.kill()
            holder.wait(10)
            if holder.stdout:
                holder.stdout.close()
        assert store.count() == 1  # nothing written
        store.append(make_record())  # and the next append, with the lock free, goes through
        assert store.count() == 2
    assert verify(home).ok
