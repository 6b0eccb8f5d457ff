"""The web report's store side: the migration's backfill gives what ingest keeps, the rollups
agree with the records, and the session cookie is Secure under TLS."""

from __future__ import annotations

import os
import ssl
import time
from pathlib import Path

import httpx

from domestique.hub.store import EndpointInfo, HubStore
from domestique.hub.web import _facts
from domestique.hub.web._query import Filters, WebQueries

from .support import HubProcess
from .test_tls import tls_hub  # noqa: F401 - the fixture
from .web_seed import seed


def _snapshot(store: HubStore) -> dict[str, list[str]]:
    with store.db.tx() as tx:
        return {
            "facts": sorted(map(repr, tx.q("SELECT * FROM facts"))),
            "fact_codes": sorted(map(repr, tx.q("SELECT * FROM fact_codes"))),
            "facts_day": sorted(map(repr, tx.q("SELECT * FROM facts_day"))),
            "fact_codes_day": sorted(map(repr, tx.q("SELECT * FROM fact_codes_day"))),
            "dim_values": sorted(map(repr, tx.q("SELECT * FROM dim_values"))),
            "findings": sorted(
                map(
                    repr,
                    tx.q("SELECT fingerprint, endpoint_id, record_id, code, place FROM findings"),
                )
            ),
            "records": sorted(
                map(repr, tx.q("SELECT id, developer, repository, agent, destination FROM records"))
            ),
        }


def test_the_migration_backfill_gives_what_ingest_keeps(
    tmp_path: Path, database_url: str | None
) -> None:
    """Records held before the web report's migration get the same rollups as new ones."""
    seed(database_url, tmp_path)
    store = HubStore.open(database_url, tmp_path)
    try:
        kept = _snapshot(store)
        assert len(kept["findings"]) == 2 * 3 + 1  # install + organisation fingerprints
        with store.db.tx() as tx:
            for table in (
                "facts",
                "fact_codes",
                "facts_day",
                "fact_codes_day",
                "dim_values",
                "findings",
            ):
                tx.run(f"DELETE FROM {table}")  # noqa: S608
            tx.run(
                "UPDATE records SET developer = '', repository = '', agent = '', destination = ''"
            )
        with store.db.tx() as tx:
            _facts._backfill(tx)
        assert _snapshot(store) == kept
    finally:
        store.close()


def test_rollups_agree_with_the_fleet_report(tmp_path: Path, database_url: str | None) -> None:
    seed(database_url, tmp_path)
    store = HubStore.open(database_url, tmp_path)
    try:
        report = store.report()
        q = WebQueries(store)
        everything = Filters.parse({"window": "all"})
        o = q.overview(everything)
        assert sum(o["by_action"].values()) == report["records"] == 15
        assert {k: v for k, v in o["by_action"].items() if v} == report["by_action"]
        assert q.totals(everything) == 15
        assert len(q.decisions(everything, limit=100)) == 15
        alice = Filters.parse({"window": "all", "developer": "alice", "action": "redact"})
        assert q.totals(alice) == 2
        assert {r["developer"] for r in q.decisions(alice)} == {"alice"}
    finally:
        store.close()


def test_the_session_cookie_is_secure_under_tls(tls_hub: tuple[HubProcess, Path]) -> None:  # noqa: F811
    hub, cert = tls_hub
    token = hub.admin("admin-token").stdout.strip().splitlines()[-1]
    with httpx.Client(base_url=hub.url, verify=ssl.create_default_context(cafile=str(cert))) as c:
        login = c.get(f"/login?token={token}", follow_redirects=False)
        assert login.status_code == 303
        assert "; Secure" in login.headers["set-cookie"]
        assert c.get("/endpoints").status_code == 200


def test_windows_are_exact_across_days(tmp_path: Path, database_url: str | None) -> None:
    """A record every 5 hours for 12 days: each window's totals (per-day rollup for whole days,
    per-hour at the ends) equal a count of the records themselves in that window."""
    import datetime as dt

    from .web_seed import _guard, _upload

    store = HubStore.open(database_url, tmp_path)
    try:
        token = store.create_enroll_token(expires_s=60, uses=1)
        ep = store.enroll(token, EndpointInfo("h", "u", "Linux", "0", "f"))[0]
        now = time.time_ns()
        records = [
            _guard("u", "codex", f"/r{i % 2}", "ls", now - i * 5 * 3600 * 10**9 - 10**9)
            for i in range(58)
        ]
        _upload(store, ep, records)
        q = WebQueries(store)
        today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
        for query in (
            {"window": "24h"},
            {"window": "7d"},
            {"window": "30d"},
            {"window": "all"},
            {"from": "2000-01-01", "to": today},
            {"window": "7d", "repository": "/r1"},
        ):
            f = Filters.parse(query)
            expected = sum(
                1
                for r in records
                if f.start_iso() <= r.time < f.end_iso()
                and ("repository" not in query or r.object["cwd"] == query["repository"])
            )
            assert q.totals(f) == expected, query
            assert sum(q.overview(f)["by_action"].values()) == expected, query
            assert len(q.decisions(f, limit=100)) == expected, query
            # Paging by 7 (keyset: the last row's time and id) walks every one, newest first.
            seen: list[str] = []
            before = None
            while True:
                page = q.decisions(f, before=before, limit=7)
                seen += [r["time"] for r in page[:7]]
                if len(page) <= 7:
                    break
                before = (page[6]["time"], page[6]["id"])
            assert len(seen) == expected, query
            assert seen == sorted(seen, reverse=True)
    finally:
        store.close()


