"""``domestique hub``: run and administer the fleet hub (needs the ``hub`` extra for PostgreSQL).

    domestique hub serve [--host H] [--port P] [--database URL] [--certfile F --keyfile F]
                         [--insecure-http] [--export-otlp URL]... [--export-syslog URL]...
                         [--config FILE]
    domestique hub migrate [--database URL]
    domestique hub enroll-token [--expires 7d] [--uses N] [--database URL]   token: last line
    domestique hub admin-token [--expires 30d] [--database URL]              token: last line
    domestique hub publish FILE [--key KEY] | publish --signed BUNDLE   [--database URL]
    domestique hub publish FILE --dry-run [--since 30d] [--json]      fleet what-if, changes nothing
    domestique hub revoke ID [--database URL]
    domestique hub report --json [--since WHEN] [--database URL]
    domestique hub info | trust-key PUBLIC [--replace] | require-bundle yes|no

``--database`` defaults to ``$DOMESTIQUE_HUB_DATABASE``, else the embedded SQLite file under
``$DOMESTIQUE_HOME/hub/``. Exit 0 on success, 1 when the request was refused (an invalid
policy, an unknown endpoint, an older revision), 2 on an error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from domestique.cli._args import Parser, UsageError

EXIT_OK, EXIT_REFUSED, EXIT_ERROR = 0, 1, 2


def parse_duration(text: str) -> float:
    """``90s``, ``15m``, ``12h``, ``7d`` or plain seconds, as seconds. ValueError otherwise."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    text = text.strip().lower()
    if text and text[-1] in units:
        value, unit = float(text[:-1]), units[text[-1]]
    else:
        value, unit = float(text), 1
    if not 0 < value * unit < 10 * 365 * 86400:
        raise ValueError("duration out of range")
    return value * unit


def parse_since(text: str) -> str:
    """``--since``: a duration back from now (``7d``) or an ISO UTC time."""
    import time

    from domestique.hub.batch import normalise_time
    from domestique.records import utc_now_iso

    try:
        seconds = parse_duration(text)
    except ValueError:
        value = text if text.endswith("Z") else text + "Z"
        if len(value) == 11:  # a date alone
            value = value[:-1] + "T00:00:00Z"
        return normalise_time(value)
    return utc_now_iso(time.time_ns() - int(seconds * 1e9))


def _parser() -> Parser:
    p = Parser(prog="domestique hub", description="Run and administer the fleet hub.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    def db(sp: Any) -> None:
        sp.add_argument(
            "--database",
            default=os.environ.get("DOMESTIQUE_HUB_DATABASE"),
            metavar="URL",
            help="postgresql://… (default: embedded SQLite under DOMESTIQUE_HOME/hub)",
        )

    s = sub.add_parser("serve", help="run the hub's HTTP service")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8789)
    s.add_argument("--certfile", type=Path)
    s.add_argument("--keyfile", type=Path)
    s.add_argument("--insecure-http", action="store_true", help="allow plain http off loopback")
    s.add_argument(
        "--public-url",
        metavar="URL",
        help="the address people open (https://hub.example.com) when a TLS reverse proxy is in "
        "front: the web report's session cookie is then Secure and forms from it are accepted",
    )
    s.add_argument(
        "--export-otlp",
        action="append",
        default=[],
        metavar="URL",
        help="forward to an OTLP/HTTP logs endpoint (repeatable)",
    )
    s.add_argument(
        "--export-syslog",
        action="append",
        default=[],
        metavar="URL",
        help="forward as RFC 5424 syslog: tcp://HOST:PORT or tls://HOST:PORT (repeatable)",
    )
    s.add_argument(
        "--config",
        type=Path,
        default=os.environ.get("DOMESTIQUE_HUB_CONFIG") or None,
        metavar="FILE",
        help="hub config file (TOML: [[sinks]]; default $DOMESTIQUE_HUB_CONFIG)",
    )
    db(s)
    db(sub.add_parser("migrate", help="apply the database migrations"))
    t = sub.add_parser("enroll-token", help="make an enrolment token (last stdout line)")
    t.add_argument("--expires", default="7d", help="lifetime: 90m, 12h, 7d (default 7d)")
    t.add_argument("--uses", type=int, default=1, help="how many endpoints may use it (1)")
    db(t)
    pub = sub.add_parser("publish", help="validate, sign and publish a policy bundle")
    pub.add_argument("file", type=Path, metavar="FILE")
    pub.add_argument("--signed", action="store_true", help="FILE is a bundle signed offline")
    pub.add_argument("--key", type=Path, help="signing key (default: the hub's own)")
    pub.add_argument(
        "--dry-run",
        action="store_true",
        help="publish nothing: print what FILE would change fleet-wide (per endpoint, "
        "developer, code)",
    )
    pub.add_argument("--since", default="30d", help="dry run: records since (30d; 'all')")
    pub.add_argument("--json", action="store_true", help="dry run: one JSON object")
    db(pub)
    adm = sub.add_parser("admin-token", help="make a web report login token (last stdout line)")
    adm.add_argument("--expires", default="30d", help="lifetime: 12h, 7d, 30d (default 30d)")
    db(adm)
    r = sub.add_parser("revoke", help="revoke an endpoint: its calls get 401")
    r.add_argument("endpoint_id", metavar="ID")
    db(r)
    rep = sub.add_parser("report", help="fleet totals from the central store")
    rep.add_argument("--json", action="store_true", help="one JSON object")
    rep.add_argument("--since", help="7d, 12h or an ISO time")
    db(rep)
    db(sub.add_parser("info", help="organisation id, trusted keys, newest revision (JSON)"))
    k = sub.add_parser("trust-key", help="trust a bundle-signing public key (key rotation)")
    k.add_argument("public_key", metavar="PUBLIC")
    k.add_argument("--replace", action="store_true", help="trust only this key from now on")
    db(k)
    rb = sub.add_parser("require-bundle", help="endpoints deny everything until a bundle is in")
    rb.add_argument("value", choices=("yes", "no"))
    db(rb)
    return p


