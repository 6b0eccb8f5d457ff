"""The upload batch: what is refused before anything is stored, with which code."""

from __future__ import annotations

import gzip
import json

import pytest

from domestique.audit import GENESIS_HASH, chain_hash
from domestique.hub.batch import MAX_BYTES, MAX_RECORDS, Refusal, encode_batch, parse_batch
from domestique.records import to_canonical_json

from .support import make_record


def _row(seq: int = 1, prev: str = GENESIS_HASH) -> dict[str, object]:
    record = to_canonical_json(make_record(seq)).decode()
    return {
        "seq": seq,
        "prev_hash": prev,
        "hash": chain_hash(seq, prev, record.encode()),
        "record": record,
    }


def _refused(body: bytes, encoding: str = "gzip") -> Refusal:
    with pytest.raises(Refusal) as caught:
        parse_batch(body, encoding)
    return caught.value


def test_a_well_formed_batch_parses_with_its_hashes_checked() -> None:
    """The fields the hub indexes come from the record's JSON; the hash is recomputed."""
    batch = parse_batch(encode_batch("ep_1", (1, GENESIS_HASH), [_row()]), "gzip")
    (item,) = batch.items
    assert (item.component, item.action, item.hash_ok) == ("guard", "allow", True)
    assert item.time.endswith("Z")
    assert len(item.time) == len("2026-01-01T00:00:00.000000Z")


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"endpoint_id": "ep_1", "records": []},
        {"endpoint_id": "ep_1", "head": {"seq": -1, "hash": GENESIS_HASH}, "records": []},
        {"endpoint_id": "ep 1; DROP", "head": {"seq": 0, "hash": GENESIS_HASH}, "records": []},
        {"endpoint_id": "ep_1", "head": {"seq": 0, "hash": "zz"}, "records": []},
        {"endpoint_id": "ep_1", "head": {"seq": 0, "hash": GENESIS_HASH}, "records": [{}]},
        {
            "endpoint_id": "ep_1",
            "head": {"seq": 0, "hash": GENESIS_HASH},
            "records": [{**_row(), "record": "not json"}],
        },
        {
            "endpoint_id": "ep_1",
            "head": {"seq": 0, "hash": GENESIS_HASH},
            "records": [{**_row(), "seq": 1.5}],
        },
        {
            "endpoint_id": "ep_1",
            "head": {"seq": 0, "hash": GENESIS_HASH},
            "records": [_row(2), _row(1)],
        },
        {
            "endpoint_id": "ep_1",
            "head": {"seq": 0, "hash": GENESIS_HASH},
            "records": [{**_row(), "record": json.dumps({"id": "x", "time": "yesterday"})}],
        },
    ],
)
def test_malformed_batches_are_refused(doc: object) -> None:
    """Anything but the exact shape is hub.batch.malformed (400)."""
    refusal = _refused(gzip.compress(json.dumps(doc).encode()))
    assert (refusal.status, refusal.code) == (400, "hub.batch.malformed")


def test_not_gzip_and_truncated_gzip_are_malformed() -> None:
    body = encode_batch("ep_1", (1, GENESIS_HASH), [_row()])
    assert _refused(b"\x1f\x8b garbage").code == "hub.batch.malformed"
    assert _refused(body[: len(body) // 2]).code == "hub.batch.malformed"


def test_a_gzip_bomb_stops_at_the_limit() -> None:
    """A small upload that inflates past the byte limit is refused without inflating it all."""
    bomb = gzip.compress(b"\0" * (MAX_BYTES + 1024 * 1024))
    assert len(bomb) < MAX_BYTES // 100
    refusal = _refused(bomb)
    assert (refusal.status, refusal.code) == (413, "hub.batch.gzip_bomb")


def test_too_many_records_and_too_many_bytes_are_refused() -> None:
    rows = [_row()] * (MAX_RECORDS + 1)
    assert _refused(encode_batch("ep_1", (1, GENESIS_HASH), rows)).code == "hub.batch.too_large"
    assert _refused(b"x" * (MAX_BYTES + 1), "").code == "hub.batch.too_large"


def test_an_unknown_encoding_is_refused() -> None:
    body = encode_batch("ep_1", (1, GENESIS_HASH), [_row()])
    refusal = _refused(body, "br")
    assert (refusal.status, refusal.code) == (415, "hub.batch.unsupported_encoding")
