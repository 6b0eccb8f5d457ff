"""Alternated cold A/B of the installed hook: every call finds no daemon, decides in-process and
starts one, which is stopped before the next call (each call is a session's first hook).

A is another checkout (`--base`, with its own `.venv`), B this one; each iteration runs
`sh -c '<B's venv python> -c pass'`, A and B back to back, the order flipped every iteration,
so all see the same load. Payload: a Claude Code PreToolUse `git status` (allowed: silence),
through a pipe as hosts send it (`--file`: from a file, as `bench_hooks.py` gives it). CPU time:
`getrusage` of the reaped `sh` and hook (the daemon it starts is not a child of theirs once it
detaches, so its time is not counted). Run as root, it re-runs itself as PID 1 of a new PID
namespace, as `bench_hooks.py` does (the hooks' ancestry is then this script and `sh`).

    .venv/bin/python bench/bench_hooks_cold_ab.py --base /tmp/base [--runs 20] [--file]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_hooks_ab import in_new_pid_namespace

HERE = Path(__file__).resolve().parents[1]


def _gone(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid
    except ChildProcessError:
        stat = Path(f"/proc/{pid}/stat")
        try:
            return ") Z" in stat.read_text()
        except OSError:
            return True


def stop_daemon(home: Path) -> None:
    """Stop the daemon the call started (once it listens) and wait until its files are gone."""
    pid_file = home / "hookd.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text().strip():
        if time.monotonic() > deadline:
            raise SystemExit("the cold call started no daemon")
        time.sleep(0.005)
    pid = int(pid_file.read_text())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while not _gone(pid) or pid_file.exists() or (home / "hookd.sock").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"daemon {pid} did not stop")
        time.sleep(0.005)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (A)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--file", action="store_true", help="payload from a file, not a pipe")
    parser.add_argument("--attached", action="store_true", help="keep the caller's ancestry")
    args = parser.parse_args()
    rerun = in_new_pid_namespace(args.attached)
    if rerun is not None:
        return rerun
    sides = {"A": args.base.resolve(), "B": HERE}
    python = HERE / ".venv" / "bin" / "python"
    # A short prefix: "dq-cold-ab-" and tempfile's 8 characters make a 16-character token-like
    # run, and the masking of the recorded cwd then loads the detection engine into every call.
    with tempfile.TemporaryDirectory(prefix="dq-") as tmp_name:
        tmp = Path(tmp_name)
        repo = tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git status"},
            }
        ).encode()
        payload_file = tmp / "payload.json"
        payload_file.write_bytes(payload)
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("DOMESTIQUE_")}
        commands: dict[str, tuple[str, dict[str, str], Path | None]] = {
            "pass": (f"{python} -c pass", base_env, None)
        }
        for name, root in sides.items():
            home = tmp / f"home-{name}"
            client = root / "src" / "domestique" / "hooks" / "client.py"
            env = dict(base_env, DOMESTIQUE_HOME=str(home), HOME=str(tmp), DOMESTIQUE_HOOKD="on")
            commands[name] = (f"{root}/.venv/bin/python -I -S {client} claude-code", env, home)

        def once(name: str) -> tuple[float, float]:
            command, env, home = commands[name]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            with payload_file.open("rb") as fh:
                done = subprocess.run(
                    ["sh", "-c", command],
                    stdin=fh if args.file else None,
                    input=None if args.file else payload,
                    env=env,
                    cwd=repo,
                    capture_output=True,
                    check=False,
                )
            wall = (time.perf_counter() - t0) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0 or done.stdout.strip():
                raise SystemExit(f"{name}: not an allow: {done!r}")
            if home is not None:
                stop_daemon(home)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            return wall, cpu * 1000

        for name in ("A", "B", "A", "B"):  # warm-up: .pyc, keys, caches, the store
            once(name)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        cpus: dict[str, list[float]] = {k: [] for k in commands}
        for i in range(args.runs):
            for name in ("pass", "A", "B") if i % 2 == 0 else ("B", "A", "pass"):
                wall, cpu = once(name)
                walls[name].append(wall)
                cpus[name].append(cpu)
    w = {k: statistics.median(v) for k, v in walls.items()}
    c = {k: statistics.median(v) for k, v in cpus.items()}
    stdin = "file" if args.file else "pipe"
    print(f"cold, payload through a {stdin}, {args.runs} runs, load {os.getloadavg()[0]:.1f}")
    print(f"{'':6} {'wall ms':>8} {'×pass':>6} {'cpu ms':>8} {'×pass':>6}")
    for k in commands:
        print(f"{k:6} {w[k]:8.1f} {w[k] / w['pass']:6.2f} {c[k]:8.1f} {c[k] / c['pass']:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
