"""``domestique enroll URL --token T``: register this endpoint with the fleet hub.

    domestique enroll URL --token T [--ca FILE] [--insecure-http]

Sends host, OS user, OS, Domestique version and the install key's fingerprint; stores the
per-endpoint credential (0600) and pins the organisation's policy-signing keys under
``$DOMESTIQUE_HOME/hub/``. The hub's certificate is always verified (``--ca`` for a private CA).
Exit 0 enrolled, 1 refused by the hub, 2 error. The endpoint id is the last stdout line.
"""

from __future__ import annotations

import sys

from domestique.cli._args import Parser, UsageError


def _parser() -> Parser:
    p = Parser(prog="domestique enroll", description="Register this endpoint with the hub.")
    p.add_argument("url", metavar="URL", help="the hub, https://HOST[:PORT]")
    p.add_argument("--token", required=True, help="an enrolment token from 'hub enroll-token'")
    p.add_argument("--ca", help="CA certificate file for the hub's certificate")
    p.add_argument(
        "--insecure-http", action="store_true", help="allow plain http to a hub off this machine"
    )
    return p


def run(argv: list[str]) -> int:
    from domestique.hub.endpoint import SyncError, enroll

    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"domestique enroll: {exc}\n")
        return 2
    try:
        config = enroll(args.url, args.token, ca=args.ca, insecure_http=args.insecure_http)
    except SyncError as exc:
        sys.stderr.write(f"domestique enroll: {exc}\n")
        return 1 if "refused" in str(exc) else 2
    except OSError as exc:
        sys.stderr.write(f"domestique enroll: {exc.strerror or exc}\n")
        return 2
    sys.stderr.write(f"enrolled with {config.hub} (organisation {config.org})\n")
    sys.stdout.write(config.endpoint_id + "\n")
    return 0
