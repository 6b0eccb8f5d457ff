"""The fleet what-if: what a candidate organisation policy would have decided, fleet-wide.

``domestique hub publish FILE --dry-run`` and the hub's What-if page ask this before anything
is signed. The candidate is put where a published bundle would go (the organisation layer over
the builtin policy, as :func:`domestique.hub.bundle.validate_policy_text` validates it); the
baseline is the same with the newest published bundle's policy (or none). Every stored record
in the window is streamed from the central store (a server-side cursor on PostgreSQL, bounded
memory) through :class:`domestique.policy._whatif.WhatIf`, the re-decision code of
``policy whatif`` on an endpoint, and the outcome is also counted per endpoint and per
developer. What cannot be re-decided from a record (its endpoint's own user or system layer
decided it, an error code, a detector change) is counted as such, with its reason.

Nothing is written: no bundle, no revision, no record. The report is exact.
"""

from __future__ import annotations

import gc
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from domestique.hub.store import HubStore
from domestique.hub.web._facts import load_record


class CandidateInvalid(ValueError):
    """The candidate policy does not validate; ``errors`` are ``file:line:col: …`` lines."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(errors[0] if errors else "invalid policy")
        self.errors = errors


def _policies(baseline_text: str | None, candidate_text: str, filename: str) -> tuple[Any, Any]:
    from domestique.policy import LayerFile, build_policy, discover_layers

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        base = discover_layers(home=home, project_dir=None, policy_file=None, system_file=None)
        path = home / (Path(filename).name or "candidate.toml")
        path.write_text(candidate_text, encoding="utf-8")
        candidate = build_policy([*base, LayerFile("organisation", path, required=True)])
        if baseline_text is None:
            baseline = build_policy(base)
        else:
            current = home / "published-bundle.toml"
            current.write_text(baseline_text, encoding="utf-8")
            baseline = build_policy([*base, LayerFile("organisation", current, required=True)])
    if not candidate.valid:
        raise CandidateInvalid([e.replace(str(path), filename) for e in candidate.errors])
    return baseline, candidate


def published_policy(store: HubStore) -> tuple[int | None, str | None]:
    """(revision, policy text) of the newest published bundle, or (None, None). The hub
    verified it when it was published; its payload is read as it was signed."""
    import base64

    latest = store.latest_bundle()
    if latest is None:
        return None, None
    revision, _, envelope = latest
    payload = orjson.loads(base64.b64decode(orjson.loads(envelope)["payload"]))
    return revision, str(payload["policy"])


def fleet_whatif(
    store: HubStore, candidate_text: str, *, filename: str, since: str | None = None
) -> dict[str, Any]:
    """The fleet-wide report (``policy whatif``'s JSON plus ``by_endpoint``, ``by_developer``,
    ``baseline``); raises :class:`CandidateInvalid` for a candidate with an error."""
    from domestique.policy._whatif import WhatIf
    from domestique.reason_codes import registry

    revision, published = published_policy(store)
    baseline, candidate = _policies(published, candidate_text, filename)
    if not baseline.valid:
        raise CandidateInvalid([f"published bundle: {e}" for e in baseline.errors])
    whatif = WhatIf(baseline, candidate, frozenset(registry()))
    hosts = {e["id"]: e for e in store.endpoint_rows()}
    # One counter for (endpoint, developer, outcome): one increment a record.
    outcomes: Counter[tuple[Any, Any, Any]] = Counter()
    add = whatif.add
    # The parsed records hold no cycles and go at once: the cycle collector would only walk
    # the what-if's memo again and again (a third of the time over a million records).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for endpoint_id, developer, record in store.stream_records(since=since):
            outcomes[(endpoint_id, developer, add(load_record(record)))] += 1
    finally:
        if collecting:
            gc.enable()
    per_endpoint: dict[str, Counter[str]] = {}
    per_developer: dict[str, Counter[str]] = {}
    for (raw_endpoint, raw_developer, outcome), n in outcomes.items():
        endpoint_id, developer = raw_endpoint.decode(), raw_developer.decode("utf-8", "replace")
        if outcome is None:
            key = "not_redecidable"
        elif outcome[0] is outcome[1]:
            key = "unchanged"
        else:
            key = f"{outcome[0].value}->{outcome[1].value}"
        for table, name in ((per_endpoint, endpoint_id), (per_developer, developer)):
            counter = table.setdefault(name, Counter())
            counter["records"] += n
            counter[key] += n
            if key not in ("unchanged", "not_redecidable"):
                counter["changed"] += n
    report = whatif.to_json()

    def rows(table: dict[str, Counter[str]], label: str) -> list[dict[str, Any]]:
        out = []
        for name, c in sorted(table.items(), key=lambda kv: (-kv[1]["changed"], kv[0])):
            row: dict[str, Any] = {label: name}
            if label == "endpoint":
                info = hosts.get(name, {})
                row["host"] = info.get("host", "")
                row["user"] = info.get("user", "")
            row |= {
                "records": c["records"],
                "changed": c["changed"],
                "unchanged": c["unchanged"],
                "not_redecidable": c["not_redecidable"],
                "changes": {k: n for k, n in sorted(c.items()) if "->" in k},
            }
            out.append(row)
        return out

    report["by_endpoint"] = rows(per_endpoint, "endpoint")
    report["by_developer"] = rows(per_developer, "developer")
    report["baseline"] = {"bundle_revision": revision, "sha256": baseline.ref.sha256}
    report["candidate"] = {
        "file": filename,
        "layer": "organisation",
        "sha256": candidate.ref.sha256,
        "mode": candidate.settings.mode,
    }
    report["since"] = since
    return report
