"""Benchmarks of the audit store and policy loading.

    .venv/bin/python bench/bench_audit.py [--records 5000] [--procs 8] [--per-proc 1000]
                                          [--verify 100000] [--json]

Measures, each in a fresh temporary DOMESTIQUE_HOME:

- append throughput in one process (records/s, and the median latency of one append);
- append throughput in batches (``append_many``, one transaction per batch: the proxy's group
  commit), records/s and the median time of one batch;
- append throughput with N processes appending at once (records/s over the wall time);
- a fresh process doing what the hook does: import, open the store, append one record
  (median over runs, timed inside the process, interpreter start excluded);
- ``verify`` of a log of 100k records (records/s);
- policy loading: the cached load a hook pays per command, the uncached load (parse and
  validate every TOML layer), and import + cached load in a fresh process.

Figures go to docs/benchmarks.md ("Audit store and policy").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from domestique.audit import AuditStore, verify  # noqa: E402 - after the path setup
from domestique.policy import load_policy  # noqa: E402
from domestique.records import (  # noqa: E402
    Action,
    Component,
    DecisionRecord,
    Evidence,
    PolicyRef,
    Reason,
    Subject,
)


def sample_record(i: int) -> DecisionRecord:
    """A realistic guard record (~900 bytes of canonical JSON)."""
    reasons = (
        (
            Reason(
                "cmd.pipe_to_shell",
                "downloaded content is run by sh",
                (Evidence("command[0:31]", "cu…sh", "hmac-sha256:" + "ab" * 16),),
            ),
        )
        if i % 5 == 0
        else ()
    )
    return DecisionRecord(
        component=Component.GUARD,
        action=Action.DENY if reasons else Action.ALLOW,
        reasons=reasons,
        subject=Subject(user="dev", host="box", agent="claude-code", session_id="s-1"),
        object={"command": f"git status --short #{i}", "cwd": "/home/dev/repo", "unfolded": []},
        policy=PolicyRef("builtin", "0" * 64),
        engine={"domestique": "0.1.0", "rules": "1"},
        latency_us=120,
    )


def bench_single(home: Path, n: int) -> dict[str, float]:
    records = [sample_record(i) for i in range(n)]
    lat: list[float] = []
    with AuditStore.open(home) as store:
        t0 = time.perf_counter()
        for r in records:
            t = time.perf_counter()
            store.append(r)
            lat.append(time.perf_counter() - t)
        total = time.perf_counter() - t0
    return {
        "records": n,
        "seconds": total,
        "records_per_s": n / total,
        "append_median_us": statistics.median(lat) * 1e6,
        "append_p99_us": sorted(lat)[int(0.99 * len(lat))] * 1e6,
    }


def bench_batched(home: Path, n: int, batch: int) -> dict[str, float]:
    records = [sample_record(i) for i in range(n)]
    lat: list[float] = []
    with AuditStore.open(home) as store:
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            t = time.perf_counter()
            store.append_many(records[start : start + batch])
            lat.append(time.perf_counter() - t)
        total = time.perf_counter() - t0
    return {
        "records": n,
        "batch": batch,
        "seconds": total,
        "records_per_s": n / total,
        "batch_median_us": statistics.median(lat) * 1e6,
    }


WRITER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {src!r}); sys.path.insert(0, {bench!r})
    from pathlib import Path
    from bench_audit import sample_record
    from domestique.audit import AuditStore
    records = [sample_record(i) for i in range({n})]
    store = AuditStore.open(Path({home!r}))
    sys.stdout.write("ready\\n"); sys.stdout.flush()
    sys.stdin.readline()
    for r in records:
        store.append(r)
    """
)


def bench_multi(home: Path, procs: int, per_proc: int) -> dict[str, float]:
    AuditStore.open(home).close()
    script = WRITER.format(
        src=str(SRC), bench=str(Path(__file__).parent), n=per_proc, home=str(home)
    )
    children = [
        subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(procs)
    ]
    for c in children:  # wait until every writer is started and has its records built
        assert c.stdout is not None
        c.stdout.readline()
    t0 = time.perf_counter()
    for c in children:
        assert c.stdin is not None
        c.stdin.write("go\n")
        c.stdin.flush()
    for c in children:
        c.communicate(timeout=600)
    total = time.perf_counter() - t0
    result = verify(home)
    assert result.ok, result
    assert result.records == procs * per_proc, result
    return {
        "procs": procs,
        "records": procs * per_proc,
        "seconds": total,
        "records_per_s": procs * per_proc / total,
    }


