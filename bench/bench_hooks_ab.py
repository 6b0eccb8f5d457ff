"""A/B of `domestique hook claude-code` start-up: another checkout (A) against this one (B).

Each iteration runs A and B back to back, the order flipped every iteration, so both see the same
machine load (a shared machine's load swings more between two hyperfine runs than a change
moves the figure). Two paths: through a running daemon (one per side, each its own
DOMESTIQUE_HOME) and in-process (daemon off). Payload: a Claude Code PreToolUse `git status`
(allowed: the reply is silence). Each side uses its own `.venv/bin/domestique`.

    .venv/bin/python bench/bench_hooks_ab.py --base /tmp/base-hooks [--runs 60]

Prints, per path, both medians, their ratio (B/A) and the median of the paired ratios. The
daemons started here are stopped at the end by their pids.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (A)")
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    sides = {"A": args.base.resolve(), "B": HERE}
    for root in sides.values():
        if not (root / ".venv" / "bin" / "domestique").exists():
            print(f"{root}: no .venv/bin/domestique (./dev test --co -q there)", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="dq-ab-") as tmp_name:
        tmp = Path(tmp_name)
        repo = tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        payload = json.dumps(
            {
                "session_id": "bench",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_use_id": "toolu_bench",
                "tool_input": {"command": "git status"},
            }
        ).encode()
        envs: dict[str, dict[str, str]] = {}
        daemons = []
        try:
            for side, root in sides.items():
                state, home = tmp / f"state-{side}", tmp / f"home-{side}"
                home.mkdir()
                env = dict(os.environ, DOMESTIQUE_HOME=str(state), DOMESTIQUE_HOOKD="nostart")
                env["HOME"] = str(home)
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                envs[side] = env
                daemons.append(
                    subprocess.Popen(
                        [str(root / ".venv/bin/python"), "-m", "domestique.hooks.daemon", "600"],
                        env=env,
                        cwd=repo,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                deadline = time.monotonic() + 60
                while not (state / "hookd.sock").exists():
                    if time.monotonic() > deadline:
                        print(f"{side}: the daemon did not start", file=sys.stderr)
                        return 2
                    time.sleep(0.05)

            def once(side: str, daemon: bool) -> float:
                env = dict(envs[side], **({} if daemon else {"DOMESTIQUE_HOOKD": "off"}))
                t0 = time.perf_counter()
                done = subprocess.run(
                    [str(sides[side] / ".venv/bin/domestique"), "hook", "claude-code"],
                    input=payload,
                    env=env,
                    cwd=repo,
                    capture_output=True,
                    check=False,
                )
                elapsed = time.perf_counter() - t0
                if done.returncode != 0 or done.stdout:
                    raise SystemExit(f"{side}: `git status` was not allowed: {done!r}")
                return elapsed

            print(f"{'path':11} {'A median ms':>12} {'B median ms':>12} {'B/A':>6} {'paired':>7}")
            for daemon in (True, False):
                for side in sides:
                    for _ in range(3):
                        once(side, daemon)  # warm-up: page cache, .pyc files
                times: dict[str, list[float]] = {"A": [], "B": []}
                for i in range(args.runs):
                    for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
                        times[side].append(once(side, daemon))
                a, b = (statistics.median(times[s]) * 1e3 for s in ("A", "B"))
                pairs = zip(times["A"], times["B"], strict=True)
                paired = statistics.median(y / x for x, y in pairs)
                name = "daemon" if daemon else "in-process"
                print(f"{name:11} {a:12.1f} {b:12.1f} {b / a:6.2f} {paired:7.2f}")
        finally:
            for d in daemons:
                d.send_signal(signal.SIGTERM)
                d.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
