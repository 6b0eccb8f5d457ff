"""``hub publish FILE --dry-run`` and the What-if page: the fleet-wide impact of a candidate
organisation policy, exact, per endpoint, developer and code; nothing changes on the hub."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from domestique.hub.store import EndpointInfo, HubStore
from domestique.records import Action, Reason

from .browser import Browser, no_browser
from .support import HubProcess, cli
from .web_seed import _guard, _upload, seed

LOOSEN = (
    'version = 1\n[[rules]]\nid = "co-allow-installers"\ncodes = ["cmd.pipe_to_shell"]\n'
    'action = "allow"\n'
)
TIGHTEN = (
    'version = 1\n[[rules]]\nid = "co-stop-email"\ncodes = ["pii.email"]\naction = "deny"\n'
    'components = ["proxy"]\n'
)
NEUTRAL = "version = 1\n"


def _seed(database: str | None, home: Path) -> None:
    seed(database, home)
    store = HubStore.open(database, home)
    try:
        token = store.create_enroll_token(expires_s=600, uses=1)
        carol = store.enroll(token, EndpointInfo("laptop-c", "carol", "Linux", "0.1.0", "fc"))[0]
        # An error code: what was judged could not be judged, so it cannot be re-decided.
        when = time.time_ns() - 3600 * 10**9
        reason = Reason("audit.write_failed", "disk full")
        broken = _guard("carol", "codex", "/src/x", "make", when, Action.DENY, (reason,))
        _upload(store, carol, [broken])
    finally:
        store.close()


def _dump(database: str | None, home: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every hub table (the store as a whole)."""
    store = HubStore.open(database, home, migrate_now=False)
    try:
        with store.db.tx() as tx:
            if tx.postgres:
                names = [
                    r[0]
                    for r in tx.q(
                        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                    )
                ]
                names = [n for n in names if not n.startswith("records_y")]
            else:
                names = [r[0] for r in tx.q("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {n: sorted(map(repr, tx.q(f"SELECT * FROM {n}"))) for n in sorted(names)}  # noqa: S608
    finally:
        store.close()


def _dry_run(
    home: Path, database: str | None, text: str, tmp: Path, *extra: str
) -> tuple[int, dict]:
    path = tmp / "candidate.toml"
    path.write_text(text)
    args = ("--database", database) if database else ()
    done = cli(home, "hub", "publish", str(path), "--dry-run", "--json", *extra, *args)
    assert "nothing was published" in done.stderr or done.returncode != 0
    return done.returncode, json.loads(done.stdout) if done.returncode == 0 else {}


def test_dry_run_counts_are_exact_and_change_nothing(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "hub-home"
    _seed(database_url, home)
    before = _dump(database_url, home)

    rc, r = _dry_run(home, database_url, LOOSEN, tmp_path)
    assert rc == 0
    assert (r["records"], r["redecided"], r["changed"]) == (16, 15, 1)
    assert r["not_redecidable"]["count"] == 1
    assert r["not_redecidable"]["reasons"][0]["reason"].startswith("error code audit.write_failed")
    assert [(g["from"], g["to"], g["count"]) for g in r["changes"]] == [("deny", "allow", 1)]
    assert [(g["code"], g["count"]) for g in r["by_code"]] == [("cmd.pipe_to_shell", 1)]
    by_user = {e["user"]: (e["records"], e["changed"], e["changes"]) for e in r["by_endpoint"]}
    assert by_user == {
        "alice": (9, 1, {"deny->allow": 1}),
        "bob": (6, 0, {}),
        "carol": (1, 0, {}),
    }
    assert {d["developer"]: d["not_redecidable"] for d in r["by_developer"]} == {
        "alice": 0,
        "bob": 0,
        "carol": 1,
    }

    rc, r = _dry_run(home, database_url, TIGHTEN, tmp_path)
    assert rc == 0
    assert [(g["from"], g["to"], g["count"]) for g in r["changes"]] == [("redact", "block", 1)]
    assert r["by_code"][0]["code"] == "pii.email"
    assert [e["user"] for e in r["by_endpoint"] if e["changed"]] == ["bob"]

    rc, r = _dry_run(home, database_url, NEUTRAL, tmp_path)
    assert (rc, r["changed"], r["unchanged"]) == (0, 0, 15)

    rc, r = _dry_run(home, database_url, LOOSEN, tmp_path, "--since", "all")
    assert r["records"] == 16

    path = tmp_path / "bad.toml"
    path.write_text(
        'version = 1\n[[rules]]\nid = "x"\ncodes = ["cmd.no_such_code"]\naction = "allow"\n'
    )
    args = ("--database", database_url) if database_url else ()
    bad = cli(home, "hub", "publish", str(path), "--dry-run", *args)
    assert bad.returncode == 1
    assert f"{path}:4:" in bad.stderr
    assert _dump(database_url, home) == before, "a dry run writes nothing to the hub"


@pytest.mark.skipif(no_browser(), reason="needs chromium")
def test_whatif_page_shows_the_fleet_impact(tmp_path: Path, database_url: str | None) -> None:
    home = tmp_path / "hub-home"
    _seed(database_url, home)
    hub = HubProcess(home, database_url).start()
    try:
        token = hub.admin("admin-token").stdout.strip().splitlines()[-1]
        before = _dump(database_url, home)
        with Browser() as b:
            b.goto(f"{hub.url}/login?token={token}")
            b.goto(f"{hub.url}/whatif")
            b.act_and_wait(
                f"document.querySelector('textarea[name=policy]').value = {json.dumps(LOOSEN)};"
                "document.querySelector('form.whatif').requestSubmit()"
            )
            value = lambda label: int(b.text(f'[data-figure="{label}"] .value').replace(",", ""))  # noqa: E731
            assert (value("Records"), value("Would change"), value("Not re-decidable")) == (
                16,
                1,
                1,
            )
            rows = b.eval(
                "Array.from(document.querySelectorAll('table[data-table=by_endpoint] tbody tr'),"
                " tr => [tr.cells[1].innerText, tr.cells[4].innerText])"
            )
            assert rows[0] == ["alice", "1"]
            assert b.texts('table[data-table="by_code"] tbody td:first-child') == [
                "cmd.pipe_to_shell"
            ]
            b.act_and_wait(
                "document.querySelector('textarea[name=policy]').value = 'version = [';"
                "document.querySelector('form.whatif').requestSubmit()"
            )
            assert "candidate.toml:1:" in b.text(".errors")
            assert b.errors == []
        with httpx.Client(base_url=hub.url) as c:
            c.get(f"/login?token={token}", follow_redirects=False)
            got = c.post(
                "/whatif",
                data={"policy": LOOSEN, "since": "all", "format": "json", "table": "by_developer"},
            )
            rows = {r["developer"]: r["changed"] for r in got.json()["by_developer"]["rows"]}
            assert rows == {"alice": 1, "bob": 0, "carol": 0}
            foreign = c.post(
                "/whatif", data={"policy": LOOSEN}, headers={"Origin": "https://evil.example"}
            )
            assert foreign.status_code == 403
        after = _dump(database_url, home)
        # Logging in opened sessions; nothing else changed.
        assert {k: v for k, v in after.items() if k != "web_sessions"} == {
            k: v for k, v in before.items() if k != "web_sessions"
        }
    finally:
        hub.stop()
