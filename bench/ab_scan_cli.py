"""``domestique scan`` from two source trees, alternated run by run, one process each.

    .venv/bin/python bench/ab_scan_cli.py --base SRC [--rounds N] [--workers N]

The inputs of ``bench/bench_scan_cli.py`` (2 MB of the standard library's source as 20 items of
100 KB): ``scan -`` of empty input (start-up), ``scan --jsonl`` of the items and ``scan --json
DIR`` of them as 20 files, each command run from ``SRC`` and from this tree in turn, so both
see the same load. Printed: medians, wall [CPU of the child], the work with the start-up
subtracted and its MB/s. ``--workers`` sets ``DOMESTIQUE_SCAN_WORKERS`` for this tree (default
1; the other tree ignores it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

sys.path.insert(0, str(Path(__file__).parent))
from bench_scan_cli import corpus


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--workers", default="1")
    args = ap.parse_args()
    import domestique

    items = corpus()
    megabytes = sum(len(t.encode()) for t in items) / 1e6
    jsonl = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(items)).encode()
    trees = {"base": args.base.resolve(), "this": Path(domestique.__file__).parents[1]}
    res: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tree, work = Path(tmp, "tree"), Path(tmp, "work")
        tree.mkdir()
        work.mkdir()
        for i, t in enumerate(items):
            (tree / f"item{i:02d}.py").write_text(t, encoding="utf-8")
        commands = {
            "start": (["scan", "-"], b""),
            "jsonl": (["scan", "--jsonl"], jsonl),
            "dir": (["scan", "--json", str(tree)], b""),
        }
        for n in range(args.rounds + 1):  # round 0 untimed: caches and keys created
            for name, src in trees.items():
                env = dict(os.environ, PYTHONPATH=str(src), DOMESTIQUE_HOOKD="off")
                env["DOMESTIQUE_HOME"] = str(Path(tmp, f"home-{name}"))
                env["DOMESTIQUE_SCAN_WORKERS"] = args.workers if name == "this" else "1"
                for key, (argv, stdin) in commands.items():
                    c0, t0 = _cpu(), perf_counter()
                    done = subprocess.run(
                        [sys.executable, "-m", "domestique", *argv],
                        input=stdin,
                        capture_output=True,
                        env=env,
                        cwd=work,
                        check=False,
                    )
                    wall, cpu = perf_counter() - t0, _cpu() - c0
                    if done.returncode not in (0, 1):
                        raise SystemExit(f"{name} {key} exited {done.returncode}")
                    if n:
                        res.setdefault((name, key), []).append((wall, cpu))
    print(f"input {megabytes:.2f} MB, {args.rounds} rounds; medians, wall [CPU]")
    for name in trees:
        med = {
            key: (
                statistics.median(w for w, _ in res[(name, key)]),
                statistics.median(c for _, c in res[(name, key)]),
            )
            for key in commands
        }
        sw, sc = med["start"]
        line = f"{name:5} start-up {sw * 1e3:6.1f} [{sc * 1e3:6.1f}] ms"
        for key in ("jsonl", "dir"):
            w, c = med[key]
            line += (
                f" | {key} work {(w - sw) * 1e3:6.1f} [{(c - sc) * 1e3:6.1f}] ms "
                f"{megabytes / max(w - sw, 1e-9):5.1f} MB/s"
            )
        print(line)


if __name__ == "__main__":
    main()
