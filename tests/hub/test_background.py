"""Background sync: backoff while the hub fails, uploads in a child process when it answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from domestique.hub.background import BackgroundSync, start_background_sync

from .support import HubProcess, cli


def test_failures_back_off_exponentially_up_to_the_cap(tmp_path: Path) -> None:
    sync = BackgroundSync(tmp_path, interval=10, max_backoff=100)
    delays = [sync.next_delay(False) for _ in range(6)]
    assert 16 <= delays[0] <= 20
    assert 32 <= delays[1] <= 40
    assert all(d <= 100 for d in delays)
    assert delays[-1] >= 80
    assert sync.next_delay(True) == 10
    assert sync.failures == 0


def test_nothing_starts_on_an_endpoint_that_is_not_enrolled(tmp_path: Path) -> None:
    assert start_background_sync(tmp_path) is None


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_background_sync_uploads_and_keeps_going_after_a_hub_outage(
    hub: HubProcess, tmp_path: Path
) -> None:
    """The hub is down for the first attempt: it fails, backs off, and a later attempt (after
    the hub is back) uploads everything."""
    home = tmp_path / "laptop"
    token = hub.admin("enroll-token").stdout.splitlines()[-1]
    assert cli(home, "enroll", hub.url, "--token", token).returncode == 0
    cli(home, "check", "--", "ls")
    hub.stop()
    sync = BackgroundSync(home, interval=1, max_backoff=1)
    assert sync.start()
    try:
        deadline = time.monotonic() + 60
        while sync.failures == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sync.failures >= 1
        hub.start()
        while time.monotonic() < deadline:
            status = json.loads(cli(home, "sync", "--status", "--json").stdout)
            # The acknowledgement is saved per batch; last_sync when the whole sync is done.
            if status["pending"] == 0 and status["last_sync"]:
                break
            time.sleep(0.2)
    finally:
        sync.stop()
    assert status["pending"] == 0
    assert status["last_sync"]
