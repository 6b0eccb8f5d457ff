"""The upload batch: its wire form, its limits, and the checks made before anything is stored.

An endpoint uploads its decision records as one JSON object, gzip-compressed::

    {"endpoint_id": "ep_…", "head": {"seq": N, "hash": "…"},
     "records": [{"seq": n, "prev_hash": "…", "hash": "…", "record": "<canonical JSON>"}, …]}

``head`` is the endpoint's own chain head when it built the batch: it lets the hub notice a log
that now ends before records it already holds. ``record`` is the exact canonical JSON the
endpoint hashed, so the hub recomputes ``hash`` itself.

:func:`parse_batch` refuses (raises :class:`Refusal`) anything that is not exactly this shape,
over :data:`MAX_RECORDS` records or :data:`MAX_BYTES` bytes (compressed or not), a gzip stream
that expands past the limit (read in bounded steps, never inflated whole), and a record whose
JSON lacks the fields the hub indexes. A refused batch stores nothing.
"""

from __future__ import annotations

import gzip
import itertools
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from domestique.audit import chain_hash
from domestique.hub.web._facts import dimensions

MAX_RECORDS = 1000
MAX_BYTES = 16 * 1024 * 1024
MAX_RECORD_BYTES = 1024 * 1024
_HEX64 = re.compile(r"[0-9a-f]{64}")
# Month, day, hour, minute and second ranges are in the pattern; the year is checked after.
_TIME = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)"
    r"(?:\.(\d{1,9}))?Z"
)
_ID = re.compile(r"[0-9A-Za-z._:-]{1,128}")
_WORD = re.compile(r"[a-z_]{1,32}")
_CODE = re.compile(r"[a-z0-9_.*-]{1,128}")
MIN_YEAR, MAX_YEAR = 2000, 2100


class Refusal(Exception):
    """A request the hub refuses: HTTP ``status``, a reason ``code`` and a message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Item:
    """One uploaded chain link, with the fields the hub indexes taken from its JSON."""

    seq: int
    prev_hash: str
    hash: str
    record: str
    id: str
    time: str  # normalised: YYYY-MM-DDTHH:MM:SS.ffffffZ
    component: str
    action: str
    codes: tuple[str, ...]
    hash_ok: bool  # the hash recomputed from seq, prev_hash and record matches
    # The web report's dimensions of the record (hub/web/_facts.py), read from the JSON
    # parsed here: the record is parsed once, and the parsed tree is not kept.
    dims: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Batch:
    endpoint_id: str
    head_seq: int
    head_hash: str
    items: tuple[Item, ...]


def decompress(body: bytes, encoding: str) -> bytes:
    """The body's bytes; gzip is inflated in bounded steps (a bomb stops at the limit)."""
    encoding = encoding.strip().lower()
    if len(body) > MAX_BYTES:
        raise Refusal(413, "hub.batch.too_large", f"upload larger than {MAX_BYTES} bytes")
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise Refusal(
            415, "hub.batch.unsupported_encoding", "Content-Encoding must be gzip or none"
        )
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    data = body
    try:
        while data:
            out += inflater.decompress(data, MAX_BYTES + 1 - len(out))
            if len(out) > MAX_BYTES:
                raise Refusal(
                    413, "hub.batch.gzip_bomb", f"gzip upload expands past {MAX_BYTES} bytes"
                )
            data = inflater.unconsumed_tail
        if not inflater.eof:
            raise Refusal(400, "hub.batch.malformed", "gzip stream is truncated")
        if inflater.unused_data:
            raise Refusal(400, "hub.batch.malformed", "bytes after the gzip stream")
    except zlib.error:
        raise Refusal(400, "hub.batch.malformed", "not a valid gzip stream") from None
    return bytes(out)


def compress(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=5, mtime=0)


