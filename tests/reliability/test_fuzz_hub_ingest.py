"""The hub-ingest harness (fuzz/fuzz_hub_ingest.py) reaches every break it is meant to, and its
invariants catch a hub that half-ingests or stores a record whose hash does not match."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fuzz import fuzz_hub_ingest as harness
from fuzz._harness import CORPUS

from domestique.hub.batch import Refusal, parse_batch
from domestique.hub.store import HubStore

# seed -> (refusal code, or (stored, duplicates, head_seq, alert codes))
EXPECTED: dict[str, Any] = {
    "chain-clean": (6, 0, 10, []),
    "chain-gap": (5, 0, 10, ["hub.integrity.gap"]),
    "chain-bad-hash": (5, 0, 10, ["hub.integrity.bad_hash"]),
    "chain-fork": (6, 0, 10, ["hub.integrity.fork"]),
    "chain-duplicate": (6, 2, 10, []),
    "chain-rewrite": (6, 0, 10, ["hub.integrity.rewrite"]),
    "chain-replay": (5, 0, 10, ["hub.integrity.replay", "hub.integrity.gap"]),
    "chain-dup-id": (5, 0, 10, ["hub.integrity.rewrite", "hub.integrity.gap"]),
    "chain-head-behind": (6, 0, 7, ["hub.integrity.truncated"]),
    "chain-bad-time": "hub.batch.malformed",
    "chain-wrong-endpoint": "hub.batch.wrong_endpoint",
    "raw-gzip": (6, 0, 10, []),
    "raw-identity": (6, 0, 10, []),
    "raw-bomb": "hub.batch.gzip_bomb",
    "raw-not-json": "hub.batch.malformed",
}


def _case(name: str) -> harness.Case:
    return harness._from_bytes((CORPUS / "hub_ingest" / name).read_bytes())


def test_every_seed_is_expected() -> None:
    assert sorted(p.name for p in (CORPUS / "hub_ingest").iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_seed_reaches_its_break(name: str) -> None:
    kind, a, b = _case(name)
    body, encoding = (b, a) if kind == "raw" else harness.build(a)
    home = Path(tempfile.mkdtemp(prefix="dq-test-hub-"))
    try:
        shutil.copytree(harness._template(), home, dirs_exist_ok=True)
        try:
            batch = parse_batch(body, encoding)
            store = harness._open(home)
            try:
                result = store.ingest(harness.ENDPOINT, batch)
            finally:
                store.close()
            got: Any = (
                result.stored,
                result.duplicates,
                result.head_seq,
                [x["code"] for x in result.alerts],
            )
        except Refusal as refusal:
            got = refusal.code
    finally:
        shutil.rmtree(home, ignore_errors=True)
    assert got == EXPECTED[name]
    harness.check((kind, a, b))  # and the harness's invariants hold on it


def test_the_invariants_catch_a_half_ingested_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    real = HubStore.ingest

    def stores_then_refuses(self: HubStore, endpoint_id: str, batch: Any) -> Any:
        real(self, endpoint_id, batch)
        raise Refusal(400, "hub.batch.malformed", "refused after storing")

    monkeypatch.setattr(HubStore, "ingest", stores_then_refuses)
    with pytest.raises(AssertionError, match=r"refused .* but changed the store"):
        harness.check(_case("chain-clean"))


def test_the_invariants_catch_a_stored_bad_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    real = HubStore.ingest

    def trusts_every_hash(self: HubStore, endpoint_id: str, batch: Any) -> Any:
        items = tuple(
            type(i)(**{**{f: getattr(i, f) for f in i.__slots__}, "hash_ok": True})
            for i in batch.items
        )
        return real(self, endpoint_id, type(batch)(batch.endpoint_id, batch.head_seq,
                                                    batch.head_hash, items))  # fmt: skip

    monkeypatch.setattr(HubStore, "ingest", trusts_every_hash)
    with pytest.raises(AssertionError):
        harness.check(_case("chain-bad-hash"))
