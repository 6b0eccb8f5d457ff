"""``domestique codes``: every reason code and its meaning (``--markdown`` for the docs page)."""

from __future__ import annotations

import argparse
import sys

from domestique.reason_codes import registry, render_markdown


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="domestique codes", description=__doc__)
    parser.add_argument("--markdown", action="store_true", help="print docs/reason-codes.md")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(render_markdown())
        return 0
    for code, rc in sorted(registry().items()):
        sys.stdout.write(f"{code}\t{rc.meaning}\n")
    return 0
