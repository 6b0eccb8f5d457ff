"""Every guard decision over the corpora, for a before/after diff of a guard change.

    .venv/bin/python bench/guard_decisions.py dump OUT.tsv [--corpora ../shared/corpora]
        [--extra FILE]
    .venv/bin/python bench/guard_decisions.py diff BEFORE.tsv AFTER.tsv [--codes]

``dump`` judges every command of the sets ``eval_commands.py`` reads (and, with ``--extra``, the
commands of a file with one JSON string per line) for an agent and for a person, under the
built-in policy, and writes one line per decision: the command's sha256 (first 16 hex digits),
the actor, the action, the sorted reason codes and the command's first words. Run it once on the
old code (``PYTHONPATH=<old checkout>/src``) and once on the new. ``diff`` lists every command
whose action changed (``--codes``: also those whose codes changed) and counts them.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("DOMESTIQUE_HOME", tempfile.mkdtemp(prefix="dq-decisions-"))

HERE = Path(__file__).resolve().parent


def _commands(corpora: Path, extra: Path | None) -> list[str]:
    spec = importlib.util.spec_from_file_location("eval_commands", HERE / "eval_commands.py")
    assert spec is not None
    assert spec.loader is not None
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)
    items: list[str] = []
    for source in (ev._dcg, ev._gtfobins, ev._slp, ev._atomic, ev._tldr, ev._nl2bash):
        items.extend(command for _, command in source(corpora))
    if extra is not None:
        items.extend(json.loads(line) for line in extra.read_text().splitlines() if line)
    return list(dict.fromkeys(items))


def dump(out: Path, corpora: Path, extra: Path | None) -> int:
    from domestique.guard import judge_command
    from domestique.policy import load_policy
    from domestique.records import Actor

    policy = load_policy()
    cwd = tempfile.mkdtemp(prefix="dq-decisions-cwd-")  # no scripts there: nothing is read
    with out.open("w") as fh:
        for command in _commands(corpora, extra):
            sha = hashlib.sha256(command.encode()).hexdigest()[:16]
            first = " ".join(command.split()[:4])[:60].replace("\t", " ")
            for actor in (Actor.AGENT, Actor.HUMAN):
                j = judge_command(command, policy=policy, actor=actor, cwd=cwd)
                codes = ",".join(sorted(set(j.verdict.codes)))
                fh.write(f"{sha}\t{actor.value}\t{j.verdict.action.value}\t{codes}\t{first}\n")
    return 0


def _load(path: Path) -> dict[tuple[str, str], tuple[str, str, str]]:
    rows = {}
    for line in path.read_text().splitlines():
        sha, actor, action, codes, first = line.split("\t")
        rows[(sha, actor)] = (action, codes, first)
    return rows


def diff(before: Path, after: Path, *, codes: bool) -> int:
    old, new = _load(before), _load(after)
    actions = changed_codes = 0
    for key, (action, was, first) in old.items():
        if key not in new:
            print(f"missing   {key[0]} {key[1]:5} | {first}")
            continue
        now_action, now, _ = new[key]
        if action != now_action:
            actions += 1
            print(
                f"DECISION  {key[0]} {key[1]:5} {action} -> {now_action}  {was} -> {now}  | {first}"
            )
        elif was != now:
            changed_codes += 1
            if codes:
                print(f"codes     {key[0]} {key[1]:5} {action}  {was} -> {now}  | {first}")
    print(f"{len(old)} decisions: {actions} actions changed, {changed_codes} only in their codes")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--corpora", type=Path, default=HERE.parents[1] / "shared" / "corpora")
    d.add_argument("--extra", type=Path)
    f = sub.add_parser("diff")
    f.add_argument("before", type=Path)
    f.add_argument("after", type=Path)
    f.add_argument("--codes", action="store_true")
    args = ap.parse_args()
    if args.cmd == "dump":
        return dump(args.out, args.corpora, args.extra)
    return diff(args.before, args.after, codes=args.codes)


if __name__ == "__main__":
    sys.exit(main())