def normalise_time(value: object) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` for a record time; ValueError if it is not one."""
    if not isinstance(value, str):
        raise ValueError("time is not a string")
    m = _TIME.fullmatch(value)
    if not m or not MIN_YEAR <= int(value[:4]) < MAX_YEAR:
        raise ValueError("time is not an ISO UTC time from 2000 to 2099")
    frac = m.group(1)
    if frac is not None and len(frac) == 6:
        return value  # already in the form the endpoint writes
    return f"{value[:19]}.{(frac or '')[:6].ljust(6, '0')}Z"


def _item(raw: object, index: int) -> Item:
    if not isinstance(raw, dict) or set(raw) != {"seq", "prev_hash", "hash", "record"}:
        raise ValueError(f"records[{index}] must be {{seq, prev_hash, hash, record}}")
    seq, prev, link, record = raw["seq"], raw["prev_hash"], raw["hash"], raw["record"]
    if type(seq) is not int or not 0 < seq < 2**62:
        raise ValueError(f"records[{index}].seq must be a positive integer")
    for name, value in (("prev_hash", prev), ("hash", link)):
        if not isinstance(value, str) or not _HEX64.fullmatch(value):
            raise ValueError(f"records[{index}].{name} must be 64 lower-case hex digits")
    if not isinstance(record, str) or len(record) > MAX_RECORD_BYTES:
        raise ValueError(f"records[{index}].record must be a string of at most 1 MiB")
    raw_record = record.encode("utf-8", "surrogatepass")
    data = orjson.loads(raw_record)
    if not isinstance(data, dict):
        raise ValueError(f"records[{index}].record is not a JSON object")
    rid, component, action = data.get("id"), data.get("component"), data.get("action")
    if not isinstance(rid, str) or not _ID.fullmatch(rid):
        raise ValueError(f"records[{index}] has no usable id")
    for name, value in (("component", component), ("action", action)):
        if not isinstance(value, str) or not _WORD.fullmatch(value):
            raise ValueError(f"records[{index}].{name} is not a word")
    reasons = data.get("reasons", [])
    codes: list[str] = []
    if not isinstance(reasons, list):
        raise ValueError(f"records[{index}].reasons is not a list")
    for reason in reasons:
        code = reason.get("code") if isinstance(reason, dict) else None
        if not isinstance(code, str) or not _CODE.fullmatch(code):
            raise ValueError(f"records[{index}] has a reason without a usable code")
        codes.append(code)
    return Item(
        seq=seq,
        prev_hash=prev,
        hash=link,
        record=record,
        id=rid,
        time=normalise_time(data.get("time")),
        component=str(component),
        action=str(action),
        codes=tuple(codes),
        hash_ok=chain_hash(seq, prev, raw_record) == link,
        dims=dimensions(data),
    )


def parse_batch(body: bytes, encoding: str) -> Batch:
    """A checked :class:`Batch` from an upload body. Raises :class:`Refusal`."""
    raw = decompress(body, encoding)
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise Refusal(400, "hub.batch.malformed", "the batch is not JSON") from None
    try:
        if not isinstance(doc, dict) or set(doc) != {"endpoint_id", "head", "records"}:
            raise ValueError("a batch is {endpoint_id, head, records}")
        endpoint_id, head, records = doc["endpoint_id"], doc["head"], doc["records"]
        if not isinstance(endpoint_id, str) or not _ID.fullmatch(endpoint_id):
            raise ValueError("endpoint_id is not an endpoint id")
        if not isinstance(head, dict) or set(head) != {"seq", "hash"}:
            raise ValueError("head is {seq, hash}")
        head_seq, head_hash = head["seq"], head["hash"]
        if type(head_seq) is not int or not 0 <= head_seq < 2**62:
            raise ValueError("head.seq must be a non-negative integer")
        if not isinstance(head_hash, str) or not _HEX64.fullmatch(head_hash):
            raise ValueError("head.hash must be 64 lower-case hex digits")
        if not isinstance(records, list):
            raise ValueError("records must be a list")
        if len(records) > MAX_RECORDS:
            raise Refusal(
                413, "hub.batch.too_large", f"more than {MAX_RECORDS} records in one batch"
            )
        items = tuple(_item(r, i) for i, r in enumerate(records))
        for before, after in itertools.pairwise(items):
            if after.seq <= before.seq:
                raise ValueError("records must be in increasing seq order")
    except Refusal:
        raise
    except (ValueError, TypeError, KeyError, orjson.JSONDecodeError) as exc:
        message = str(exc) if isinstance(exc, ValueError) and str(exc) else "bad batch"
        raise Refusal(400, "hub.batch.malformed", message[:300]) from None
    return Batch(endpoint_id, head_seq, head_hash, items)


def encode_batch(endpoint_id: str, head: tuple[int, str], rows: list[dict[str, object]]) -> bytes:
    """The gzip body for ``rows`` (each ``{seq, prev_hash, hash, record}``)."""
    doc = {"endpoint_id": endpoint_id, "head": {"seq": head[0], "hash": head[1]}, "records": rows}
    return compress(orjson.dumps(doc))
