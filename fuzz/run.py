"""``python -m fuzz.run SECONDS [TARGET ...]``: run each harness for SECONDS; exit 1 on a finding.

Prints one line per target (executions, seconds, executions per second) and, for a finding,
the traceback and the saved input. ``./dev fuzz SECONDS`` calls this.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile

from ._harness import Target, run

TARGETS = ("body", "fields", "stream", "shell", "policy", "hooks", "audit", "hub_ingest")


def target(name: str) -> Target:
    module = importlib.import_module(f"fuzz.fuzz_{name}")
    found: Target = module.TARGET
    return found


def main(argv: list[str]) -> int:
    if not argv or not argv[0].replace(".", "", 1).isdigit():
        print("usage: python -m fuzz.run SECONDS [TARGET ...]", file=sys.stderr)
        return 2
    seconds = float(argv[0])
    names = argv[1:] or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        print(
            f"unknown target(s): {', '.join(unknown)}; known: {', '.join(TARGETS)}", file=sys.stderr
        )
        return 2
    # Harnesses that write (policy files, hook decisions) do so under a private home.
    os.environ["DOMESTIQUE_HOME"] = tempfile.mkdtemp(prefix="dq-fuzz-")
    found = False
    for name in names:
        outcome = run(target(name), seconds)
        rate = outcome.executions / outcome.seconds if outcome.seconds else 0.0
        status = "FINDING" if outcome.finding else "ok"
        line = f"{name:8} {status:8} {outcome.executions:9d} execs {outcome.seconds:8.1f} s"
        print(f"{line} {rate:9.0f}/s", flush=True)
        if outcome.finding:
            found = True
            print(outcome.finding, file=sys.stderr)
            if outcome.saved:
                print(f"input saved: {outcome.saved}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
