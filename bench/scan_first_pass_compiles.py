"""What RE2 compiles during the engine's first pass in a fresh process, and how long each took.

    .venv/bin/python bench/scan_first_pass_compiles.py [--src SRC] [--top N]

Input: ``bench_scan_cli.py``'s 2 MB of the standard library's source (20 items of 100 KB). The
scanner is built first (its compiles are "load"), then one pass over the items ("pass"). Every
``re2`` compile is timed (the wrapper's ``_Regexp._make``, so its own cache is not consulted):
per phase and options the count and total, then the slowest compiles of the pass by rule. The
reverse programs RE2 builds inside a search are not compiles of the wrapper and are not counted.
Wall clock in one process: run it a few times on a loaded machine.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    sys.path.insert(0, str(args.src))
    sys.path.insert(0, str(Path(__file__).parent))
    import re2

    from bench_scan_cli import corpus
    from domestique.detect import Scanner
    from domestique.detect.ruleset import builtin_rules
    from domestique.keys import Fingerprinter

    items = corpus()
    make = re2._Regexp._make
    phase = ["load"]
    totals: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
    slowest: list[tuple[float, str]] = []

    def timed(pattern: Any, values: tuple[Any, ...]) -> Any:
        t0 = time.perf_counter()
        regex = make(pattern, values)
        dt = time.perf_counter() - t0
        opts = dict(zip(re2.Options.NAMES, values, strict=True))
        kind = f"{opts['encoding'].name}{' no-capture' if opts['never_capture'] else ''}"
        entry = totals[(phase[0], kind)]
        entry[0] += 1
        entry[1] += dt
        if phase[0] == "pass":
            text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
            slowest.append((dt, text))
        return regex

    re2._Regexp._make = staticmethod(timed)
    rules = builtin_rules()
    scanner = Scanner(rules, Fingerprinter(b"k" * 32))
    by_pattern = {r.regex: r.id for r in rules}
    phase[0] = "pass"
    t0, c0 = time.perf_counter(), time.process_time()
    for text in items:
        scanner.scan(text)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    megabytes = sum(map(len, items)) / 1e6
    print(f"first pass over {megabytes:.2f} MB: {wall * 1e3:.1f} ms [{cpu * 1e3:.1f}]")
    for (ph, kind), (count, total) in sorted(totals.items()):
        print(f"{ph:5} {kind:22} {int(count):4} compiles {total * 1e3:7.1f} ms")
    for dt, pattern in sorted(slowest, reverse=True)[: args.top]:
        print(f"  {dt * 1e3:5.2f} ms  {by_pattern.get(pattern, pattern[:70])}")


if __name__ == "__main__":
    main()
