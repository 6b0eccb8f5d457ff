"""A/B of the installed hook command: another checkout (A) against this one (B).

Each side's command is the one its own `domestique install claude-code` writes (asked of that
side's `hook_command`; `--console` instead runs `.venv/bin/domestique hook claude-code` on both),
run as a host runs it, `sh -c '<command>'`, next to `sh -c '<B's venv python> -c pass'`. Each
iteration runs the baseline, A and B back to back, the order flipped every iteration, so all see
the same machine load. Two paths: through a running daemon (one per side, each its own
DOMESTIQUE_HOME) and in-process (daemon off). Payload: a Claude Code PreToolUse `git status`
(allowed: the reply is silence).

    .venv/bin/python bench/bench_hooks_ab.py --base /tmp/base-hooks [--runs 60] [--console]

Prints, per path, the medians, B/A, the median of the paired ratios and each side's ratio to
the baseline. The daemons started here are stopped at the end by their pids.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def in_new_pid_namespace(attached: bool) -> int | None:
    """Run this script again as PID 1 of a new PID namespace (as bench_hooks.py does, so the
    hooks' ancestry is this script and `sh`, like an agent's, not a build machine's: see its
    docstring) and return its exit code; None when already there or not possible."""
    unshare = shutil.which("unshare")
    if attached or not unshare or os.geteuid() != 0:
        return None
    argv = [unshare, "--pid", "--fork", "--mount-proc", sys.executable, *sys.argv]
    return subprocess.run([*argv, "--attached"], check=False).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (A)")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--console", action="store_true", help="`domestique hook` on both sides")
    parser.add_argument("--attached", action="store_true", help="keep the caller's ancestry")
    args = parser.parse_args()
    rerun = in_new_pid_namespace(args.attached)
    if rerun is not None:
        return rerun
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
        commands: dict[str, list[str]] = {}
        for side, root in sides.items():
            console = [str(root / ".venv/bin/domestique"), "hook", "claude-code"]
            if args.console:
                commands[side] = console
                continue
            ask = "from domestique.hooks.install import hook_command as h; print(h('claude-code'))"
            written = subprocess.run(
                [str(root / ".venv/bin/python"), "-c", ask],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            commands[side] = ["sh", "-c", written]
            print(f"{side}: {written}")
        for root in sides.values():
            # Byte code first: a __pycache__ folder created later changes a package folder's
            # mtime, and the daemon exits (a code change) instead of answering.
            where = "import domestique, os; print(os.path.dirname(domestique.__file__))"
            python = str(root / ".venv/bin/python")
            package = subprocess.run(
                [python, "-c", where], capture_output=True, text=True, check=True
            ).stdout.strip()
            subprocess.run([python, "-m", "compileall", "-q", package], check=True)
        py = str(HERE / ".venv/bin/python")
        commands["pass"] = ["sh", "-c", f"{py} -c pass"]
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

            envs["pass"] = envs["B"]

            def once(side: str, daemon: bool) -> float:
                env = dict(envs[side], **({} if daemon else {"DOMESTIQUE_HOOKD": "off"}))
                t0 = time.perf_counter()
                done = subprocess.run(
                    commands[side],
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

            head = f"{'path':11} {'pass ms':>8} {'A ms':>8} {'B ms':>8} {'B/A':>6} {'paired':>7}"
            print(f"{head} {'A/pass':>7} {'B/pass':>7}")
            for daemon in (True, False):
                for side in ("pass", *sides):
                    for _ in range(3):
                        once(side, daemon)  # warm-up: page cache, .pyc files
                times: dict[str, list[float]] = {"A": [], "B": [], "pass": []}
                for i in range(args.runs):
                    for side in ("pass", "A", "B") if i % 2 == 0 else ("B", "A", "pass"):
                        times[side].append(once(side, daemon))
                base, a, b = (statistics.median(times[s]) * 1e3 for s in ("pass", "A", "B"))
                pairs = zip(times["A"], times["B"], strict=True)
                paired = statistics.median(y / x for x, y in pairs)
                name = "daemon" if daemon else "in-process"
                print(
                    f"{name:11} {base:8.1f} {a:8.1f} {b:8.1f} {b / a:6.2f} {paired:7.2f} "
                    f"{a / base:7.2f} {b / base:7.2f}"
                )
        finally:
            for d in daemons:
                d.send_signal(signal.SIGTERM)
                d.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
