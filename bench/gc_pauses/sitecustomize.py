"""Collector pauses per process, for the firewall's load test (not part of the package).

    python bench/proxy_load.py --config gc=PYTHONPATH=$PWD/bench/gc_pauses

Every Python process started with this folder on its path (the firewall and its workers)
writes ``gc-pauses.PID`` into ``$GC_PAUSES_DIR`` (default: the temporary folder): per
generation the number of collections and their total milliseconds, then the last 50 pauses
over 2 ms as (generation, ms). Rewritten after each full collection or long pause.
"""

from __future__ import annotations

import gc
import os
import tempfile
import time

_OUT = os.path.join(
    os.environ.get("GC_PAUSES_DIR", tempfile.gettempdir()), f"gc-pauses.{os.getpid()}"
)
_started: dict[int, float] = {}
_totals: dict[int, list[float]] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
_long: list[tuple[int, float]] = []


def _pause(phase: str, info: dict[str, int]) -> None:
    generation = info["generation"]
    now = time.perf_counter()
    if phase == "start":
        _started[generation] = now
        return
    took = now - _started.get(generation, now)
    _totals[generation][0] += 1
    _totals[generation][1] += took
    if took > 0.002:
        _long.append((generation, round(took * 1000, 2)))
    if generation == 2 or took > 0.002:
        counts = {g: (int(n), round(ms * 1000, 1)) for g, (n, ms) in _totals.items()}
        with open(_OUT, "w", encoding="utf-8") as f:
            f.write(f"{counts!r}\n{_long[-50:]!r}\n")


gc.callbacks.append(_pause)
