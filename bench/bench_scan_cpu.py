"""CPU time of ``Scanner.scan`` on bench_scan.py's A/B inputs, this tree against another.

    .venv/bin/python bench/bench_scan_cpu.py OLD_SRC [--procs N] [--scans K]

Starts ``N`` worker processes for each tree, alternating (new, old, new, old, ...); each
worker builds the built-in scanner, scans every input once to warm up, then times ``K``
scans of each with ``time.process_time`` and reports its median. Printed per input: the
median over workers and the median of the faster half of the workers for each tree, and
the ratios (new / old). On a shared host a single process runs at one of two speeds; the
faster-half median compares the two trees at the same speed. ``OLD_SRC`` is a source tree's
``src`` (``git archive <commit> src | tar -x -C /tmp/old``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(scans: int) -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    # Imported here: the tree under test is the one on this worker's PYTHONPATH.
    from bench_scan import ab_inputs
    from domestique.detect import Scanner
    from domestique.detect.ruleset import builtin_rules
    from domestique.keys import Fingerprinter

    scanner = Scanner(builtin_rules(), Fingerprinter(os.urandom(32)))
    out: dict[str, float] = {}
    for name, text in ab_inputs().items():
        scanner.scan(text)
        times = []
        for _ in range(scans):
            t = time.process_time()
            scanner.scan(text)
            times.append(time.process_time() - t)
        out[name] = statistics.median(times) * 1000
    print(json.dumps(out))
    return 0


def run(src: Path, scans: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", "--scans", str(scans)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old_src", type=Path, nargs="?")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--scans", type=int, default=15)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.scans)
    if args.old_src is None:
        ap.error("OLD_SRC is required")
    new: list[dict[str, float]] = []
    old: list[dict[str, float]] = []
    for _ in range(args.procs):
        new.append(run(ROOT / "src", args.scans))
        old.append(run(args.old_src.resolve(), args.scans))

    def faster_half(values: list[float]) -> float:
        ordered = sorted(values)
        return statistics.median(ordered[: max(1, len(ordered) // 2)])

    print(
        f"| input | old ms | new ms | new / old | faster half: old | new | new / old |  "
        f"({args.procs} processes each, {args.scans} scans)"
    )
    print("|---|---|---|---|---|---|---|")
    for name in new[0]:
        a = [r[name] for r in old]
        b = [r[name] for r in new]
        ma, mb = statistics.median(a), statistics.median(b)
        fa, fb = faster_half(a), faster_half(b)
        print(
            f"| {name} | {ma:.2f} | {mb:.2f} | {mb / ma:.3f} "
            f"| {fa:.2f} | {fb:.2f} | {fb / fa:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
