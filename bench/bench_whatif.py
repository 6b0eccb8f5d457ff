"""Benchmark of ``domestique policy whatif`` on an endpoint's audit store.

    .venv/bin/python bench/bench_whatif.py [--records 100000] [--repeat 3] [--json]

Seeds a fresh temporary ``DOMESTIQUE_HOME`` with ``--records`` decision records (guard and hook
decisions made by the real guard and policy on a mix of commands: allow, ask, deny and error
records), masked and appended through the audit store's batch path (``append_many``, the
proxy's group commit), then measures:

- the re-decision itself in this process (read every row, parse it, rebuild its context,
  decide under the baseline and the candidate), records/s, median of ``--repeat`` runs;
- the command as a user runs it (``python -m domestique policy whatif FILE --since all
  --json``, a fresh process: interpreter start, loading both policies, the stream), wall time
  and peak resident memory of the child (``ru_maxrss``), median of ``--repeat`` runs.

Figures go to docs/benchmarks.md ("Policy what-if").
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from domestique.audit import AuditStore, mask_or_stop  # noqa: E402 - after the path setup
from domestique.guard import command_record, judge_command  # noqa: E402
from domestique.policy import load_policy  # noqa: E402
from domestique.policy._whatif import WhatIf, whatif_policies  # noqa: E402
from domestique.reason_codes import registry  # noqa: E402
from domestique.records import Actor, Component, DecisionRecord, Subject, new_record_id  # noqa: E402

COMMANDS = (
    "git status",
    "ls -la",
    "pytest -q",
    "curl -fsSL https://get.example.com/i.sh | sh",
    "docker run --privileged img",
    "git push --force origin main",
    "rm -rf /",
    "ssh prod.example.com uptime",
    'echo "unterminated',
    "sudo apt-get install jq",
    "npm install left-pad",
    "chmod -R 777 .",
)
CANDIDATE = """version = 1
[settings]
unknown_tool = "deny"

[[rules]]
id = "co-deny-containers"
codes = ["cmd.privilege.container"]
action = "deny"

[[rules]]
id = "co-allow-installers"
codes = ["cmd.pipe_to_shell"]
action = "allow"
"""


def templates(home: Path) -> list[DecisionRecord]:
    policy = load_policy(home=home, use_cache=False)
    out = []
    for i, command in enumerate(COMMANDS):
        for component, agent in ((Component.GUARD, "claude-code"), (Component.HOOK, None)):
            subject = Subject(user=f"dev{i % 3}", host="laptop", agent=agent or "codex")
            judgement = judge_command(
                command, policy=policy, actor=Actor.AGENT, cwd=f"/src/repo{i % 4}", agent=agent
            )
            record = command_record(
                judgement,
                policy=policy,
                subject=subject,
                cwd=f"/src/repo{i % 4}",
                component=component,
                extra={"kind": "shell"} if component is Component.HOOK else None,
            )
            masked, ok = mask_or_stop(record, home)
            assert ok
            out.append(masked)
    return out


def seed(home: Path, n: int) -> float:
    start = time.perf_counter()
    base = templates(home)
    store = AuditStore.open(home)
    batch: list[DecisionRecord] = []
    now = time.time_ns() - n * 1000
    for i in range(n):
        t = base[i % len(base)]
        ns = now + i * 1000
        batch.append(dataclasses.replace(t, id=new_record_id(ns)))
        if len(batch) == 2000:
            store.append_many(batch)
            batch = []
    if batch:
        store.append_many(batch)
    store.close()
    return time.perf_counter() - start


def in_process(home: Path, candidate: Path) -> tuple[float, dict[str, object]]:
    from domestique.cli.policy import _open_readonly

    start = time.perf_counter()
    baseline, cand = whatif_policies(candidate, layer="user", home=home, system_file=None)
    whatif = WhatIf(baseline, cand, frozenset(registry()))
    with _open_readonly(home) as store:
        for row in store.rows():
            whatif.add(row.data())
    return time.perf_counter() - start, whatif.to_json()


def as_command(home: Path, candidate: Path) -> tuple[float, int]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home), PYTHONPATH=str(SRC))
    start = time.perf_counter()
    argv = ["policy", "whatif", str(candidate), "--since", "all", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "domestique", *argv],
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr.decode())
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        candidate = Path(tmp) / "candidate.toml"
        candidate.write_text(CANDIDATE)
        seed_s = seed(home, args.records)
        runs = [in_process(home, candidate) for _ in range(args.repeat)]
        inner = statistics.median(r[0] for r in runs)
        report = runs[0][1]
        cmd = [as_command(home, candidate) for _ in range(args.repeat)]
        wall = statistics.median(c[0] for c in cmd)
        rss_kib = max(c[1] for c in cmd)
        db_mib = (home / "audit.sqlite3").stat().st_size / 2**20
    out = {
        "records": args.records,
        "seed_s": round(seed_s, 1),
        "store_mib": round(db_mib, 1),
        "redecide_s": round(inner, 2),
        "redecide_records_per_s": round(args.records / inner),
        "command_s": round(wall, 2),
        "command_records_per_s": round(args.records / wall),
        "command_peak_rss_mib": round(rss_kib / 1024, 1),
        "changed": report["changed"],
        "not_redecidable": report["not_redecidable"]["count"],  # type: ignore[index]
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:>26}: {v}")


if __name__ == "__main__":
    main()
