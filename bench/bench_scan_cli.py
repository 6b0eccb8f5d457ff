"""``domestique scan`` and ``domestique check`` as commands, end to end, in one run.

    .venv/bin/python bench/bench_scan_cli.py [--rounds N] [--base SRC]

Input (built here from the Python standard library, nothing from our team): 2 MB of the running
interpreter's own ``.py`` source (test directories excluded), cut into 20 items of 100 KB, given
as a ``--jsonl`` stream on stdin and as a directory of 20 files (outside any git work tree).

Per round, all in the same run so the figures share the machine's load, each command alternated
with the baseline and (``--base``) with the same command run from another source tree (e.g. a
``git archive`` of an earlier commit's ``src``, put first on ``PYTHONPATH``):
* ``python -c pass`` of the same venv (the baseline start-up);
* ``domestique check -- git status`` (judge, mask the audit record, append it), in-process
  (``DOMESTIQUE_HOOKD=off``), and from the console script with the hook daemon answering
  (started before the rounds as the hook starts it, checked alive after them);
* ``domestique scan`` of an empty stdin (the command's start-up: imports, policy, scanner);
* ``domestique scan --jsonl`` of the 20 items, and ``domestique scan --json DIR``;
* the engine in a fresh process: the first pass over the 20 items once the scanner is built
  (what a one-shot command pays: patterns compiled on first use, RE2's lazily built DFAs), then
  a second pass over the same items (warm);
* the engine in this process, warm (``default_scanner().scan`` over the 20 items).

Printed: medians, wall clock and (in brackets) the CPU time of the child process, which a
shared, loaded machine disturbs less; start-up as milliseconds and as a ratio to ``python -c
pass``; end-to-end MB/s with the command's start-up subtracted; the engine's MB/s (wall), cold
and warm. Byte code is compiled first and the commands run without ``PYTHONDONTWRITEBYTECODE``,
as an installed package runs; ``--no-bytecode`` runs each tree from a copy of its package with
no ``__pycache__`` and ``PYTHONDONTWRITEBYTECODE=1`` (every module of the package compiled on
every start, as on a machine that sets it, like the build machine). Exit codes
are checked (0 or 1 expected): a run that errors is reported, not timed as fast. State goes to a
temporary ``DOMESTIQUE_HOME`` (one per source tree, warmed by one untimed run of each command).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ITEMS, ITEM_SIZE = 20, 100_000
COLD_ENGINE = """
import json, sys, time
from domestique.detect import default_scanner
items = [json.loads(line)["text"] for line in sys.stdin]
scanner = default_scanner()
scanner.scan("")
out = []
for _ in range(2):
    t0, c0 = time.perf_counter(), time.process_time()
    for text in items:
        scanner.scan(text)
    out.append([time.perf_counter() - t0, time.process_time() - c0])
