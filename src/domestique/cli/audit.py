"""``domestique audit``: verify the hash chain, export the log, or follow its tail.

domestique audit verify [--json]                exit 0 intact · 1 tampered · 2 error
domestique audit export [--format jsonl|ocsf] [--since 7d] [-o FILE]
domestique audit tail [-n N] [--follow] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from domestique.audit import AuditStore, AuditStoreError, StoredRow, verify
from domestique.audit.report import parse_since


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="domestique audit",
        description="The tamper-evident audit log in $DOMESTIQUE_HOME/audit.sqlite3.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    v = sub.add_parser(
        "verify",
        help="check the hash chain and the head checkpoint",
        description="Check every record's hash and link, the indexed columns and the head "
        "checkpoint. Exit 0 intact, 1 tampered (names the first bad record: edited, deleted, "
        "reordered or truncated), 2 error (no store, unreadable).",
    )
    v.add_argument("--json", action="store_true", help="print the result as JSON")
    e = sub.add_parser(
        "export",
        help="write the records as JSON lines or OCSF events",
        description="jsonl: each record's canonical JSON as stored (one per line). ocsf: OCSF "
        "1.5 events (proxy: 6003 API Activity; guard/hook: 1007 Process Activity).",
    )
    e.add_argument("--format", choices=("jsonl", "ocsf"), default="jsonl")
    e.add_argument("--since", metavar="WHEN", help="only records since (7d, 24h, 2026-11-01)")
    e.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    t = sub.add_parser(
        "tail",
        help="show the newest records",
        description="Show the newest records, oldest first; --follow keeps printing new ones.",
    )
    t.add_argument("-n", type=_count, default=10, metavar="N", help="how many (default 10)")
    t.add_argument("-f", "--follow", action="store_true", help="wait for and print new records")
    t.add_argument("--json", action="store_true", help="print each record's JSON")
    t.add_argument("--interval", type=float, default=0.5, help=argparse.SUPPRESS)
    return parser


def _summary(data: Mapping[str, Any]) -> str:
    obj = data.get("object") if isinstance(data.get("object"), Mapping) else {}
    assert isinstance(obj, Mapping)
    if data.get("component") == "proxy":
        parts = [str(obj.get(k)) for k in ("provider", "route", "model") if obj.get(k)]
        if isinstance(obj.get("bytes_out"), int):
            parts.append(f"{obj['bytes_out']}B out")
        return " ".join(parts)
    command = obj.get("command")
    return str(command) if command else ""


def format_row(row: StoredRow) -> str:
    """One line: seq, time, component, action, reason codes, and what was judged."""
    try:
        data = row.data()
    except ValueError:
        return f"{row.seq:>7} {row.time} {row.component:<5} {row.action:<6} (unreadable record)"
    raw = data.get("reasons")
    reasons: list[Any] = raw if isinstance(raw, list) else []
    codes = ",".join(str(r.get("code")) for r in reasons if isinstance(r, Mapping)) or "-"
    text = _summary(data).replace("\n", " ")
    if len(text) > 80:
        text = text[:79] + "…"
    return f"{row.seq:>7} {row.time[:19]}Z {row.component:<5} {row.action:<6} {codes}  {text}"


def _verify(as_json: bool) -> int:
    try:
        result = verify()
    except AuditStoreError as exc:
        sys.stderr.write(f"domestique audit verify: {exc}\n")
        return 2
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), sort_keys=True) + "\n")
    elif result.ok:
        sys.stdout.write(
            f"intact: {result.records} records, head {result.head_seq} {result.head_hash}\n"
        )
    else:
        sys.stdout.write(f"TAMPERED ({result.kind}): {result.problem}\n")
    return 0 if result.ok else 1


def _export(fmt: str, since: str | None, out: TextIO) -> int:
    from domestique.audit.export import ocsf_line

    with AuditStore.open(create=False) as store:
        for row in store.rows(since=since):
            if fmt == "jsonl":
                out.write(row.record + "\n")
            else:
                out.write(ocsf_line(row.data()) + "\n")
    return 0


def _count(text: str) -> int:
    """``-n``: a whole number of records, 0 or more (``-n -5`` used to print nothing, exit 0)."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of records (0 or more), got {text!r}")
    return int(text)


def _tail(n: int, follow: bool, as_json: bool, interval: float) -> int:
    with AuditStore.open(create=False) as store:
        rows = list(store.rows(limit=max(n, 0), newest_first=True))
        rows.reverse()
        last = rows[-1].seq if rows else store.head()[0]
        for row in rows:
            sys.stdout.write((row.record if as_json else format_row(row)) + "\n")
        sys.stdout.flush()
        while follow:
            time.sleep(interval)
            for row in store.rows(after_seq=last):
                sys.stdout.write((row.record if as_json else format_row(row)) + "\n")
                last = row.seq
            sys.stdout.flush()
    return 0


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args.json)
        if args.command == "export":
            since = parse_since(args.since) if args.since else None
            if args.output is not None:
                with args.output.open("w", encoding="utf-8") as fh:
                    return _export(args.format, since, fh)
            return _export(args.format, since, sys.stdout)
        return _tail(args.n, args.follow, args.json, args.interval)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:
        # The reader went away (| head): not our error. Silence the flush at exit.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (AuditStoreError, ValueError, OSError) as exc:
        sys.stderr.write(f"domestique audit {args.command}: {exc}\n")
        return 2
