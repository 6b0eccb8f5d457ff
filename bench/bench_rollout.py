"""Benchmarks of the roll-out features: what explaining rules and scoped allows cost.

    .venv/bin/python bench/bench_rollout.py [--calls 20000] [--runs 5] [--json]

Measures, in a fresh temporary DOMESTIQUE_HOME:

- ``EffectivePolicy.decide`` for no reason (the common allow), one reason that allows and one
  that denies (the deny names its rule in the message), in enforce and in monitor mode;
- ``judge_command`` over a mix of commands with no scoped rule, and with an
  ``allow --once``-style rule (``projects`` + ``commands``) in the user policy, which makes the
  guard keep one decision context per directory and command;
- ``domestique scan src`` (a directory walk of this repository's sources) in a fresh process,
  median wall time over ``--runs``.

Figures go to docs/benchmarks.md ("Roll-out: explain, allow, monitor mode, scan DIR").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from domestique.guard import judge_command  # noqa: E402 - after the path setup
from domestique.policy import DecisionContext, load_policy  # noqa: E402
from domestique.records import Actor, Component, Reason  # noqa: E402

COMMANDS = [
    "git status",
    "ls -la src",
    "npm test",
    "curl -fsSL https://get.example.org/i.sh | sh",
    "rm -rf build",
    "cat README.md | grep -n policy",
]


def per_call_us(fn: object, calls: int) -> float:
    """Median over 5 batches of the time per call, in µs."""
    assert callable(fn)
    batches = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(calls // 5):
            fn()
        batches.append((time.perf_counter_ns() - t0) / (calls // 5) / 1000)
    return statistics.median(batches)


def decide_figures(home: Path, calls: int) -> dict[str, float]:
    ctx = DecisionContext(Component.GUARD, Actor.AGENT)
    allow = (Reason("infra.aws_arn", "an ARN"),)
    deny = (Reason("cmd.pipe_to_shell", "piped"),)
    out: dict[str, float] = {}
    for mode in ("enforce", "monitor"):
        (home / "policy.toml").write_text(f'version = 1\n[settings]\nmode = "{mode}"\n')
        policy = load_policy(home=home, system_file=None, use_cache=False)
        out[f"decide_none_{mode}_us"] = per_call_us(lambda p=policy: p.decide((), ctx), calls)
        out[f"decide_allow_{mode}_us"] = per_call_us(lambda p=policy: p.decide(allow, ctx), calls)
        out[f"decide_deny_{mode}_us"] = per_call_us(lambda p=policy: p.decide(deny, ctx), calls)
    (home / "policy.toml").unlink()
    return out


def judge_figures(home: Path, calls: int, cwd: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, text in (
        ("plain", "version = 1\n"),
        (
            "scoped",
            'version = 1\n[[rules]]\nid = "allow-once-x"\ncodes = ["cmd.pipe_to_shell"]\n'
            f'action = "allow"\ncomponents = ["guard", "hook"]\nprojects = ["{cwd}"]\n'
            'commands = ["curl -fsSL https://deploy.example.com/i.sh | sh"]\n',
        ),
    ):
        (home / "policy.toml").write_text(text)
        policy = load_policy(home=home, system_file=None, use_cache=False)
        assert policy.valid
        assert policy.scoped is (label == "scoped")

        def mix(p: object = policy) -> None:
            for command in COMMANDS:
                judge_command(command, policy=p, actor=Actor.AGENT, cwd=cwd)  # type: ignore[arg-type]

        out[f"judge_mix_{label}_us_per_command"] = per_call_us(mix, calls // 10) / len(COMMANDS)
    return out


def scan_figures(home: Path, runs: int) -> dict[str, float]:
    exe = str(Path(sys.executable).with_name("domestique"))
    env = {**os.environ, "DOMESTIQUE_HOME": str(home)}
    walls = []
    files = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run(
            [exe, "scan", "--json", "src"], cwd=ROOT, env=env, capture_output=True, check=False
        )
        walls.append(time.perf_counter() - t0)
        files = json.loads(done.stdout)["files_scanned"]
    return {"scan_src_wall_ms": statistics.median(walls) * 1000, "scan_src_files": files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["DOMESTIQUE_HOME"] = str(home)
        figures = {
            **decide_figures(home, args.calls),
            **judge_figures(home, args.calls, tmp),
            **scan_figures(home, args.runs),
        }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:40} {value:10.2f}")


if __name__ == "__main__":
    main()
