"""``domestique records``: register customer records for exact-data-match.

    domestique records add FILE --columns a,b,c [--name NAME]
    domestique records list
    domestique records remove NAME

``add`` stores only keyed fingerprints of the normalised cells under ``$DOMESTIQUE_HOME/records``
(never a raw cell value). Exit 0 on success, 1 when ``remove`` finds no such set, 2 on error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from domestique.cli._args import Parser, UsageError


def _parser() -> Parser:
    p = Parser(prog="domestique records", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="action", required=True, parser_class=Parser)
    add = sub.add_parser("add", help="index columns of a CSV file (fingerprints only)")
    add.add_argument("file", type=Path)
    add.add_argument("--columns", required=True, help="comma-separated column names")
    add.add_argument("--name", help="name of the record set (default: the file's stem)")
    sub.add_parser("list", help="list registered record sets")
    rm = sub.add_parser("remove", help="remove a record set")
    rm.add_argument("name")
    return p


def run(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"domestique records: {exc}\n")
        return 2
    from domestique.detect.customer_records import RecordsError
    from domestique.detect.sources import add_records, list_records, remove_records
    from domestique.keys import Fingerprinter

    try:
        if args.action == "add":
            columns = [c.strip() for c in args.columns.split(",") if c.strip()]
            info = add_records(args.file, columns, Fingerprinter.for_home(), name=args.name)
            sys.stdout.write(
                f"added {info.name}: {info.rows} rows, columns {','.join(info.columns)}, "
                f"{info.cells} fingerprints (no raw values stored)\n"
            )
            return 0
        if args.action == "list":
            for info in list_records():
                sys.stdout.write(
                    f"{info.name}\t{info.rows} rows\t{','.join(info.columns)}\t{info.added}\n"
                )
            return 0
        if remove_records(args.name):
            sys.stdout.write(f"removed {args.name}\n")
            return 0
        sys.stderr.write(f"domestique records: no record set named {args.name!r}\n")
        return 1
    except (RecordsError, OSError, UnicodeDecodeError) as exc:
        # RecordsError and OSError messages name files and columns, never cell values.
        detail = str(exc) if not isinstance(exc, UnicodeDecodeError) else "file is not UTF-8"
        sys.stderr.write(f"domestique records: error: {detail}\n")
        return 2
