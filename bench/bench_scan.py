"""Scan speed, side by side with detect-secrets, on the same inputs in one run.

    .venv/bin/python bench/bench_scan.py [--quick] [--json OUT]
    .venv/bin/python bench/bench_scan.py --ab OLD_SRC [--rounds N]

``--ab OLD_SRC`` compares this tree's scanner with another source tree's (e.g. ``git archive
<commit> src | tar -x -C /tmp/old``) on the same inputs: two worker processes, one per tree,
take turns timing each input, so both see the same machine load; it prints the median time of
each and the ratio (new / old). Use it for before/after figures on a shared, noisy machine.

Inputs (built here from the Python standard library, nothing from our team):
* code: the stdlib's own ``.py`` source, concatenated (test directories excluded);
* prose: the language-reference text in ``pydoc_data/topics.py``;
* sizes 1 KB, 10 KB, 100 KB, 1 MB, each taken at several offsets;
* keyword-dense 100 KB: every line carries several rule keywords (password, token, secret,
  key, auth, ``://``, ``@``) and assignment syntax, so every generic rule runs everywhere.

For each input: p50 and p99 latency of one ``scan`` and throughput (MB/s over all runs).
detect-secrets runs with its default plugins through its in-process API (the line-based plugin
loop that ``scan_file`` runs, without the disk read), on the same strings (a prefix of the input
set for the large sizes, as it needs seconds per megabyte).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from domestique.detect import Scanner
from domestique.detect.customer_records import CustomerRecords, build_index
from domestique.detect.known_values import KnownValues
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter

SIZES = {"1KB": 1_000, "10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000}


def stdlib_code() -> str:
    root = Path(sysconfig.get_paths()["stdlib"])
    parts = []
    for p in sorted(root.rglob("*.py")):
        rel = set(p.relative_to(root).parts)
        if rel & {"test", "tests", "idle_test", "site-packages"}:
            continue
        parts.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def stdlib_prose() -> str:
    from pydoc_data import topics  # the language reference, as plain text

    return "\n\n".join(topics.topics.values())


def keyword_dense(size: int) -> str:
    lines = [
        "password = None  # the token and secret api_key are read from auth settings",
        'config["api_key"] = get_key(name)  # key rotation, see https://docs.example.net/auth',
        "if token == expected_token: pass  # user@example.com asked about the secret key",
        "db_pass: ${DB_PASSWORD}  # credentials via vault://secret/path, basic auth off",
        "headers = {'Authorization': auth_header, 'X-Api-Key': key}  # pwd and passwd unset",
    ]
    out: list[str] = []
    n = 0
    i = 0
    while n < size:
        line = lines[i % len(lines)]
        out.append(line)
        n += len(line) + 1
        i += 1
    return "\n".join(out)[:size]


def slices(corpus: str, size: int, count: int) -> list[str]:
    step = max(1, (len(corpus) - size) // max(1, count))
    return [corpus[i * step : i * step + size] for i in range(count)]


_KEEP: list[object] = []


def detect_secrets_scan() -> Callable[[str], int]:
    """detect-secrets with its default plugins, scanning a text the way ``scan_file`` scans a
    file (its line-based plugin loop, minus the disk read)."""
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    ctx = default_settings()
    ctx.__enter__()
    _KEEP.append(ctx)  # leaving the context (e.g. on garbage collection) unloads the plugins

    def scan(text: str) -> int:
        lines = list(enumerate(text.split("\n"), start=1))
        return sum(1 for _ in _process_line_based_plugins(lines, "prompt.txt"))

    return scan


def measure(scan: Callable[[str], object], inputs: list[str], budget_s: float) -> dict[str, float]:
    times: list[float] = []
    total_bytes = 0
    start = time.perf_counter()
    while True:
        for text in inputs:
            t0 = time.perf_counter()
            scan(text)
            times.append(time.perf_counter() - t0)
            total_bytes += len(text.encode("utf-8", "surrogatepass"))
        if time.perf_counter() - start > budget_s or len(times) >= 2000:
            break
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return {
        "runs": len(times),
        "p50_ms": round(statistics.median(times) * 1000, 3),
        "p99_ms": round(p99 * 1000, 3),
        "mb_s": round(total_bytes / 1e6 / sum(times), 2),
    }


def full_scanner(fp: Fingerprinter) -> Scanner:
    """Rules plus 20 known secret values and a 1,000-row customer record set (in memory)."""
    known = KnownValues(fp, [f"known-Secret-{i:04d}-{os.urandom(6).hex()}" for i in range(20)])
    rows = [
        [f"user{i}@mail{i % 37}.example.org", f"Person{i} Surname{i % 101}", f"ACC-{i:06d}"]
        for i in range(1000)
    ]
    index = build_index(rows, fp)
    doc: dict[str, object] = {
        "cells": index.cells,
        "max_words": index.max_words,
        "shapes": list(index.shapes),
    }
    records = CustomerRecords(fp, [doc])
    return Scanner(builtin_rules(), fp, [known, records])


AB_CASES = ("code 100KB", "code 1MB", "prose 1MB", "keyword-dense 100KB")


def ab_inputs() -> dict[str, str]:
    """The inputs of the A/B comparison (fixed offsets, so both workers scan the same text)."""
    code, prose = stdlib_code(), stdlib_prose()
    return {
        "code 100KB": code[500_000:600_000],
        "code 1MB": code[2_000_000:3_000_000],
        "prose 1MB": (prose * 4)[:1_000_000],
        "keyword-dense 100KB": keyword_dense(100_000),
    }


def ab_worker() -> int:
    """Times one scan of the named input per request line on stdin; answers the seconds."""
    scanner = Scanner(builtin_rules(), Fingerprinter(os.urandom(32)))
    inputs = ab_inputs()
    for text in inputs.values():
        scanner.scan(text)  # warm caches and lazily compiled rules
    print("ready", flush=True)
    for line in sys.stdin:
        text = inputs[line.strip()]
        t0 = time.perf_counter()
        scanner.scan(text)
        print(time.perf_counter() - t0, flush=True)
    return 0


def ab_compare(old_src: Path, rounds: int) -> int:
    """Alternates timed scans between a worker on this tree and one on ``old_src``."""
    workers = {}
    for tag, extra in (("new", None), ("old", str(old_src.resolve()))):
        env = dict(os.environ)
        if extra is not None:
            env["PYTHONPATH"] = extra
        proc = subprocess.Popen(
            [sys.executable, __file__, "--ab-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready"
        workers[tag] = proc
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for case in AB_CASES:
            for tag, proc in workers.items():
                assert proc.stdin is not None
                assert proc.stdout is not None
                proc.stdin.write(case + "\n")
                proc.stdin.flush()
                times.setdefault((case, tag), []).append(float(proc.stdout.readline()))
    for proc in workers.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    print(f"| input | old p50 ms | new p50 ms | new / old |  ({rounds} alternating rounds)")
    print("|---|---|---|---|")
    for case in AB_CASES:
        old = statistics.median(times[(case, "old")]) * 1000
        new = statistics.median(times[(case, "new")]) * 1000
        print(f"| {case} | {old:.2f} | {new:.2f} | {new / old:.2f} |")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller time budget per cell")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--ab", type=Path, metavar="OLD_SRC", help="compare with another src tree")
    ap.add_argument("--rounds", type=int, default=15, help="A/B rounds (with --ab)")
    ap.add_argument("--ab-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ab_worker:
        return ab_worker()
    if args.ab is not None:
        return ab_compare(args.ab, args.rounds)
    budget = 0.5 if args.quick else 2.0
    ds_budget = 0.5 if args.quick else 1.5
    fp = Fingerprinter(os.urandom(32))
    ours = Scanner(builtin_rules(), fp)
    full = full_scanner(fp)
    theirs = detect_secrets_scan()
    code, prose = stdlib_code(), stdlib_prose()
    cases: list[tuple[str, list[str]]] = []
    for name, size in SIZES.items():
        count = 20 if size <= 100_000 else 5
        cases.append((f"code {name}", slices(code, size, count)))
        cases.append((f"prose {name}", slices(prose, size, count)))
    cases.append(("keyword-dense 100KB", [keyword_dense(100_000)]))
    results: dict[str, dict[str, dict[str, float]]] = {}
    print(
        "| input | domestique p50 ms | p99 ms | MB/s "
        "| detect-secrets p50 ms | p99 ms | MB/s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, inputs in cases:
        for text in inputs[:2]:
            ours.scan(text)  # warm caches
        a = measure(ours.scan, inputs, budget)
        # detect-secrets runs at ~0.1 MB/s: fewer inputs of the same set for the large sizes.
        b = measure(theirs, inputs[: max(1, 20_000 // max(1, len(inputs[0])))], ds_budget)
        results[name] = {"domestique": a, "detect-secrets": b}
        ratio = a["mb_s"] / b["mb_s"] if b["mb_s"] else float("inf")
        print(
            f"| {name} | {a['p50_ms']} | {a['p99_ms']} | {a['mb_s']} | "
            f"{b['p50_ms']} | {b['p99_ms']} | {b['mb_s']} | {ratio:.0f}x |",
            flush=True,
        )
    print("\nwith 20 known values and 1,000 customer records registered (domestique only):")
    print("| input | p50 ms | p99 ms | MB/s |\n|---|---|---|---|")
    for name, inputs in cases:
        if name.startswith(("code 1KB", "prose 1KB")):
            continue
        c = measure(full.scan, inputs, budget)
        results[name]["domestique+known+records"] = c
        print(f"| {name} | {c['p50_ms']} | {c['p99_ms']} | {c['mb_s']} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    for ctx in _KEEP:
        ctx.__exit__(None, None, None)  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
