"""The web report's routes (served by :class:`domestique.hub.app.HubApp` beside ``/v1``).

``GET /login?token=ADMIN-TOKEN`` opens a session and redirects to ``/``; every other page,
export and asset but the stylesheet and script answers 401 without a valid session. Every
answer carries the security headers (:data:`SECURITY_HEADERS`): a CSP that allows only this
origin's stylesheet and script (no inline script), no referrer, no framing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

import orjson

from domestique.hub.store import HubStore
from domestique.hub.web import _auth
from domestique.hub.web._html import (
    Table,
    asset,
    chart,
    definition,
    esc,
    filter_form,
    numbers,
    page,
    render_table,
)
from domestique.hub.web._query import ACTIONS, PAGE, WINDOWS, Filters, WebQueries

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}
STATIC = {
    "/static/style.css": ("style.css", "text/css"),
    "/static/app.js": ("app.js", "text/javascript"),
    "/static/icon.svg": ("icon.svg", "image/svg+xml"),
    "/favicon.ico": ("icon.svg", "image/svg+xml"),
}
MAX_FORM_BYTES = 1024 * 1024

Send = Callable[[dict[str, Any]], Any]


class Answer:
    def __init__(
        self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.status, self.body, self.ctype = status, body, ctype
        self.headers = headers or {}


def _html(status: int, text: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, text.encode("utf-8"), "text/html; charset=utf-8", headers)


def _cookie(headers: Mapping[str, str]) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == _auth.COOKIE:
            return value
    return None


class WebReport:
    """The pages over one store. ``handle`` is called for every non-``/v1`` request."""

    def __init__(self, store: HubStore, *, public_origin: str | None = None) -> None:
        self.store = store
        self.q = WebQueries(store)
        # ``hub serve --public-url``: the origin people open, behind a TLS reverse proxy.
        self.public_origin = public_origin

    async def handle(
        self, scope: Mapping[str, Any], headers: Mapping[str, str], body: bytes | None
    ) -> Answer:
        path, method = scope["path"], scope["method"]
        query = dict(
            parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=False)
        )
        if path in STATIC and method == "GET":
            name, ctype = STATIC[path]
            return Answer(200, asset(name), ctype)
        if path == "/login" and method == "GET":
            session = await asyncio.to_thread(
                _auth.open_session, self.store, query.get("token", "")
            )
            if session is None:
                return _html(
                    401,
                    page(
                        "Log in",
                        "<p>This login link is unknown or expired. Make a "
                        "new one with <code>domestique hub admin-token</code>.</p>",
                    ),
                )
            tls = scope.get("scheme") == "https" or (
                self.public_origin is not None and self.public_origin.startswith("https://")
            )
            secure = "; Secure" if tls else ""
            cookie = (
                f"{_auth.COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict; "
                f"Max-Age={_auth.SESSION_S}{secure}"
            )
            return Answer(303, b"", "text/plain", {"Location": "/", "Set-Cookie": cookie})
        session = _cookie(headers)
        if not await asyncio.to_thread(_auth.session_valid, self.store, session):
            return _html(
                401,
                page(
                    "Log in",
                    "<p>Open the login link from "
                    "<code>domestique hub admin-token</code> to see this page.</p>",
                ),
            )
        if path == "/logout":
            await asyncio.to_thread(_auth.close_session, self.store, session)
            return _html(
                200,
                page("Logged out", "<p>Session closed.</p>"),
                {"Set-Cookie": f"{_auth.COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"},
            )
        if method == "POST" and path == "/whatif":
            if not _same_origin(scope, headers, self.public_origin):
                return _html(403, page("Refused", "<p>A form from another site.</p>"))
            form = dict(parse_qsl((body or b"").decode("utf-8", "replace"), keep_blank_values=True))
            return await asyncio.to_thread(self._whatif, form)
        if method != "GET":
            return _html(405, page("Not allowed", "<p>Read-only pages.</p>"))
        builders: dict[str, Callable[[dict[str, str]], tuple[str, str, list[Table]]]] = {
            "/": self._overview,
            "/what-left": self._what_left,
            "/decisions": self._decisions,
            "/decisions/record": self._record,
            "/leaked": self._leaked,
            "/endpoints": self._endpoints,
            "/whatif": self._whatif_form,
        }
        build = builders.get(path)
        if build is None:
            return _html(404, page("Not found", f"<p>No page {esc(path)}.</p>", nav="y"))
        try:
            title, body_html, tables = await asyncio.to_thread(build, query)
        except ValueError as exc:
            return _html(400, page("Bad request", f"<p>{esc(exc)}</p>", nav="y"))
        return _answer(title, body_html, tables, query, path)

    # -- pages -------------------------------------------------------------------------------
    def _filters(self, query: dict[str, str], action: str) -> tuple[Filters, str]:
        f = Filters.parse(query)
        form = filter_form(action, query, self.q.options(f), list(WINDOWS))
        return f, form

    def _overview(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        f, form = self._filters(query, "/")
        o = self.q.overview(f)
        a = o["by_action"]
        figures = numbers(
            [
                ("Requests to providers", o["requests"]),
                ("Commands judged", o["commands"]),
                ("Redacted", a["redact"]),
                ("Asked", a["ask"]),
                ("Denied", a["deny"]),
                ("Blocked", a["block"]),
                ("Allowed", a["allow"]),
            ]
        )
        codes = Table("codes", "Top reason codes", ("code", "decisions"), numeric=frozenset({1}))
        codes.rows = [list(c) for c in o["codes"]]
        base = f.query()
        codes.links = [None] * len(codes.rows)
        dests = Table(
            "destinations",
            "What left, by destination",
            ("destination", "requests", "bytes sent", "values redacted"),
            numeric=frozenset({1, 2, 3}),
        )
        dests.rows = [list(d) for d in o["destinations"]]
        dests.links = [
            _link("/what-left", base, destination=d[0]) if d[0] != "(none)" else None
            for d in o["destinations"]
        ]
        actions = Table(
            "actions", "Decisions by action", ("action", "decisions"), numeric=frozenset({1})
        )
        actions.rows = [[k, a[k]] for k in ACTIONS]
        actions.links = [_link("/decisions", base, action=k) for k in ACTIONS]
        body = form + figures + chart(o["series"], hourly=o["hourly"])
        return "Overview", body, [actions, codes, dests]

    def _what_left(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        f, form = self._filters(query, "/what-left")
        w = self.q.what_left(f)
        cols = (
            "requests",
            "bytes sent",
            "secrets redacted",
            "personal data redacted",
            "customer records redacted",
        )
        tables = [
            Table(
                "destination",
                "Per destination",
                ("destination", "model", *cols),
                w["destination"],
                numeric=frozenset({2, 3, 4, 5, 6}),
            ),
            Table(
                "developer",
                "Per developer",
                ("developer", *cols),
                w["developer"],
                numeric=frozenset({1, 2, 3, 4, 5}),
            ),
            Table(
                "repository",
                "Per repository",
                ("repository", *cols),
                w["repository"],
                numeric=frozenset({1, 2, 3, 4, 5}),
            ),
            Table(
                "agent",
                "Per agent",
                ("agent", *cols),
                w["agent"],
                numeric=frozenset({1, 2, 3, 4, 5}),
            ),
        ]
        base = f.query()
        for t in tables:
            t.links = [
                _link("/decisions", base, **{t.name: str(r[0])}) if r[0] != "(none)" else None
                for r in t.rows
            ]
        note = (
            "<p class=note>Model traffic through the firewall: requests, the bytes of each "
            "request sent to the provider, and the values replaced by placeholders before "
            "it left.</p>"
        )
        return "What left", form + note, tables

    def _decisions(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        f, form = self._filters(query, "/decisions")
        before = None
        if query.get("before"):
            when, _, rid = query["before"].partition("|")
            before = (when[:40], rid[:60])
        rows = self.q.decisions(f, before=before)
        more = len(rows) > PAGE
        rows = rows[:PAGE]
        total = self.q.totals(f)
        t = Table(
            "decisions",
            "Decisions",
            (
                "time",
                "action",
                "component",
                "codes",
                "developer",
                "agent",
                "repository",
                "destination",
                "endpoint",
                "record",
            ),
        )
        t.rows = [
            [
                r["time"],
                r["action"],
                r["component"],
                r["codes"],
                r["developer"],
                r["agent"],
                r["repository"],
                r["destination"],
                r["endpoint"],
                r["id"],
            ]
            for r in rows
        ]
        t.links = [_link("/decisions/record", {}, endpoint=r["endpoint"], id=r["id"]) for r in rows]
        pager = (
            f'<p class="pager"><span data-total="{total}">{total:,} decisions in the window</span>'
        )
        base = f.query()
        if before is not None:
            pager += f' <a href="{esc(_link("/decisions", base))}">newest</a>'
        if more:
            last = rows[-1]
            older = _link("/decisions", base, before=last["time"] + "|" + last["id"])
            pager += f' <a class="next" href="{esc(older)}">older →</a>'
        pager += "</p>"
        return "Decisions", form + pager, [t]

    def _record(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        got = self.q.record(query.get("endpoint", "")[:60], query.get("id", "")[:60])
        if got is None:
            raise ValueError("no such record")
        r = got["record"]
        subject = r.get("subject") or {}
        meta = definition(
            [
                ("record id", r.get("id")),
                ("time", r.get("time")),
                ("component", r.get("component")),
                ("action", r.get("action")),
                ("would have been", r.get("would_action") or "(enforced)"),
                ("endpoint", f"{got['endpoint']} ({got['endpoint_user']}@{got['endpoint_host']})"),
                ("developer", subject.get("user")),
                ("agent", subject.get("agent") or ""),
                ("actor", subject.get("actor")),
                (
                    "policy",
                    f"{(r.get('policy') or {}).get('id', '')} "
                    f"{(r.get('policy') or {}).get('sha256', '')[:16]}",
                ),
                ("chain", f"seq {got['seq']}, hash {got['hash'][:16]}…"),
                ("received", got["received_at"]),
            ]
        )
        ev = Table(
            "evidence",
            "Reasons and evidence (masked previews and keyed fingerprints)",
            ("code", "message", "where", "preview", "fingerprint", "organisation fingerprint"),
            empty="no reasons: nothing was found in what this decision judged",
        )
        for reason in r.get("reasons") or []:
            items = reason.get("evidence") or [{}]
            for e in items:
                ev.rows.append(
                    [
                        reason.get("code", ""),
                        reason.get("message", ""),
                        e.get("where", ""),
                        e.get("preview", ""),
                        e.get("fingerprint", ""),
                        e.get("org_fingerprint", ""),
                    ]
                )
        ev.links = [None] * len(ev.rows)
        obj = Table("object", "What was judged", ("field", "value"))
        obj.rows = [
            [k, v if isinstance(v, str | int) else orjson.dumps(v).decode()]
            for k, v in sorted((r.get("object") or {}).items())
        ]
        full = orjson.dumps(r, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
        body = (
            f'<section class="card record" data-record-id="{esc(r.get("id"))}">{meta}</section>'
            f'<section class="card"><h2>Stored record</h2><pre>{esc(full)}</pre></section>'
        )
        return f"Decision {r.get('id', '')}", body, [ev, obj]

    def _leaked(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        f = Filters.parse(query)
        key = self.store.org_fingerprint_key().hex()
        fp = query.get("fp", "").strip()[:100]
        form = (
            '<form class="leaked" id="leaked" method="get" action="/leaked" '
            f'data-org-key="{esc(key)}">'
            "<label>A value (hashed here in the browser with the organisation key; only its "
            'fingerprint is sent)<input type="password" id="leaked-value" '
            'autocomplete="off"></label>'
            f'<label>or a fingerprint<input type="text" name="fp" id="leaked-fp" value="{esc(fp)}" '
            'placeholder="hmac-sha256:…"></label>'
            '<button type="submit">Find</button></form>'
        )
        tables: list[Table] = []
        body = form
        if fp:
            rows = self.q.leaked(fp, f)
            t = Table(
                "appearances",
                f"Where {fp} appeared",
                (
                    "time",
                    "action",
                    "component",
                    "code",
                    "where",
                    "developer",
                    "agent",
                    "repository",
                    "destination",
                    "endpoint",
                    "host",
                    "record",
                ),
            )
            t.rows = [
                [
                    r["time"],
                    r["action"],
                    r["component"],
                    r["code"],
                    r["where"],
                    r["developer"],
                    r["agent"],
                    r["repository"],
                    r["destination"],
                    r["endpoint"],
                    r["host"],
                    r["id"],
                ]
                for r in rows
            ]
            t.links = [
                _link("/decisions/record", {}, endpoint=r["endpoint"], id=r["id"]) for r in rows
            ]
            endpoints = len({r["endpoint"] for r in rows})
            body += numbers(
                [
                    ("Appearances", len(rows)),
                    ("Endpoints", endpoints),
                    ("Requests", sum(r["component"] == "proxy" for r in rows)),
                    ("Commands", sum(r["component"] != "proxy" for r in rows)),
                ]
            )
            tables.append(t)
        return "One leaked value", body, tables

    def _endpoints(self, query: dict[str, str]) -> tuple[str, str, list[Table]]:
        f, form = self._filters(query, "/endpoints")
        e = self.q.endpoints(f)
        eps = Table(
            "endpoints",
            "Endpoints",
            (
                "endpoint",
                "host",
                "user",
                "os",
                "version",
                "records",
                "last sync",
                "silent",
                "revoked",
                "bundle revision",
                "integrity alerts",
            ),
            numeric=frozenset({5, 10}),
        )
        eps.rows = [
            [
                x["id"],
                x["host"],
                x["user"],
                x["os"],
                x["version"],
                x["records"],
                x["last_sync"] or "never",
                x["silent"],
                x["revoked"],
                x["bundle_revision"] if x["bundle_revision"] is not None else "",
                x["integrity_alerts"],
            ]
            for x in e["endpoints"]
        ]
        eps.links = [
            _link("/decisions", {"window": "all"}, endpoint=x["id"]) for x in e["endpoints"]
        ]
        guard = Table(
            "guard",
            "Agent hosts: guard installed and fail-closed (doctor, uploaded at sync)",
            (
                "endpoint",
                "agent host",
                "found",
                "installed",
                "fail-closed",
                "answering",
                "ok",
                "problems",
                "reported",
            ),
        )
        guard.rows = [
            [
                d["endpoint"],
                d["host"],
                d["found"],
                d["installed"],
                d["fail_closed"],
                d["answering"],
                d["ok"],
                d["problems"],
                d["reported_at"],
            ]
            for d in e["doctor"]
        ]
        alerts = Table(
            "alerts", "Integrity alerts", ("time", "endpoint", "code", "seq", "record", "message")
        )
        alerts.rows = [
            [
                a["time"],
                a["endpoint"],
                a["code"],
                a["seq"] if a["seq"] is not None else "",
                a["record_id"] or "",
                a["message"],
            ]
            for a in e["alerts"]
        ]
        sinks = _sinks_table(e["sinks"])
        silent = sum(1 for x in e["endpoints"] if x["silent"] and not x["revoked"])
        figures = numbers(
            [
                ("Endpoints", len(e["endpoints"])),
                ("Silent", silent),
                ("Integrity alerts", len(e["alerts"])),
                (
                    "Hosts not fail-closed",
                    sum(1 for d in e["doctor"] if d["installed"] and not d["fail_closed"]),
                ),
                ("Sinks failing", sum(1 for s in e["sinks"] if s["error_code"])),
            ]
        )
        return "Endpoints", form + figures, [eps, guard, alerts, sinks]

    def _whatif_form(
        self, query: dict[str, str], policy: str = "", since: str = "30d"
    ) -> tuple[str, str, list[Table]]:
        return "What-if", _whatif_form_html(policy, since), []

    def _whatif(self, form: dict[str, str]) -> Answer:
        from domestique.hub.whatif import CandidateInvalid, fleet_whatif

        text = form.get("policy", "")
        since_q = form.get("since", "30d") or "30d"
        try:
            since = None if since_q == "all" else _since(since_q)
        except ValueError:
            return _html(400, page("What-if", "<p>since must be like 30d, 12h or all</p>", nav="y"))
        head = _whatif_form_html(text, since_q)
        try:
            r = fleet_whatif(self.store, text, filename="candidate.toml", since=since)
        except CandidateInvalid as exc:
            errors = "".join(f"<li>{esc(e)}</li>" for e in exc.errors)
            return _html(
                200,
                page(
                    "What-if",
                    head + f'<section class="card errors"><h2>The candidate '
                    f"is invalid; nothing was re-decided</h2><ul>{errors}</ul></section>",
                    nav="y",
                    active="What-if",
                ),
            )
        tables = _whatif_tables(r)
        fmt = form.get("format")
        if fmt in ("csv", "json"):
            return _export(tables, fmt, form.get("table"))
        figures = numbers(
            [
                ("Records", r["records"]),
                ("Re-decided", r["redecided"]),
                ("Would change", r["changed"]),
                ("Unchanged", r["unchanged"]),
                ("Not re-decidable", r["not_redecidable"]["count"]),
            ]
        )
        base = r["baseline"]["bundle_revision"]
        note = (
            f"<p class=note>The candidate as the organisation layer, against "
            f"{'revision ' + str(base) if base is not None else 'no published bundle'}. "
            "Nothing was published; records and endpoints are unchanged.</p>"
        )
        exports = "".join(_post_exports(t.name, text, since_q) for t in tables)
        body = head + note + figures + "".join(render_table(t) for t in tables) + exports
        return _html(200, page("What-if", body, nav="y", active="What-if"))


def _sinks_table(rows: list[dict[str, Any]]) -> Table:
    """The hub's SIEM sinks: delivered, last delivery, the current error (Endpoints page)."""
    sinks = Table(
        "sinks",
        "SIEM forwarding (this hub's sinks)",
        (
            "sink",
            "kind",
            "forwarded",
            "last delivery",
            "error code",
            "error",
            "error at",
            "failures",
            "lease held by",
        ),
        numeric=frozenset({2, 7}),
        empty="no sink configured (hub serve --export-otlp / --export-syslog / [[sinks]])",
    )
    sinks.rows = [
        [
            s["name"],
            s["kind"],
            s["forwarded"],
            s["last_ok"] or "never",
            s["error_code"] or "",
            s["error"] or "",
            s["error_at"] if s["error_code"] else "",
            s["failures"],
            s["owner"] or "",
        ]
        for s in rows
    ]
    return sinks