def test_report_html_shares_the_hub_look(tmp_path: Path) -> None:
    """``domestique report --html``: the hub's stylesheet inlined, its chart, no script."""
    from domestique.audit.report import build_report, render_html
    from domestique.hub.web._html import stylesheet

    from .web_seed import _guard

    now = time.time_ns()
    records = [_guard("u", "codex", "/r", "ls", now - i * 3600 * 10**9).to_json() for i in range(5)]
    page = render_html(build_report(records, since=None))
    assert stylesheet() in page
    import re

    assert (
        sum(int(n) for n in re.findall(r'<rect class="bar allow"[^>]* data-n="(\d+)"', page)) == 5
    )
    assert "<script" not in page
    assert 'data-figure="Decisions"><span class="value">5</span>' in page


def test_streamed_records_are_the_stored_text(tmp_path: Path, database_url: str | None) -> None:
    """The dry run's stream (COPY on PostgreSQL) gives back each record's exact JSON, also
    with quotes, backslashes and escaped control characters in it."""
    from .web_seed import _guard, _upload

    store = HubStore.open(database_url, tmp_path)
    try:
        token = store.create_enroll_token(expires_s=60, uses=1)
        ep = store.enroll(token, EndpointInfo("h", "u", "Linux", "0", "f"))[0]
        now = time.time_ns()
        commands = ['echo "a\tb"', "printf '\\\\n' \\\\ x", "ls\n\r\x0b\x0c\x08 é …"]
        _upload(store, ep, [_guard("u", "codex", "/r", c, now - i) for i, c in enumerate(commands)])
        with store.db.tx() as tx:
            stored = sorted(str(r[0]) for r in tx.q("SELECT record FROM records"))
        streamed = sorted(bytes(r[2]).decode() for r in store.stream_records())
        assert streamed == stored
        assert {str(ep)} == {bytes(r[0]).decode() for r in store.stream_records()}
    finally:
        store.close()


def test_behind_a_tls_proxy_the_public_url_makes_the_cookie_secure(
    tmp_path: Path, database_url: str | None
) -> None:
    """`hub serve --public-url https://…` (a TLS reverse proxy in front, the hub on loopback
    http): the session cookie is Secure and a form posted from the public origin is taken,
    one from another origin refused; without the flag the cookie over plain http is not."""
    seed(database_url, tmp_path / "a")
    public = "https://Hub.Example.test"
    hub = HubProcess(tmp_path / "a", database_url, extra=("--public-url", public)).start()
    try:
        token = hub.admin("admin-token").stdout.strip().splitlines()[-1]
        with httpx.Client(base_url=hub.url) as c:
            login = c.get(f"/login?token={token}", follow_redirects=False)
            assert "; Secure" in login.headers["set-cookie"]
            session = login.headers["set-cookie"].split(";", 1)[0]
            form = {"policy": "", "since": "all"}
            own = c.post(
                "/whatif",
                data=form,
                headers={"Origin": "https://hub.example.test", "Cookie": session},
            )
            assert own.status_code != 403
            foreign = c.post(
                "/whatif", data=form, headers={"Origin": "https://evil.test", "Cookie": session}
            )
            assert foreign.status_code == 403
    finally:
        hub.stop()
    plain = HubProcess(tmp_path / "a", database_url).start()
    try:
        token = plain.admin("admin-token").stdout.strip().splitlines()[-1]
        with httpx.Client(base_url=plain.url) as c:
            login = c.get(f"/login?token={token}", follow_redirects=False)
            assert login.status_code == 303
            assert "Secure" not in login.headers["set-cookie"]
    finally:
        plain.stop()


def test_a_public_url_that_is_not_an_origin_is_refused(tmp_path: Path) -> None:
    import subprocess

    from _helpers.hooks import DOMESTIQUE

    for bad in ("hub.example.test", "ftp://hub.example.test", "https://hub.example.test/app"):
        done = subprocess.run(
            [DOMESTIQUE, "hub", "serve", "--port", "1", "--public-url", bad],
            capture_output=True,
            text=True,
            env={**os.environ, "DOMESTIQUE_HOME": str(tmp_path)},
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "--public-url" in done.stderr
        assert "Traceback" not in done.stderr
