"""The web report's store side: the migration's backfill gives what ingest keeps, the rollups
agree with the records, and the session cookie is Secure under TLS."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx

from domestique.hub.store import HubStore
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
            for table in ("facts", "fact_codes", "findings"):
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