def _whatif_form_html(policy: str, since: str) -> str:
    return (
        '<form class="whatif" method="post" action="/whatif">'
        '<label>Candidate organisation policy (TOML)<textarea name="policy" rows="12" '
        f'spellcheck="false">{esc(policy)}</textarea></label>'
        f'<label>records since<input type="text" name="since" value="{esc(since)}"></label>'
        '<button type="submit">Dry run</button></form>'
    )


def _post_exports(table: str, policy: str, since: str) -> str:
    out = []
    for fmt in ("csv", "json"):
        out.append(
            f'<form class="export-form" method="post" action="/whatif">'
            f'<input type="hidden" name="policy" value="{esc(policy)}">'
            f'<input type="hidden" name="since" value="{esc(since)}">'
            f'<input type="hidden" name="format" value="{fmt}">'
            f'<input type="hidden" name="table" value="{esc(table)}">'
            f'<button type="submit">{esc(table)} {fmt.upper()}</button></form>'
        )
    return f'<div class="exports-row">{"".join(out)}</div>'


def _whatif_tables(r: dict[str, Any]) -> list[Table]:
    changes = Table("changes", "Changes", ("from", "to", "decisions"), numeric=frozenset({2}))
    changes.rows = [[g["from"], g["to"], g["count"]] for g in r["changes"]]
    codes = Table(
        "by_code", "Per reason code", ("code", "from", "to", "decisions"), numeric=frozenset({3})
    )
    codes.rows = [[g["code"], g["from"], g["to"], g["count"]] for g in r["by_code"]]
    rules = Table(
        "by_rule",
        "Per rule (the candidate rule that decides now)",
        ("rule", "source", "from", "to", "decisions"),
        numeric=frozenset({4}),
    )
    rules.rows = [[g["rule"], g["source"], g["from"], g["to"], g["count"]] for g in r["by_rule"]]
    cols = ("records", "changed", "unchanged", "not re-decidable", "changes")
    eps = Table(
        "by_endpoint",
        "Per endpoint",
        ("endpoint", "user", "host", *cols),
        numeric=frozenset({3, 4, 5, 6}),
    )
    eps.rows = [[e["endpoint"], e["user"], e["host"], *_outcome(e)] for e in r["by_endpoint"]]
    devs = Table(
        "by_developer", "Per developer", ("developer", *cols), numeric=frozenset({1, 2, 3, 4})
    )
    devs.rows = [[d["developer"], *_outcome(d)] for d in r["by_developer"]]
    examples = Table(
        "examples",
        "Example changed records",
        ("record", "time", "component", "from", "to", "codes"),
    )
    seen: set[str] = set()
    for g in r["changes"]:
        for e in g["examples"]:
            if e["id"] not in seen:
                seen.add(e["id"])
                examples.rows.append(
                    [e["id"], e["time"], e["component"], e["from"], e["to"], " ".join(e["codes"])]
                )
    skipped = Table(
        "not_redecidable", "Not re-decidable", ("reason", "records"), numeric=frozenset({1})
    )
    skipped.rows = [[n["reason"], n["count"]] for n in r["not_redecidable"]["reasons"]]
    return [changes, codes, rules, eps, devs, examples, skipped]