FRESH = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import sys
    sys.path.insert(0, {src!r})
    from pathlib import Path
    from domestique.records import *
    t1 = time.perf_counter()
    from domestique.audit import record_decision
    t2 = time.perf_counter()
    rec = DecisionRecord(component=Component.GUARD, action=Action.ALLOW, reasons=(),
        subject=Subject(user="dev"), object={{"command": "git status"}},
        policy=PolicyRef("builtin", "0" * 64), engine={{}}, latency_us=1)
    out = record_decision(rec, home=Path({home!r}))
    t3 = time.perf_counter()
    assert out.action is Action.ALLOW
    print((t2 - t1) * 1e6, (t3 - t2) * 1e6)
    """
)


def _fresh_runs(script: str, runs: int) -> tuple[list[float], list[float]]:
    imports, appends = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        imp, app = map(float, out.stdout.split())
        imports.append(imp)
        appends.append(app)
    return imports, appends


def bench_fresh_process(home: Path, runs: int) -> dict[str, float]:
    """Alone, the last connection to close deletes the WAL, so each process re-creates it
    (two fsyncs). With another connection open (the proxy, the hook daemon) it stays."""
    AuditStore.open(home).close()
    script = FRESH.format(src=str(SRC), home=str(home))
    imports, alone = _fresh_runs(script, runs)
    with AuditStore.open(home) as held:
        held.head()
        _, shared = _fresh_runs(script, runs)
    return {
        "runs": runs,
        "import_audit_median_us": statistics.median(imports),
        "open_and_append_median_us": statistics.median(alone),
        "open_and_append_store_held_open_median_us": statistics.median(shared),
    }


def bench_verify(home: Path, n: int) -> dict[str, float]:
    with AuditStore.open(home) as store:
        batch = 2000
        for start in range(0, n, batch):
            store.append_many([sample_record(i) for i in range(start, min(n, start + batch))])
    size = (home / "audit.sqlite3").stat().st_size
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        result = verify(home)
        times.append(time.perf_counter() - t0)
        assert result.ok, result
        assert result.records == n, result
    best = statistics.median(times)
    return {"records": n, "seconds": best, "records_per_s": n / best, "db_bytes": size}


POLICY_FRESH = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import sys
    sys.path.insert(0, {src!r})
    from pathlib import Path
    import domestique.records
    t1 = time.perf_counter()
    from domestique.policy import load_policy
    t2 = time.perf_counter()
    p = load_policy(home=Path({home!r}))
    t3 = time.perf_counter()
    assert p.valid
    print((t2 - t1) * 1e6, (t3 - t2) * 1e6)
    """
)


def bench_policy(home: Path, runs: int) -> dict[str, float]:
    home.mkdir(parents=True, exist_ok=True)
    cold = []
    for _ in range(max(3, runs // 10)):
        t0 = time.perf_counter()
        policy = load_policy(home=home, use_cache=False)
        cold.append(time.perf_counter() - t0)
        assert policy.valid, policy.errors
    load_policy(home=home)  # writes the cache
    warm = []
    for _ in range(runs):
        t0 = time.perf_counter()
        load_policy(home=home)
        warm.append(time.perf_counter() - t0)
    script = POLICY_FRESH.format(src=str(SRC), home=str(home))
    imports, loads = [], []
    for _ in range(max(5, runs // 20)):
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        imp, load = map(float, out.stdout.split())
        imports.append(imp)
        loads.append(load)
    return {
        "rules": len(policy.rules),
        "layers": len(policy.layers),
        "uncached_load_median_ms": statistics.median(cold) * 1e3,
        "cached_load_median_us": statistics.median(warm) * 1e6,
        "fresh_process_import_policy_median_us": statistics.median(imports),
        "fresh_process_cached_load_median_us": statistics.median(loads),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--per-proc", type=int, default=1000)
    parser.add_argument("--verify", type=int, default=100_000)
    parser.add_argument("--fresh-runs", type=int, default=20)
    parser.add_argument("--policy-runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        out["append_single"] = bench_single(base / "single", args.records)
        out["append_batched"] = bench_batched(base / "batched", args.records, args.batch)
        out["append_multi"] = bench_multi(base / "multi", args.procs, args.per_proc)
        out["fresh_process_append"] = bench_fresh_process(base / "fresh", args.fresh_runs)
        out["verify"] = bench_verify(base / "verify", args.verify)
        out["policy"] = bench_policy(base / "policy", args.policy_runs)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    s, m, f, v, p = (
        out[k]
        for k in ("append_single", "append_multi", "fresh_process_append", "verify", "policy")
    )
    for part in (s, m, f, v, p):
        assert isinstance(part, dict)
    print(
        f"append, 1 process:   {s['records_per_s']:8.0f} records/s  "
        f"(median {s['append_median_us']:.0f} µs, p99 {s['append_p99_us']:.0f} µs)"
    )
    b = out["append_batched"]
    assert isinstance(b, dict)
    print(
        f"append, batches of {b['batch']}: {b['records_per_s']:8.0f} records/s  "
        f"(median {b['batch_median_us']:.0f} µs per batch)"
    )
    print(
        f"append, {m['procs']} processes: {m['records_per_s']:8.0f} records/s  "
        f"({m['records']} records in {m['seconds']:.2f} s, chain verified)"
    )
    print(
        f"fresh process: import domestique.audit {f['import_audit_median_us'] / 1e3:.1f} ms,"
        f" open + first append {f['open_and_append_median_us'] / 1e3:.2f} ms alone,"
        f" {f['open_and_append_store_held_open_median_us'] / 1e3:.2f} ms with the store held"
        " open elsewhere (medians)"
    )
    print(
        f"verify {v['records']} records: {v['seconds']:.2f} s = {v['records_per_s']:.0f} "
        f"records/s (db {v['db_bytes'] / 1e6:.0f} MB)"
    )
    print(
        f"policy ({p['layers']} layers, {p['rules']} rules): uncached "
        f"{p['uncached_load_median_ms']:.1f} ms, cached {p['cached_load_median_us']:.0f} µs;"
        f" fresh process: import {p['fresh_process_import_policy_median_us'] / 1e3:.1f} ms +"
        f" cached load {p['fresh_process_cached_load_median_us'] / 1e3:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
