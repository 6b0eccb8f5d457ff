"""``domestique report``: what was sent out through AI tools, what was redacted or stopped, why.

    domestique report [--since 7d] [--json] [--html FILE]

Answers from the audit log alone: totals by component, action, reason code, destination
(provider and upstream host), agent, repository, model and session; what the firewall forwarded
(requests, bytes, models per destination); a timeline; every redaction or stop with its reason
code, and the newest decisions with their masked evidence. In monitor mode it says what would
have been denied. ``--json`` keeps every earlier field and adds the new ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from domestique.audit import AuditStore, AuditStoreError
from domestique.audit.report import build_report, parse_since, render_html, render_text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="domestique report",
        description="What left the machine through AI tools, what was redacted, asked about "
        "or stopped, and why: from the audit log alone.",
    )
    parser.add_argument(
        "--since",
        default="7d",
        metavar="WHEN",
        help="window start: 30m, 24h, 7d, 2w, a date (2026-11-01) or 'all' (default 7d)",
    )
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write an HTML page")
    return parser


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        since = None if args.since == "all" else parse_since(args.since)
        with AuditStore.open(create=False) as store:
            report = build_report((row.data() for row in store.rows(since=since)), since=since)
        if args.html is not None:
            args.html.write_text(render_html(report), encoding="utf-8")
    except (AuditStoreError, ValueError, OSError) as exc:
        sys.stderr.write(f"domestique report: {exc}\n")
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(render_text(report))
    return 0