print(json.dumps(out))
"""


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


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run(cmd: list[str], stdin: bytes, cwd: str, env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the child, its stdout)."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, cwd=cwd, env=env, check=False)
    elapsed = time.perf_counter() - t0
    cpu = _children_cpu() - c0
    if proc.returncode not in (0, 1):
        err = proc.stderr.decode(errors="replace")[-400:]
        raise SystemExit(f"{cmd!r} exited {proc.returncode}: {err}")
    return elapsed, cpu, proc.stdout


def start_daemon(src: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The hook daemon of the tree ``src``, started as the hook starts it; waits for its socket."""
    client = src / "domestique" / "hooks" / "client.py"
    Path(env["DOMESTIQUE_HOME"]).mkdir(mode=0o700, parents=True, exist_ok=True)
    daemon = subprocess.Popen(
        [sys.executable, "-I", "-S", str(client), "--daemon"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock = Path(env["DOMESTIQUE_HOME"], "hookd.sock")
    deadline = time.monotonic() + 30
    while not sock.exists():
        if time.monotonic() > deadline or daemon.poll() is not None:
            raise SystemExit(f"no daemon for {src}")
        time.sleep(0.05)
    return daemon


def daemon_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the daemon asked (``nostart``: a missing one is not started behind us)."""
    return dict(env, DOMESTIQUE_HOOKD="nostart")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--base", type=Path, help="another source tree (its src/) to compare with")
    ap.add_argument("--no-bytecode", action="store_true", help="set PYTHONDONTWRITEBYTECODE=1")
    args = ap.parse_args()

    items = corpus()
    megabytes = sum(len(t.encode()) for t in items) / 1e6
    jsonl = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(items)).encode()
    py = sys.executable

    import domestique
    from domestique.detect import default_scanner

    trees = {"this": Path(domestique.__file__).parents[1]}
    if args.base is not None:
        trees["base"] = args.base.resolve()
    if not args.no_bytecode:
        for src in trees.values():
            compileall.compile_dir(src / "domestique", quiet=1)

    with tempfile.TemporaryDirectory() as tmp:
        if args.no_bytecode:  # a copy without byte code, and none written
            for name, src in list(trees.items()):
                copy = Path(tmp, f"src-{name}")
                ignore = shutil.ignore_patterns("__pycache__")
                shutil.copytree(src / "domestique", copy / "domestique", ignore=ignore)
                trees[name] = copy
        tree = Path(tmp, "tree")
        tree.mkdir()
        for i, t in enumerate(items):
            (tree / f"item{i:02d}.py").write_text(t, encoding="utf-8")
        work = Path(tmp, "work")
        work.mkdir()
        envs: dict[str, dict[str, str]] = {}
        for name, src in trees.items():
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            if args.no_bytecode:
                env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPATH"] = str(src)
            env["DOMESTIQUE_HOME"] = str(Path(tmp, f"home-{name}"))
            env["DOMESTIQUE_HOOKD"] = "off"
            envs[name] = env
        script = str(Path(py).parent / "domestique")  # the console script, as a user runs it
        commands = {
            "check": ([py, "-m", "domestique", "check", "--", "git", "status"], b""),
            "checkd": ([script, "check", "--", "git", "status"], b""),
            "start": ([py, "-m", "domestique", "scan", "-"], b""),
            "jsonl": ([py, "-m", "domestique", "scan", "--jsonl"], jsonl),
            "dir": ([py, "-m", "domestique", "scan", "--json", str(tree)], b""),
            "cold": ([py, "-c", COLD_ENGINE], jsonl),
        }
        daemons = {name: start_daemon(src, envs[name]) for name, src in trees.items()}
        for env in envs.values():  # untimed: keys, caches and the audit store created
            for key, (cmd, stdin) in commands.items():
                run(cmd, stdin, str(work), daemon_env(env) if key == "checkd" else env)
        scanner = default_scanner(cwd=work)
        scanner.scan(items[0])  # warm
        cols: dict[str, list[float]] = {"pass": [], "eng": []}
        for _ in range(args.rounds):
            for key, (cmd, stdin) in commands.items():
                for name, env in envs.items():
                    wall, cpu, _ = run([py, "-c", "pass"], b"", str(work), env)
                    cols["pass"].append(wall)
                    cols.setdefault("cpu:pass", []).append(cpu)
                    wall, cpu, out = run(
                        cmd, stdin, str(work), daemon_env(env) if key == "checkd" else env
                    )
                    if key == "cold":
                        for n, (w, c) in enumerate(json.loads(out), 1):
                            cols.setdefault(f"cold{n}/{name}", []).append(w)
                            cols.setdefault(f"cpu:cold{n}/{name}", []).append(c)
                    else:
                        cols.setdefault(f"{key}/{name}", []).append(wall)
                        cols.setdefault(f"cpu:{key}/{name}", []).append(cpu)
            t0, c0 = time.perf_counter(), time.process_time()
            for t in items:
                scanner.scan(t)
            cols["eng"].append(time.perf_counter() - t0)
            cols.setdefault("cpu:eng", []).append(time.process_time() - c0)
        for name, daemon in daemons.items():  # it answered every timed check, or it is gone
            alive = daemon.poll() is None
            daemon.terminate()
            daemon.wait()
            if not alive:
                raise SystemExit(f"the {name} daemon died during the run: checkd was in-process")

    med = {k: statistics.median(v) for k, v in cols.items()}
    print(f"input: {ITEMS} x {ITEM_SIZE // 1000} KB = {megabytes:.2f} MB; rounds {args.rounds}")
    print("medians; wall clock, and in brackets the CPU time (user + system) of the process")
    print(
        f"python -c pass                   {med['pass'] * 1e3:8.1f} ms "
        f"[{med['cpu:pass'] * 1e3:6.1f} ms]"
    )
    for name, src in trees.items():
        print(f"-- {name}: {src}")
        for key, label in (
            ("check", "check -- git status"),
            ("checkd", "  the same, daemon answering"),
            ("start", "scan start-up (empty)"),
        ):
            m, c = med[f"{key}/{name}"], med[f"cpu:{key}/{name}"]
            print(
                f"{label:<32} {m * 1e3:8.1f} ms [{c * 1e3:6.1f} ms]   "
                f"{m / med['pass']:.2f}x [{c / med['cpu:pass']:.2f}x] python -c pass"
            )
        for key, label in (("jsonl", "scan --jsonl"), ("dir", "scan --json DIR")):
            work_s = max(med[f"{key}/{name}"] - med[f"start/{name}"], 1e-9)
            work_c = max(med[f"cpu:{key}/{name}"] - med[f"cpu:start/{name}"], 1e-9)
            print(
                f"{label:<32} {med[f'{key}/{name}'] * 1e3:8.1f} ms [{work_c * 1e3:6.1f} ms]   "
                f"{megabytes / work_s:6.1f} [{megabytes / work_c:6.1f}] MB/s end to end "
                "(start-up subtracted)"
            )
        for key, label in (("cold1", "engine, fresh process, 1st pass"), ("cold2", "  2nd pass")):
            m, c = med[f"{key}/{name}"], med[f"cpu:{key}/{name}"]
            print(
                f"{label:<32} {m * 1e3:8.1f} ms [{c * 1e3:6.1f} ms]   "
                f"{megabytes / m:6.1f} [{megabytes / c:6.1f}] MB/s"
            )
    m, c = med["eng"], med["cpu:eng"]
    print(
        f"engine in this process, warm     {m * 1e3:8.1f} ms [{c * 1e3:6.1f} ms]   "
        f"{megabytes / m:6.1f} [{megabytes / c:6.1f}] MB/s"
    )


if __name__ == "__main__":
    main()
