"""Does background sync slow decisions? Hook-daemon decision latency with sync on vs off.

    .venv/bin/python bench/bench_sync_overhead.py [--decisions 400] [--rounds 3]

An enrolled endpoint (a temporary DOMESTIQUE_HOME) with a real hub (``domestique hub serve``
on the embedded SQLite default, loopback). In alternating rounds, the hook daemon runs with
background sync off (``DOMESTIQUE_SYNC=off``) and on with a worst-case interval of one second
(``DOMESTIQUE_SYNC_INTERVAL=1``: a sync child process uploads the decisions just made, every
second); each round sends ``--decisions`` Claude Code PreToolUse calls for ``git status``
through the daemon socket and times each round trip. Reported: p50 and p90 per mode over all
rounds (same run, same machine), and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
PAYLOAD = json.dumps(
    {
        "session_id": "bench",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01",
        "tool_input": {"command": "git status", "description": "run", "timeout": 120000},
    }
).encode()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home))
    return subprocess.run(
        [PY, "-m", "domestique", *args], env=env, capture_output=True, text=True, check=True
    )


def _wait_for(path: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("did not start")
        time.sleep(0.05)


def _round(home: Path, sync_on: bool, decisions: int) -> list[float]:
    from domestique.hooks.entry import ask_daemon, socket_path

    env = dict(os.environ, DOMESTIQUE_HOME=str(home), DOMESTIQUE_SYNC="on" if sync_on else "off")
    env["DOMESTIQUE_SYNC_INTERVAL"] = "1"
    daemon = subprocess.Popen([PY, "-m", "domestique.hooks.daemon", "600"], env=env)
    try:
        path = socket_path(str(home))
        _wait_for(path, daemon)
        os.environ["DOMESTIQUE_HOME"] = str(home)
        for _ in range(20):  # warm up
            ask_daemon("claude-code", PAYLOAD, timeout=10)
        times = []
        for _ in range(decisions):
            t0 = time.perf_counter()
            reply = ask_daemon("claude-code", PAYLOAD, timeout=10)
            times.append(time.perf_counter() - t0)
            assert reply is not None
            time.sleep(0.002)  # decisions spread over time, so syncs overlap them
        return times
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hub_home, home = Path(tmp) / "hub", Path(tmp) / "laptop"
        port = _port()
        hub = subprocess.Popen(
            [PY, "-m", "domestique", "hub", "serve", "--port", str(port)],
            env=dict(os.environ, DOMESTIQUE_HOME=str(hub_home)),
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("hub did not start")
                time.sleep(0.1)
            token = _cli(hub_home, "hub", "enroll-token").stdout.splitlines()[-1]
            _cli(home, "enroll", f"http://127.0.0.1:{port}", "--token", token)
            results: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.rounds):
                for mode in (False, True):
                    results[mode] += _round(home, mode, args.decisions)
            synced = json.loads(_cli(home, "sync", "--status", "--json").stdout)
        finally:
            hub.send_signal(signal.SIGTERM)
            hub.wait(10)
    out = {}
    for mode, times in results.items():
        times.sort()
        out["on" if mode else "off"] = {
            "p50_ms": round(statistics.median(times) * 1000, 3),
            "p90_ms": round(times[int(len(times) * 0.9)] * 1000, 3),
            "n": len(times),
        }
    out["ratio_p50_on_off"] = round(out["on"]["p50_ms"] / out["off"]["p50_ms"], 3)  # type: ignore[index]
    out["acknowledged_seq_at_end"] = synced["acknowledged_seq"]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
