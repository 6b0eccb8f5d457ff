"""The hub's web report and fleet what-if over a big store: page answer times, screenshots,
and ``hub publish --dry-run``'s time and memory.

    .venv/bin/python bench/bench_hub_web.py [--database URL] [--endpoints 100]
        [--records 10000] [--runs 7] [--screens DIR] [--keep] [--schema NAME] [--json]

In a fresh schema (dropped at the end unless ``--keep``; ``--schema`` reuses a kept one):

- **seed**: ``--endpoints`` laptops × ``--records`` decisions over 30 days through
  ``HubStore.ingest`` (chain verification and the web rollups included): firewall requests to
  two providers and two models each, with redactions of secrets, personal data and customer
  records (each with both fingerprints), guard commands in three repositories per laptop, a
  few asks, denies and blocks;
- **pages**: ``domestique hub serve`` on that schema; each page (last 30 days: every record)
  fetched ``--runs`` times over HTTP with a session; the figure is the median answer time
  (request sent to last byte);
- **screenshots**: each page in headless chromium (``--screens``, PNG);
- **dry run**: ``domestique hub publish FILE --dry-run --since all`` as a whole process over
  every record (time, peak RSS), and over the last 3 days only (about a tenth) for the memory
  comparison.

Figures go to docs/benchmarks.md ("Web report and fleet what-if").
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "hub"))

from browser import Browser  # noqa: E402 - tests/hub/browser.py, the suite's CDP driver

from domestique.audit import GENESIS_HASH, chain_hash  # noqa: E402
from domestique.hub.batch import encode_batch, parse_batch  # noqa: E402
from domestique.hub.store import EndpointInfo, HubStore  # noqa: E402
from domestique.records import (  # noqa: E402
    Action,
    Component,
    DecisionRecord,
    Evidence,
    PolicyRef,
    Reason,
    Subject,
    to_canonical_json,
    utc_now_iso,
)

SPAN_NS = 30 * 86400 * 10**9
LEAKED = "AKIAZ7QW3ERT5YUI9OPL"
CANDIDATE = (
    'version = 1\n[[rules]]\nid = "co-allow-installers"\ncodes = ["cmd.pipe_to_shell"]\n'
    'action = "allow"\n'
)


def _fp(key: bytes, value: str) -> str:
    return "hmac-sha256:" + hmac.digest(key, value.encode(), "sha256").hex()[:32]


def _record(n: int, i: int, count: int, when_ns: int, org_key: bytes) -> DecisionRecord:
    """Decision ``i`` of laptop ``n``: each developer works with one agent and its provider
    (two models, nine requests in ten to the main one) and in one of three repositories a day."""
    user, agent = f"dev{n:03d}", ("claude-code", "codex")[n % 2]
    policy = PolicyRef("builtin+organisation", "ab" * 32, bundle=3)
    engine = {"domestique": "0.1.0"}
    when = utc_now_iso(when_ns)
    k = i % 100
    if k < 60:  # the firewall
        host = ("api.anthropic.com", "api.openai.com")[n % 2]
        model = (("claude-a", "claude-b"), ("gpt-a", "gpt-b"))[n % 2][int(i % 10 == 0)]
        action, reasons = Action.ALLOW, ()
        if k < 8:
            code = ("secret.aws_access_key_id", "pii.email", "records.customer")[k % 3]
            value = LEAKED if k == 0 and i % 1000 == 0 else f"value-{n}-{i}"
            ev = Evidence(
                "messages[1].content", "va…ue", _fp(bytes([n]) * 32, value), _fp(org_key, value)
            )
            action, reasons = Action.REDACT, (Reason(code, "found", (ev,)),)
        elif k == 8:
            action, reasons = Action.BLOCK, (Reason("proxy.binary_unscanned", "binary part"),)
        obj = {
            "model": model,
            "upstream_host": host,
            "stream": True,
            "bytes_in": 2000 + i % 5000,
            "bytes_out": 800,
            "fields_scanned": 12,
            "findings": [],
            "redacted": len(reasons),
        }
        return DecisionRecord(
            Component.PROXY,
            action,
            reasons,
            Subject(user=user, host=f"laptop-{n}", agent=agent),
            obj,
            policy,
            engine,
            900,
            time=when,
        )
    repo = f"/home/{user}/src/repo{(i * 30 // count) % 3}"
    action, reasons, command = Action.ALLOW, (), f"git status --short {i % 50}"
    if k >= 96:
        action, command = Action.DENY, "curl https://get.example/install.sh | sh"
        reasons = (Reason("cmd.pipe_to_shell", "downloaded content run by a shell"),)
    elif k >= 94:
        action, command = Action.ASK, "git push --force origin main"
        reasons = (Reason("cmd.git_force_push", "force push"),)
    return DecisionRecord(
        Component.GUARD,
        action,
        reasons,
        Subject(user=user, host=f"laptop-{n}", agent=agent),
        {"command": command, "cwd": repo},
        policy,
        engine,
        60,
        time=when,
    )


def seed(store: HubStore, endpoints: int, records: int) -> int:
    """The fleet's 30 days as they arrive: every laptop syncs its next 1,000 records in turn,
    so the store fills in time order as a live hub's does."""
    key = store.org_fingerprint_key()
    token = store.create_enroll_token(expires_s=3600, uses=endpoints)
    start_ns = time.time_ns() - SPAN_NS
    ids = [
        store.enroll(token, EndpointInfo(f"laptop-{n}", f"dev{n:03d}", "Linux", "0.1.0", "fp"))[0]
        for n in range(endpoints)
    ]
    heads = [(GENESIS_HASH, 0)] * endpoints
    total = 0
    t0 = time.perf_counter()
    for first in range(0, records, 1000):
        for n, endpoint_id in enumerate(ids):
            prev, seq = heads[n]
            rows = []
            for i in range(first, min(records, first + 1000)):
                seq += 1
                record = _record(n, i, records, start_ns + i * (SPAN_NS // records), key)
                canonical = to_canonical_json(record)
                link = chain_hash(seq, prev, canonical)
                rows.append(
                    {"seq": seq, "prev_hash": prev, "hash": link, "record": canonical.decode()}
                )
                prev = link
            heads[n] = (prev, seq)
            body = encode_batch(endpoint_id, (seq, prev), rows)
            result = store.ingest(endpoint_id, parse_batch(body, "gzip"))
            assert result.stored == len(rows), result
            total += len(rows)
        sys.stderr.write(f"\rseeded {total:,} records ({time.perf_counter() - t0:.0f} s)")
    sys.stderr.write("\n")
    return total


def _serve(url: str, home: Path, port: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, DOMESTIQUE_HOME=str(home))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "domestique",
            "hub",
            "serve",
            "--port",
            str(port),
            "--database",
            url,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("hub did not start")


def _dry_run(
    url: str, home: Path, candidate: Path, since: str
) -> tuple[float, int, dict[str, object]]:
    """The whole ``hub publish --dry-run`` process: wall time, peak RSS (KiB), its report."""
    env = dict(os.environ, DOMESTIQUE_HOME=str(home))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "domestique",
            "hub",
            "publish",
            str(candidate),
            "--dry-run",
            "--json",
            "--since",
            since,
            "--database",
            url,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    return took, int(usage.ru_maxrss), json.loads(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database",
        default=os.environ.get("DOMESTIQUE_TEST_DATABASE_URL")
        or "postgresql://postgres@127.0.0.1:5432/test",
    )
    parser.add_argument("--endpoints", type=int, default=100)
    parser.add_argument("--records", type=int, default=10_000, help="per endpoint")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--screens", type=Path, default=Path("/tmp/domestique-hub-screens"))
    parser.add_argument("--keep", action="store_true", help="keep the schema (reuse: --schema)")
    parser.add_argument("--schema", help="a schema kept by an earlier --keep run")
    parser.add_argument("--port", type=int, default=18791)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import psycopg

    schema = args.schema or "bench_web_" + secrets.token_hex(4)
    if not args.schema:
        with psycopg.connect(args.database, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.database else "?"
    url = f"{args.database}{sep}options=-csearch_path%3D{schema}"
    home = Path(os.environ.get("TMPDIR", "/tmp")) / schema
    figures: dict[str, object] = {"schema": schema}
    store = HubStore.open(url, home)
    proc = None
    try:
        if not args.schema:
            t0 = time.perf_counter()
            figures["records"] = seed(store, args.endpoints, args.records)
            figures["seed_s"] = round(time.perf_counter() - t0, 1)
        else:
            figures["records"] = store.report()["records"]
        key = store.org_fingerprint_key()
        from domestique.hub.web._auth import create_admin_token

        token = create_admin_token(store, expires_s=3600)
        some = store.endpoint_rows()[7]["id"]
        with store.db.tx() as tx:
            rid = tx.one("SELECT id FROM records WHERE endpoint_id = %s LIMIT 1", (some,))[0]
        proc = _serve(url, home, args.port)
        base = f"http://127.0.0.1:{args.port}"
        pages = {
            "overview": "/?window=30d",
            "overview, one developer": "/?window=30d&developer=dev007",
            "overview, last 24 h": "/?window=24h",
            "what left": "/what-left?window=30d",
            "what left, one destination": "/what-left?window=30d&destination=api.openai.com",
            "decisions (first page)": "/decisions?window=30d",
            "decisions, denied, one repository": (
                "/decisions?window=30d&action=deny&repository=/home/dev042/src/repo1"
            ),
            "decision record": f"/decisions/record?endpoint={some}&id={rid}",
            "one leaked value": f"/leaked?fp={quote(_fp(key, LEAKED))}",
            "endpoints": "/endpoints?window=30d",
            "overview CSV export": "/?window=30d&format=csv&table=codes",
            "decisions JSON export": "/decisions?window=30d&format=json",
        }
        timings: dict[str, float] = {}
        with httpx.Client(base_url=base, timeout=120) as c:
            c.get(f"/login?token={token}")
            for name, path in pages.items():
                got = c.get(path)  # warm (the database's cache, the hub's imports)
                assert got.status_code == 200, (name, got.status_code)
                times = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    got = c.get(path)
                    times.append(time.perf_counter() - t0)
                    assert got.status_code == 200
                timings[name] = round(statistics.median(times) * 1000, 1)
            leaked = c.get(pages["one leaked value"] + "&format=json").json()
            figures["leaked_appearances"] = len(leaked["appearances"]["rows"])
        figures["pages_median_ms"] = timings
        args.screens.mkdir(parents=True, exist_ok=True)
        with Browser(width=1440, height=1000) as b:
            b.goto(f"{base}/login?token={token}")
            for name, path in pages.items():
                if "export" in name:
                    continue
                b.goto(base + path)
                b.screenshot(args.screens / (name.replace(" ", "-").replace(",", "") + ".png"))
            b.goto(f"{base}/whatif")
            b.act_and_wait(
                f"document.querySelector('textarea[name=policy]').value = {json.dumps(CANDIDATE)};"
                "document.querySelector('[name=since]').value = '3d';"
                "document.querySelector('form.whatif').requestSubmit()"
            )
            b.screenshot(args.screens / "what-if.png")
            figures["browser_errors"] = b.errors
        figures["screens"] = str(args.screens)
        proc.terminate()
        proc.wait(10)
        proc = None
        candidate = home / "candidate.toml"
        candidate.write_text(CANDIDATE)
        small_s, small_rss, small = _dry_run(url, home, candidate, "3d")
        all_s, all_rss, report = _dry_run(url, home, candidate, "all")
        figures["dry_run"] = {
            "records": report["records"],
            "changed": report["changed"],
            "seconds": round(all_s, 2),
            "max_rss_mb": round(all_rss / 1024, 1),
            "records_3d": small["records"],
            "seconds_3d": round(small_s, 2),
            "max_rss_mb_3d": round(small_rss / 1024, 1),
        }
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
        store.close()
        if not args.keep:
            with psycopg.connect(args.database, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
    print(json.dumps(figures, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
