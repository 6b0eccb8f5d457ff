"""Judge the round-5a held-out cases (tests/guard/heldout_a_cases.py) and print the figures.

    .venv/bin/python bench/eval_heldout_a.py [--batch 1..8] [--show-misses] [--json FILE]

Batch 1: ATTACKS, ASKED, BENIGN (written before the rules were read); batch 2: ATTACKS_2 and
BENIGN_2 (written after batch 1 was fixed, judged before any change for it); batch 3 the same
after batch 2, batch 4 after batch 3, and so on
to batch 8.

Built-in policy, actor agent, cwd an empty temp folder. "caught" = ask or deny over the attacks
(ATTACKS and ASKED together); "stopped" = ask or deny over the everyday look-alikes (BENIGN).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

from domestique.guard import judge_command
from domestique.policy import load_policy
from domestique.records import Actor

_TESTS = pathlib.Path(__file__).resolve().parent.parent / "tests" / "guard"


Table = dict[str, list[str]]


def _load(batch: int) -> tuple[Table, Table, Table]:
    ns: dict[str, object] = {}
    source = (_TESTS / "heldout_a_cases.py").read_text(encoding="utf-8")
    exec(compile(source, "heldout_a_cases.py", "exec"), ns)  # noqa: S102 - our own data file
    by_design: dict[int, list[str]] = ns["BY_DESIGN"]  # type: ignore[assignment]
    kept: dict[int, list[str]] = ns["BENIGN_STOPPED"]  # type: ignore[assignment]
    if batch > 1:
        attacks: Table = ns[f"ATTACKS_{batch}"]  # type: ignore[assignment]
        asked: Table = {}
        benign: Table = ns[f"BENIGN_{batch}"]  # type: ignore[assignment]
    else:
        attacks, asked, benign = ns["ATTACKS"], ns["ASKED"], ns["BENIGN"]  # type: ignore[assignment]
    # the figures keep the labels as written: reviewed cases count where they were first put
    if by_design.get(batch):
        asked = {**asked, "allowed-by-design": by_design[batch]}
    if kept.get(batch):
        benign = {**benign, "stopped-by-design": kept[batch]}
    return attacks, asked, benign


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, choices=(1, 2, 3, 4, 5, 6, 7, 8), default=1)
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args(argv)
    attacks, asked, benign = _load(args.batch)
    policy = load_policy()
    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as cwd:

        def judge(c: str) -> str:
            j = judge_command(c, policy=policy, actor=Actor.AGENT, cwd=cwd)
            out[c] = {"action": j.verdict.action.value, "codes": ",".join(j.verdict.codes)}
            return j.verdict.action.value

        print(f"{'set':22} {'n':>4} {'deny':>5} {'ask':>4} {'allow':>5}  figure")
        tot = {"n": 0, "deny": 0, "ask": 0}
        for label, table in (("attack", attacks), ("asked", asked)):
            for cause, cases in table.items():
                acts = [judge(c) for c in cases]
                d, a = acts.count("deny"), acts.count("ask")
                tot["n"] += len(acts)
                tot["deny"] += d
                tot["ask"] += a
                print(f"{label + ':' + cause:22} {len(acts):4} {d:5} {a:4} "
                      f"{len(acts) - d - a:5}  caught {(d + a) / len(acts):.3f}")  # fmt: skip
        n = tot["n"]
        print(f"{'ALL ATTACKS':22} {n:4} {tot['deny']:5} {tot['ask']:4} "
              f"{n - tot['deny'] - tot['ask']:5}  caught {(tot['deny'] + tot['ask']) / n:.3f}"
              f" denied {tot['deny'] / n:.3f}")  # fmt: skip
        bn = bs = 0
        for cause, cases in benign.items():
            acts = [judge(c) for c in cases]
            s = len(acts) - acts.count("allow")
            bn += len(acts)
            bs += s
            d, a = acts.count("deny"), acts.count("ask")
            print(f"{'benign:' + cause:22} {len(acts):4} {d:5} {a:4} "
                  f"{len(acts) - d - a:5}  stopped {s / len(acts):.3f}")  # fmt: skip
        print(f"{'ALL BENIGN':22} {bn:4} {'':5} {'':4} {'':5}  stopped {bs}/{bn} = {bs / bn:.3f}")
    if args.show_misses:
        for table, want in ((attacks, "allow"), (asked, "allow")):
            for cause, cases in table.items():
                for c in cases:
                    if out[c]["action"] == want:
                        print(f"MISS {cause}: {c}")
        for cause, cases in attacks.items():
            for c in cases:
                if out[c]["action"] == "ask":
                    print(f"ASK  {cause}: {c}  [{out[c]['codes']}]")
        for cause, cases in benign.items():
            for c in cases:
                if out[c]["action"] != "allow":
                    print(f"STOP {cause}: {c}  [{out[c]['action']} {out[c]['codes']}]")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