def _home() -> Path:
    from domestique.keys import domestique_home

    return domestique_home()


def _err(message: str) -> None:
    sys.stderr.write(f"domestique hub: {message}\n")


def run(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        _err(str(exc))
        return EXIT_ERROR
    from domestique.hub.store import HubDatabaseError, HubStore

    if args.command == "serve":
        from domestique.hub.server import ServeError, serve
        from domestique.hub.sinks import SinkConfigError, collect

        if not 0 < args.port < 65536:
            _err("--port must be 1..65535")
            return EXIT_ERROR
        try:
            sinks = collect(otlp=args.export_otlp, syslog=args.export_syslog, config=args.config)
        except SinkConfigError as exc:
            _err(f"{exc.code}: {exc}")
            return EXIT_ERROR
        scheme = "https" if args.certfile else "http"
        sys.stderr.write(f"domestique hub: listening on {scheme}://{args.host}:{args.port}\n")
        try:
            serve(
                host=args.host,
                port=args.port,
                database=args.database,
                home=_home(),
                certfile=args.certfile,
                keyfile=args.keyfile,
                insecure_http=args.insecure_http,
                sinks=sinks,
                public_url=args.public_url,
            )
        except ServeError as exc:
            _err(str(exc))
            return EXIT_ERROR
        except HubDatabaseError as exc:
            _err(str(exc))
            return EXIT_ERROR
        except KeyboardInterrupt:
            return EXIT_OK
        except OSError as exc:
            _err(f"cannot listen: {exc.strerror or exc}")
            return EXIT_ERROR
        return EXIT_OK
    try:
        store = HubStore.open(args.database, _home(), migrate_now=args.command != "migrate")
    except HubDatabaseError as exc:
        _err(str(exc))
        return EXIT_ERROR
    try:
        return _admin(args, store)
    except HubDatabaseError as exc:
        _err(str(exc))
        return EXIT_ERROR
    finally:
        store.close()


def _admin(args: Any, store: Any) -> int:
    out = sys.stdout
    if args.command == "migrate":
        done = store.migrate()
        applied = ", ".join(str(v) for v in done) or "none"
        out.write(f"hub database {store.db.description}: up to date (applied: {applied})\n")
        return EXIT_OK
    if args.command == "enroll-token":
        try:
            expires = parse_duration(args.expires)
        except ValueError:
            _err("--expires must be like 90m, 12h, 7d")
            return EXIT_ERROR
        if not 0 < args.uses <= 1_000_000:
            _err("--uses must be 1..1000000")
            return EXIT_ERROR
        token = store.create_enroll_token(expires_s=expires, uses=args.uses)
        sys.stderr.write(f"enrolment token for {args.uses} endpoint(s), valid {args.expires}:\n")
        out.write(token + "\n")
        return EXIT_OK
    if args.command == "admin-token":
        try:
            expires = parse_duration(args.expires)
        except ValueError:
            _err("--expires must be like 12h, 7d, 30d")
            return EXIT_ERROR
        from domestique.hub.web._auth import create_admin_token

        token = create_admin_token(store, expires_s=expires)
        sys.stderr.write(
            f"web report login, valid {args.expires}: open https://HUB/login?token=TOKEN\n"
        )
        out.write(token + "\n")
        return EXIT_OK
    if args.command == "revoke":
        if store.revoke(args.endpoint_id):
            out.write(f"revoked {args.endpoint_id}\n")
            return EXIT_OK
        _err(f"no active endpoint {args.endpoint_id!r}")
        return EXIT_REFUSED
    if args.command == "report":
        try:
            since = parse_since(args.since) if args.since else None
        except ValueError:
            _err("--since must be like 7d, 12h or an ISO time")
            return EXIT_ERROR
        report = store.report(since=since)
        if args.json:
            out.write(json.dumps(report, ensure_ascii=False) + "\n")
        else:
            out.write(_report_text(report))
        return EXIT_OK
    if args.command == "info":
        info = {
            "org": store.org_id(),
            "signing_keys": store.signing_keys(),
            "next_revision": store.next_revision(),
            "require_bundle": store.require_bundle(),
            "database": store.db.description,
        }
        out.write(json.dumps(info) + "\n")
        return EXIT_OK
    if args.command == "trust-key":
        from domestique.hub.bundle import check_public_key

        try:
            key = check_public_key(args.public_key)
        except ValueError as exc:
            _err(str(exc))
            return EXIT_ERROR
        keys = store.trust_key(key, replace=args.replace)
        out.write(json.dumps({"signing_keys": keys}) + "\n")
        return EXIT_OK
    if args.command == "require-bundle":
        store.set_setting("require_bundle", args.value)
        out.write(f"require-bundle {args.value}\n")
        return EXIT_OK
    if args.command == "publish":
        if args.dry_run:
            return _dry_run(args, store)
        return _publish(args, store)
    raise AssertionError(args.command)


def _publish(args: Any, store: Any) -> int:
    from domestique.hub.bundle import (
        BundleRejected,
        public_key_of,
        sign_bundle,
        validate_policy_text,
        verify_bundle,
    )
    from domestique.hub.server import ensure_signing_key, local_signing_key
    from domestique.policy._load import read_policy_bytes

    try:
        raw = read_policy_bytes(args.file)
    except (OSError, ValueError) as exc:
        _err(f"{args.file}: {getattr(exc, 'strerror', None) or exc}")
        return EXIT_ERROR
    if args.signed:
        try:
            bundle = verify_bundle(raw, pinned=tuple(store.signing_keys()), org=store.org_id())
        except BundleRejected as exc:
            _err(f"{args.file}: {exc.code}: {exc.message}")
            return EXIT_REFUSED
        text, revision, envelope = bundle.policy, bundle.revision, raw.decode("utf-8")
        filename = f"{args.file} (policy)"
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            _err(f"{args.file}:1:1: not UTF-8 text")
            return EXIT_REFUSED
        filename = str(args.file)
        revision = 0
        envelope = ""
    errors = validate_policy_text(text, filename=filename)
    if errors:
        for error in errors:
            sys.stderr.write(error + "\n")
        _err(f"{args.file}: invalid policy, not published")
        return EXIT_REFUSED
    if not args.signed:
        trusted = ensure_signing_key(store, _home())
        key = args.key or local_signing_key(_home())
        try:
            public = public_key_of(key)
        except (OSError, ValueError) as exc:
            _err(f"cannot read signing key {key}: {getattr(exc, 'strerror', None) or exc}")
            return EXIT_ERROR
        if public not in trusted:
            _err(f"{key} is not a trusted signing key of this hub (hub trust-key)")
            return EXIT_REFUSED
        revision = store.next_revision()
        envelope = sign_bundle(
            policy=text, org=store.org_id(), revision=revision, key_path=key, keys=tuple(trusted)
        )
    try:
        store.store_bundle(revision, envelope)
    except ValueError as exc:
        _err(f"hub.bundle.rollback: {exc}")
        return EXIT_REFUSED
    sys.stderr.write(f"published revision {revision}\n")
    sys.stdout.write(f"{revision}\n")
    return EXIT_OK


def _dry_run(args: Any, store: Any) -> int:
    """``publish FILE --dry-run``: the fleet what-if; nothing is signed or stored."""
    from domestique.hub.whatif import CandidateInvalid, fleet_whatif
    from domestique.policy._load import read_policy_bytes

    if args.signed:
        _err("--dry-run takes the policy file, not a signed bundle")
        return EXIT_ERROR
    try:
        since = None if args.since == "all" else parse_since(args.since)
    except ValueError:
        _err("--since must be like 30d, 12h, an ISO time or 'all'")
        return EXIT_ERROR
    try:
        text = read_policy_bytes(args.file).decode("utf-8")
    except UnicodeDecodeError:
        _err(f"{args.file}:1:1: not UTF-8 text")
        return EXIT_REFUSED
    except (OSError, ValueError) as exc:
        _err(f"{args.file}: {getattr(exc, 'strerror', None) or exc}")
        return EXIT_ERROR
    try:
        report = fleet_whatif(store, text, filename=str(args.file), since=since)
    except CandidateInvalid as exc:
        for error in exc.errors:
            sys.stderr.write(error + "\n")
        _err(f"{args.file}: invalid policy, nothing re-decided")
        return EXIT_REFUSED
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
    else:
        sys.stdout.write(dry_run_text(report))
    sys.stderr.write("dry run: nothing was published\n")
    return EXIT_OK


def dry_run_text(r: dict[str, Any]) -> str:
    """The dry run as text: totals, then per change, code, endpoint and developer."""
    base = r["baseline"]["bundle_revision"]
    lines = [
        f"candidate {r['candidate']['file']} as the organisation layer (now: "
        + (f"revision {base})" if base is not None else "no bundle published)"),
        f"records {'since ' + r['since'] if r['since'] else '(all)'}: {r['records']}; "
        f"re-decided {r['redecided']}: {r['changed']} change, {r['unchanged']} unchanged; "
        f"not re-decidable {r['not_redecidable']['count']}",
    ]
    if r["changes"]:
        lines.append("changes:")
        lines += [f"  {g['from']} -> {g['to']}: {g['count']}" for g in r["changes"]]
        lines.append("by reason code:")
        lines += [f"  {g['code']}: {g['from']} -> {g['to']}: {g['count']}" for g in r["by_code"]]
    for label, rows in (("endpoint", r["by_endpoint"]), ("developer", r["by_developer"])):
        changed = [row for row in rows if row["changed"]]
        if changed:
            lines.append(f"by {label}:")
            for row in changed:
                moves = ", ".join(f"{k} {n}" for k, n in row["changes"].items())
                name = row[label] + (
                    f" ({row['user']}@{row['host']})" if label == "endpoint" else ""
                )
                lines.append(f"  {name}: {row['changed']} of {row['records']} ({moves})")
    if r["not_redecidable"]["reasons"]:
        lines.append("not re-decidable (from what the records hold):")
        lines += [f"  {n['count']}: {n['reason']}" for n in r["not_redecidable"]["reasons"]]
    return "\n".join(lines) + "\n"


def _report_text(report: dict[str, Any]) -> str:
    lines = [f"records: {report['records']}"]
    lines += [f"  {k}: {v}" for k, v in report["by_action"].items()]
    lines.append(f"integrity alerts: {report['integrity_alerts']}")
    lines.append("endpoints:")
    for e in report["endpoints"]:
        flags = " revoked" if e["revoked"] else (" silent" if e["silent"] else "")
        lines.append(
            f"  {e['id']} {e['user']}@{e['host']} records={e['records']} "
            f"alerts={e['integrity_alerts']} last_sync={e['last_sync']}{flags}"
        )
    return "\n".join(lines) + "\n"
