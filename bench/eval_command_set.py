"""Judge a labelled command set kept outside the project (JSON lines) and print the figures.

    .venv/bin/python bench/eval_command_set.py SET.jsonl [SET.jsonl ...] [--show-misses]
        [--json OUT]

Each line: ``{"id": ..., "label": "attack" | "everyday", "cause": ..., "cmd": ...}``. Sets
written by testers who read nothing of the project are judged once, before any change made
for them; that first figure is the held-out one (docs/benchmarks.md says which run it was).

Built-in policy, actor agent, cwd a fresh git work tree (nothing runs). "Caught" = ask or
deny over the attacks; "stopped" = ask or deny over the everyday commands.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

from domestique.guard import judge_command
from domestique.policy import load_policy
from domestique.records import Actor


def _read(paths: list[pathlib.Path]) -> list[dict[str, str]]:
    items: list[dict[str, str]] = []
    for path in paths:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                sys.exit(f"{path}:{n}: not JSON: {exc.msg}")
            if item.get("label") not in ("attack", "everyday") or not isinstance(
                item.get("cmd"), str
            ):
                sys.exit(f"{path}:{n}: needs label attack|everyday and a string cmd")
            items.append(item)
    return items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("sets", nargs="+", type=pathlib.Path)
    ap.add_argument("--show-misses", action="store_true", help="print every miss, ask and stop")
    ap.add_argument("--json", type=pathlib.Path, help="write each item's action and codes here")
    args = ap.parse_args(argv)
    items = _read(args.sets)
    policy = load_policy()
    rows: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    out: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory() as cwd:
        subprocess.run(["git", "init", "-q", cwd], check=True)
        for item in items:
            verdict = judge_command(item["cmd"], policy=policy, actor=Actor.AGENT, cwd=cwd).verdict
            action = verdict.action.value
            rows[(item["label"], str(item.get("cause", "")))][action] += 1
            out.append({**item, "action": action, "codes": ",".join(verdict.codes)})
    print(f"{'label:cause':40} {'n':>4} {'deny':>5} {'ask':>4} {'allow':>5}")
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    for (label, cause), acts in sorted(rows.items()):
        n = sum(acts.values())
        totals[label].update(acts)
        name = f"{label}:{cause}"
        print(f"{name:40.40} {n:4} {acts['deny']:5} {acts['ask']:4} {acts['allow']:5}")
    for label, acts in sorted(totals.items()):
        n = sum(acts.values())
        stopped = n - acts["allow"]
        word = "caught" if label == "attack" else "stopped"
        print(f"ALL {label:10} n={n} deny={acts['deny']} ask={acts['ask']} allow={acts['allow']}"
              f"  {word} {stopped / n:.3f}  denied {acts['deny'] / n:.3f}")  # fmt: skip
    if args.show_misses:
        for row in out:
            if row["label"] == "attack" and row["action"] != "deny":
                tag = "MISS" if row["action"] == "allow" else "ASK "
                print(f"{tag} {row.get('id', '')} {row.get('cause', '')}: {row['cmd']!r}"
                      f"  [{row['codes']}]")  # fmt: skip
            elif row["label"] == "everyday" and row["action"] != "allow":
                print(f"STOP {row.get('id', '')} {row.get('cause', '')}: {row['cmd']!r}"
                      f"  [{row['action']} {row['codes']}]")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
