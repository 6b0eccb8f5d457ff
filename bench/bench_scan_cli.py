"""``domestique scan`` as a command, end to end, against the engine in process, in one run.

    .venv/bin/python bench/bench_scan_cli.py [--rounds N]

Input (built here from the Python standard library, nothing from our team): 2 MB of the running
interpreter's own ``.py`` source (test directories excluded), cut into 20 items of 100 KB, given
as a ``--jsonl`` stream on stdin and as a directory of 20 files (outside any git work tree).

Per round, all in the same run so the figures share the machine's load:
* ``python -c pass`` of the same venv (the baseline start-up);
* ``domestique scan`` of an empty stdin (the command's start-up: imports, policy, scanner);
* ``domestique scan --jsonl`` of the 20 items, and ``domestique scan --json DIR``;
* the engine in process (``default_scanner().scan`` over the 20 items, rules already built).

Printed: medians; start-up as milliseconds and as a ratio to ``python -c pass``; end-to-end
MB/s with the command's start-up subtracted; the engine's MB/s and the ratio engine / command.
Byte code of the package is compiled first and the commands run without
``PYTHONDONTWRITEBYTECODE``, as an installed package runs. Exit codes are checked (0 or 1
expected): a run that errors is reported, not timed as fast.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ITEMS, ITEM_SIZE = 20, 100_000
# As installed: byte code written and reused (a shell with PYTHONDONTWRITEBYTECODE set would
# otherwise time the compilation of every module on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def corpus() -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    parts: list[str] = []
    size = 0
    for p in sorted(root.rglob("*.py")):
        if set(p.relative_to(root).parts) & {"test", "tests", "idle_test", "site-packages"}:
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text)
        if size > ITEMS * ITEM_SIZE + ITEM_SIZE:
            break
    joined = "\n".join(parts)
    return [joined[i * ITEM_SIZE : (i + 1) * ITEM_SIZE] for i in range(ITEMS)]


def timed(cmd: list[str], stdin: bytes, cwd: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, cwd=cwd, env=ENV, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        err = proc.stderr.decode(errors="replace")[-400:]
        raise SystemExit(f"{cmd!r} exited {proc.returncode}: {err}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()

    import json

    items = corpus()
    megabytes = sum(len(t.encode()) for t in items) / 1e6
    jsonl = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(items)).encode()
    py = sys.executable
    cli = [py, "-m", "domestique"]

    import domestique
    from domestique.detect import default_scanner

    compileall.compile_dir(Path(domestique.__file__).parent, quiet=1)

    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp, "tree")
        tree.mkdir()
        for i, t in enumerate(items):
            (tree / f"item{i:02d}.py").write_text(t, encoding="utf-8")
        work = Path(tmp, "work")
        work.mkdir()
        scanner = default_scanner(cwd=work)
        scanner.scan(items[0])  # warm
        cols: dict[str, list[float]] = {k: [] for k in ("pass", "start", "jsonl", "dir", "eng")}
        for _ in range(args.rounds):
            cols["pass"].append(timed([py, "-c", "pass"], b"", str(work)))
            cols["start"].append(timed([*cli, "scan", "-"], b"", str(work)))
            cols["jsonl"].append(timed([*cli, "scan", "--jsonl"], jsonl, str(work)))
            cols["dir"].append(timed([*cli, "scan", "--json", str(tree)], b"", str(work)))
            t0 = time.perf_counter()
            for t in items:
                scanner.scan(t)
            cols["eng"].append(time.perf_counter() - t0)

    med = {k: statistics.median(v) for k, v in cols.items()}
    eng = megabytes / med["eng"]
    print(f"input: {ITEMS} x {ITEM_SIZE // 1000} KB = {megabytes:.2f} MB; rounds {args.rounds}")
    print(f"python -c pass          {med['pass'] * 1e3:8.1f} ms")
    print(
        f"scan start-up (empty)   {med['start'] * 1e3:8.1f} ms   "
        f"{med['start'] / med['pass']:.2f}x python -c pass"
    )
    for key, label in (("jsonl", "scan --jsonl"), ("dir", "scan --json DIR")):
        work_s = max(med[key] - med["start"], 1e-9)
        rate = megabytes / work_s
        print(
            f"{label:<22}  {med[key] * 1e3:8.1f} ms   {rate:6.1f} MB/s end to end "
            f"(start-up subtracted)   engine/command {eng / rate:.2f}x"
        )
    print(f"engine in process       {med['eng'] * 1e3:8.1f} ms   {eng:6.1f} MB/s")


if __name__ == "__main__":
    main()
