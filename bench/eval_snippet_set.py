"""Judge a labelled snippet set kept outside the project (JSON lines) with the detector.

    .venv/bin/python bench/eval_snippet_set.py SET.jsonl [--show-misses] [--json OUT]

Each line: ``{"id": ..., "label": "secret" | "clean", "kind": ..., "text": ...}``, a secret
item also ``"secret"``: the value inside ``text``. A secret item is found when a finding
(``secret.*``, ``pii.*`` or ``infra.*``) overlaps its value (the whole text when no value is
given); a clean item is flagged when any ``secret.*`` or ``pii.*`` finding is reported in it.
Rules only, a random fingerprint key, as ``bench/eval_secrets.py`` runs them. Sets written by
testers who read nothing of the project are judged once before any change made for them.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections import Counter, defaultdict

from eval_secrets import domestique_detector

_FOUND = ("secret.", "pii.", "infra.")
_FLAG = ("secret.", "pii.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("set", type=pathlib.Path)
    ap.add_argument("--show-misses", action="store_true", help="print misses and false flags")
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args(argv)
    detect = domestique_detector()
    rows: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    out: list[dict[str, object]] = []
    shown: list[str] = []
    for n, line in enumerate(args.set.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        text = item["text"]
        findings = detect(text)
        if item["label"] == "secret":
            value = item.get("secret") or text
            at = text.find(value)
            lo, hi = (at, at + len(value)) if at >= 0 else (0, len(text))
            ok = any(c.startswith(_FOUND) and s < hi and e > lo for s, e, c in findings)
            verdict = "found" if ok else "missed"
        else:
            flags = [(s, e, c) for s, e, c in findings if c.startswith(_FLAG)]
            verdict = "flagged" if flags else "quiet"
            findings = flags
        rows[(item["label"], str(item.get("kind", "")))][verdict] += 1
        codes = sorted({c for _, _, c in findings})
        out.append({"id": item.get("id", n), "verdict": verdict, "codes": codes})
        if args.show_misses and verdict in ("missed", "flagged"):
            where = ",".join(f"{c}@{s}-{e}" for s, e, c in findings)
            shown.append(f"{verdict.upper():8} {item.get('id', n)} {item.get('kind', '')}"
                         f" [{where}]: {text[:300]!r}")  # fmt: skip
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    print(f"{'label:kind':36} {'n':>4} {'hit':>4}")
    for (label, kind), c in sorted(rows.items()):
        totals[label].update(c)
        hit = c["found"] if label == "secret" else c["flagged"]
        print(f"{label + ':' + kind:36.36} {sum(c.values()):4} {hit:4}")
    s, q = totals["secret"], totals["clean"]
    if s:
        print(f"ALL secret  n={sum(s.values())} recall {s['found'] / sum(s.values()):.3f}")
    if q:
        print(f"ALL clean   n={sum(q.values())} flagged {q['flagged'] / sum(q.values()):.3f}")
    for line in shown:
        print(line)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