def _outcome(row: Mapping[str, Any]) -> list[Any]:
    """A per-endpoint or per-developer row's counts, as the what-if tables show them."""
    changes = ", ".join(f"{k} {n}" for k, n in row["changes"].items())
    return [row["records"], row["changed"], row["unchanged"], row["not_redecidable"], changes]


def _since(text: str) -> str:
    from domestique.cli.hub import parse_since

    return parse_since(text)


def _same_origin(
    scope: Mapping[str, Any], headers: Mapping[str, str], public_origin: str | None = None
) -> bool:
    """A form posted from this hub's own page (defence in depth over SameSite=Strict).

    Browsers say where a request comes from in ``Sec-Fetch-Site``; under ``no-referrer``
    their ``Origin`` is ``null``, so it is read only when it names a real origin."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None or origin == "null":
        return True
    host = headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}") or origin == public_origin


def _link(path: str, base: Mapping[str, str], **extra: str) -> str:
    q = {**base, **extra}
    return f"{path}?{urlencode(q)}" if q else path


def _export(tables: list[Table], fmt: str, name: str | None) -> Answer:
    chosen = [t for t in tables if name in (None, t.name)]
    if not chosen:
        return Answer(404, b"no such table", "text/plain; charset=utf-8")
    if fmt == "csv":
        t = chosen[0]
        return Answer(
            200,
            t.csv().encode("utf-8"),
            "text/csv; charset=utf-8",
            {"Content-Disposition": f'attachment; filename="{t.name}.csv"'},
        )
    body = orjson.dumps({t.name: t.to_json() for t in chosen})
    return Answer(200, body, "application/json")


def _answer(title: str, body: str, tables: list[Table], query: dict[str, str], path: str) -> Answer:
    fmt = query.get("format")
    if fmt in ("csv", "json"):
        return _export(tables, fmt, query.get("table"))
    export_q = {k: v for k, v in query.items() if k not in ("format", "table")}
    html_tables = "".join(render_table(t, export_q) for t in tables)
    active = {
        "/": "Overview",
        "/what-left": "What left",
        "/decisions": "Decisions",
        "/decisions/record": "Decisions",
        "/leaked": "One leaked value",
        "/endpoints": "Endpoints",
        "/whatif": "What-if",
    }.get(path, "")
    return _html(200, page(title, body + html_tables, nav="y", active=active))


def security_headers() -> dict[str, str]:
    return dict(SECURITY_HEADERS)
