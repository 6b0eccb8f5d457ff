"""Background sync for long-running endpoint processes (the firewall proxy, the hook daemon).

Every ``interval`` seconds (``DOMESTIQUE_SYNC_INTERVAL``, default 300) a thread runs
``domestique sync`` as a **child process** at lower CPU priority: the upload's reading, hashing
and compressing never hold the deciding process's interpreter lock, so decisions are not slowed.
A failed sync (hub down, refused) backs off exponentially with jitter up to ``max_backoff``
(one hour); a successful one returns to the interval. Nothing starts on an endpoint that is
not enrolled, or with ``DOMESTIQUE_SYNC=off``. Records stay in the local log until the hub
acknowledges them, so a sync that never succeeds loses nothing.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from pathlib import Path

DEFAULT_INTERVAL_S = 300.0
MAX_BACKOFF_S = 3600.0
SYNC_TIMEOUT_S = 600.0


class BackgroundSync:
    """A daemon thread that syncs ``home`` now and then, backing off while it fails."""

    def __init__(
        self,
        home: Path,
        *,
        interval: float | None = None,
        max_backoff: float = MAX_BACKOFF_S,
        command: list[str] | None = None,
    ) -> None:
        if interval is None:
            try:
                interval = float(os.environ.get("DOMESTIQUE_SYNC_INTERVAL", DEFAULT_INTERVAL_S))
            except ValueError:
                interval = DEFAULT_INTERVAL_S
        self.home = home
        self.interval = max(1.0, interval)
        self.max_backoff = max(self.interval, max_backoff)
        self.command = command or [sys.executable, "-m", "domestique", "sync", "--json"]
        self.failures = 0
        self.runs = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def next_delay(self, ok: bool) -> float:
        """Seconds until the next sync: the interval after a success, else doubling backoff."""
        if ok:
            self.failures = 0
            return self.interval
        self.failures += 1
        backoff = min(self.max_backoff, self.interval * float(2 ** min(self.failures, 20)))
        return backoff * random.uniform(0.8, 1.0)  # noqa: S311 - jitter, not a secret

    def sync_once(self) -> bool:
        """One ``domestique sync`` in a child process at low priority; True on exit 0."""
        env = dict(os.environ, DOMESTIQUE_HOME=str(self.home))
        try:
            done = subprocess.run(
                self.command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=SYNC_TIMEOUT_S,
                check=False,
                preexec_fn=_lower_priority,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        self.runs += 1
        return done.returncode == 0

    def _run(self) -> None:
        delay = 0.0
        while not self._stop.wait(delay):
            delay = self.next_delay(self.sync_once())

    def start(self) -> bool:
        """Start the thread if this endpoint is enrolled and sync is not turned off."""
        from domestique.hub.endpoint import ENDPOINT_NAME, hub_dir

        if os.environ.get("DOMESTIQUE_SYNC", "on") == "off":
            return False
        if not (hub_dir(self.home) / ENDPOINT_NAME).exists():
            return False
        self._thread = threading.Thread(target=self._run, name="domestique-sync", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)


def _lower_priority() -> None:
    try:
        os.nice(10)
    except OSError:
        return


def start_background_sync(home: Path) -> BackgroundSync | None:
    """Start syncing ``home`` in the background when it is enrolled; never raises."""
    try:
        sync = BackgroundSync(home)
        return sync if sync.start() else None
    except Exception:  # noqa: BLE001 - background sync must never stop the process it serves
        return None
