"""``domestique sync``: upload unacknowledged decision records, fetch the signed policy bundle.

    domestique sync [--status] [--json]

Exit 0 when every record is acknowledged and the bundle (if any) is installed; 1 when the hub
refused something or a bundle was rejected (the last good one stays); 2 on an error (not
enrolled, hub unreachable). Records stay on this machine until the hub acknowledges them.
``--status --json``: {"endpoint_id", "hub", "pending", "last_sync", "bundle_revision", ...}.
"""

from __future__ import annotations

import json
import sys

from domestique.cli._args import Parser, UsageError


def _parser() -> Parser:
    p = Parser(prog="domestique sync", description="Sync this endpoint with the fleet hub.")
    p.add_argument("--status", action="store_true", help="show the sync state, change nothing")
    p.add_argument("--json", action="store_true", help="one JSON object")
    return p


def run(argv: list[str]) -> int:
    from domestique.hub.endpoint import status, sync

    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"domestique sync: {exc}\n")
        return 2
    try:
        if args.status:
            state = status()
            if args.json:
                sys.stdout.write(json.dumps(state) + "\n")
            else:
                for key in ("endpoint_id", "hub", "pending", "last_sync", "bundle_revision"):
                    sys.stdout.write(f"{key}: {state[key]}\n")
            return 0 if state["enrolled"] else 2
        result = sync()
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"domestique sync: cannot read the sync state ({type(exc).__name__})\n")
        return 2
    out = {
        "uploaded": result.uploaded,
        "acknowledged_seq": result.acknowledged_seq,
        "alerts": result.alerts,
        "bundle_revision": result.bundle_revision,
        "bundle_installed": result.bundle_installed,
        "bundle_rejected": result.bundle_rejected,
        "error": result.error,
    }
    if args.json:
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        sys.stdout.write(
            f"uploaded {result.uploaded} record(s), acknowledged up to {result.acknowledged_seq}"
            f"; bundle revision {result.bundle_revision}\n"
        )
    if result.error is not None:
        sys.stderr.write(f"domestique sync: {result.error}\n")
        return 1 if "refused" in result.error else 2
    if result.bundle_rejected is not None:
        sys.stderr.write(
            f"domestique sync: bundle rejected ({result.bundle_rejected}); the last good one "
            "stays in force\n"
        )
        return 1
    return 0
