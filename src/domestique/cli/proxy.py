"""``domestique proxy``: run the firewall, a local proxy to the model providers.

    domestique proxy [--host 127.0.0.1] [--port 8788] [--upstream NAME=URL ...] [--policy FILE]
                     [--quiet] [--allow-remote]

NAME is anthropic, openai or gemini; the defaults are the public APIs. Point the tools at it
(docs/agents.md): ``ANTHROPIC_BASE_URL=http://127.0.0.1:8788`` and so on. It runs one worker
process per core (at most 4; one off Linux); ``DOMESTIQUE_PROXY_WORKERS=N`` sets the number
(the firewall keeps no state between requests but the audit log and the vault on disk).

The firewall forwards with the developer's own key to whoever can reach it, so it listens on
loopback only: a ``--host`` that is not a loopback address is refused (exit 2) unless
``--allow-remote`` says so. Each request prints one line to stderr (time, route, model,
action, codes, fields scanned, latency, status; never content); ``--quiet`` turns that off.
A port already in use is an error (exit 2) before anything says "listening".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="domestique proxy",
        description="Run the firewall: a local proxy that scans, redacts and forwards requests "
        "to the model providers with the developer's own key.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8788, help="port to listen on (8788)")
    p.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="upstream for anthropic | openai | gemini (repeatable; default: the public APIs)",
    )
    p.add_argument("--policy", type=Path, default=None, metavar="FILE", help="extra policy layer")
    p.add_argument(
        "--quiet", action="store_true", help="no line per request on stderr (errors still print)"
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on a --host that is not loopback: other machines could then send "
        "requests through it with your key",
    )
    return p


def run(argv: list[str]) -> int:
    from domestique.proxy.server import (
        UpstreamError,
        default_workers,
        is_loopback,
        parse_upstreams,
        serve,
    )

    args = _parser().parse_args(argv)
    try:
        upstreams = parse_upstreams(args.upstream)
    except UpstreamError as exc:
        sys.stderr.write(f"domestique proxy: {exc}\n")
        return 2
    if not 0 < args.port < 65536:
        sys.stderr.write("domestique proxy: --port must be 1..65535\n")
        return 2
    if not is_loopback(args.host):
        if not args.allow_remote:
            sys.stderr.write(
                f"domestique proxy: --host {args.host} is not a loopback address; anyone who "
                "can reach it could send requests with your key. Use 127.0.0.1 (the default), "
                "or pass --allow-remote to listen there anyway.\n"
            )
            return 2
        sys.stderr.write(
            f"domestique proxy: warning: listening on {args.host}, reachable from other "
            "machines (--allow-remote)\n"
        )
    try:
        workers = default_workers()
    except ValueError as exc:
        sys.stderr.write(f"domestique proxy: {exc}\n")
        return 2

    def listening() -> None:
        sys.stderr.write(
            f"domestique proxy: listening on http://{args.host}:{args.port}\n"
            + "".join(f"  {p.value:<9} -> {u}\n" for p, u in upstreams.items())
        )
        sys.stderr.flush()

    try:
        serve(
            args.host,
            args.port,
            upstreams,
            policy_file=args.policy,
            workers=workers,
            quiet=args.quiet,
            on_bound=listening,
        )
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        sys.stderr.write(
            f"domestique proxy: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n"
        )
        return 2
    return 0
