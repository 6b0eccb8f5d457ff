"""Benchmarks of the fleet hub on PostgreSQL: ingest throughput and the fleet report.

    .venv/bin/python bench/bench_hub.py [--database URL] [--endpoints 100] [--records 10000]
                                        [--batch 500] [--reports 5] [--json]

In a fresh schema of the given server (dropped at the end):

- **ingest**: every endpoint's chain (``--records`` each, realistic guard records spread over
  30 days) is uploaded in gzip batches of ``--batch``; timed per batch is what the hub does
  with a request body: inflate, parse, recompute every record's chain hash
  (:func:`domestique.hub.batch.parse_batch`), then verify continuity and store it in one
  transaction (``HubStore.ingest``: COPY for the records, pipelined counter upserts). Building
  the batches is not timed. Reported: records/s over the summed batch times, and the median
  batch time;
- **report**: ``HubStore.report()`` over everything loaded (median of ``--reports`` runs), and
  ``domestique hub report --json`` as a whole process (interpreter start included).

Figures go to docs/benchmarks.md ("Fleet hub").
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from domestique.audit import GENESIS_HASH, chain_hash  # noqa: E402 - after the path setup
from domestique.hub.batch import encode_batch, parse_batch  # noqa: E402
from domestique.hub.store import EndpointInfo, HubStore  # noqa: E402
from domestique.records import (  # noqa: E402
    Action,
    Component,
    DecisionRecord,
    PolicyRef,
    Reason,
    Subject,
    to_canonical_json,
    utc_now_iso,
)

SPAN_NS = 30 * 86400 * 10**9
CODES = (
    "cmd.pipe_to_shell",
    "cmd.destructive.rm_root",
    "secret.aws_access_key",
    "cmd.exfiltration",
)


def _record(endpoint: int, i: int, when_ns: int) -> bytes:
    deny = i % 7 == 0
    reasons = (Reason(CODES[i % len(CODES)], "bench decision"),) if deny else ()
    record = DecisionRecord(
        component=Component.GUARD,
        action=Action.DENY if deny else Action.ALLOW,
        reasons=reasons,
        subject=Subject(user=f"dev{endpoint}", host=f"laptop-{endpoint}", agent="claude-code"),
        object={"command": f"git status --short {i}", "cwd": f"/home/dev{endpoint}/src"},
        policy=PolicyRef("builtin+organisation", "ab" * 32, bundle=3),
        engine={"domestique": "0.1.0", "guard": "1"},
        latency_us=40 + i % 50,
        time=utc_now_iso(when_ns),
    )
    return to_canonical_json(record)


def _batches(endpoint_id: str, endpoint: int, count: int, size: int, start_ns: int):  # type: ignore[no-untyped-def]
    prev, seq = GENESIS_HASH, 0
    for first in range(0, count, size):
        rows = []
        for i in range(first, min(count, first + size)):
            seq += 1
            canonical = _record(endpoint, i, start_ns + i * (SPAN_NS // count))
            link = chain_hash(seq, prev, canonical)
            rows.append({"seq": seq, "prev_hash": prev, "hash": link, "record": canonical.decode()})
            prev = link
        yield len(rows), encode_batch(endpoint_id, (seq, prev), rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database",
        default=os.environ.get("DOMESTIQUE_TEST_DATABASE_URL")
        or "postgresql://postgres@127.0.0.1:5432/test",
    )
    parser.add_argument("--endpoints", type=int, default=100)
    parser.add_argument("--records", type=int, default=10_000, help="per endpoint")
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--reports", type=int, default=5)
    parser.add_argument(
        "--workers", type=int, default=1, help="endpoints uploading at once (threads)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import psycopg

    schema = "bench_hub_" + secrets.token_hex(4)
    with psycopg.connect(args.database, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.database else "?"
    url = f"{args.database}{sep}options=-csearch_path%3D{schema}"
    home = Path(os.environ.get("TMPDIR", "/tmp")) / schema
    store = HubStore.open(url, home)
    try:
        info = EndpointInfo("laptop", "dev", "Linux", "0.1.0", "fp")
        token = store.create_enroll_token(expires_s=3600, uses=args.endpoints)
        ids = [store.enroll(token, info)[0] for _ in range(args.endpoints)]
        start_ns = time.time_ns() - SPAN_NS
        batch_times: list[float] = []
        lock = threading.Lock()

        # Every batch is built first (not timed): endpoint-side work, not the hub's.
        bodies = [
            list(_batches(endpoint_id, n, args.records, args.batch, start_ns))
            for n, endpoint_id in enumerate(ids)
        ]

        def upload(n: int) -> int:
            """One endpoint's whole log, batch after batch, as its sync sends it."""
            endpoint_id, done = ids[n], 0
            for count, body in bodies[n]:
                t0 = time.perf_counter()
                result = store.ingest(endpoint_id, parse_batch(body, "gzip"))
                took = time.perf_counter() - t0
                assert result.stored == count, result
                assert not result.alerts, result
                with lock:
                    batch_times.append(took)
                done += count
            return done

        # Several endpoints upload at once, as a fleet does (--workers threads, each its own
        # pooled connection); the figure is records over the wall time of all uploads.
        wall0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            total = sum(pool.map(upload, range(len(ids))))
        wall_s = time.perf_counter() - wall0
        ingest_s = wall_s
        report_times = []
        for _ in range(args.reports):
            t0 = time.perf_counter()
            report = store.report()
            report_times.append(time.perf_counter() - t0)
        assert report["records"] == total, report["records"]
        env = dict(os.environ, DOMESTIQUE_HOME=str(home))
        cli_times = []
        for _ in range(args.reports):
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "domestique", "hub", "report", "--json", "--database", url],
                env=env,
                check=True,
                capture_output=True,
            )
            cli_times.append(time.perf_counter() - t0)
        figures = {
            "endpoints": args.endpoints,
            "records": total,
            "batch": args.batch,
            "workers": args.workers,
            "ingest_records_per_s": round(total / ingest_s),
            "ingest_batch_median_ms": round(statistics.median(batch_times) * 1000, 2),
            "report_median_s": round(statistics.median(report_times), 3),
            "report_cli_median_s": round(statistics.median(cli_times), 3),
        }
    finally:
        store.close()
        with psycopg.connect(args.database, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    if args.json:
        print(json.dumps(figures))
    else:
        sys.stderr.write("\n")
        for key, value in figures.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
