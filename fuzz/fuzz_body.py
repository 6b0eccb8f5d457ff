"""Request body decoding: every Content-Encoding chain, bombs, and the strict JSON parser.

Invariants: ``decode_body`` returns bytes or raises ``BodyError`` with a registered proxy code,
never anything else; a correctly encoded chain within the limit decodes to exactly the
original; output is never larger than the limit (a bomb stops with
``proxy.decompression_limit``); ``parse_json_object`` returns a dict or a ``BodyError``.
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

import brotli
import zstandard
from hypothesis import strategies as st

from domestique.proxy.body import BodyError, BodyLimits, decode_body, parse_json_object
from domestique.proxy.codes import REASON_CODES

from ._harness import Target, mutated

CODES = frozenset(c.code for c in REASON_CODES)
LIMITS = BodyLimits(max_body=1 << 20, max_decoded=64 * 1024, max_depth=64)
_ENCODERS: dict[str, Any] = {
    "gzip": lambda d: gzip.compress(d, mtime=0),
    "x-gzip": lambda d: gzip.compress(d, mtime=0),
    "deflate": zlib.compress,
    "br": lambda d: brotli.compress(d, quality=4),
    "zstd": lambda d: zstandard.ZstdCompressor().compress(d),
    "identity": lambda d: d,
}
CODINGS = [*_ENCODERS, "compress", "x-unknown", "GZIP", " br "]

_BOMBS = [b"\0" * (LIMITS.max_decoded + 1), b"\0" * LIMITS.max_decoded, b"A" * (1 << 19)]
_memo: dict[tuple[str, bytes], bytes] = {}

# (encoding header, wire bytes, the original when the chain is valid and unmutated, or None)
Case = tuple[str, bytes, bytes | None]


def _encode(chain: list[str], data: bytes) -> bytes | None:
    for coding in chain:
        enc = _ENCODERS.get(coding.strip().lower())
        if enc is None:
            return None
        key = (coding, data)
        if len(data) > 4096:  # bombs: compressed once, not on every draw
            if key not in _memo:
                _memo[key] = enc(data)
            data = _memo[key]
        else:
            data = enc(data)
    return data


def _cases(corpus: list[bytes]) -> st.SearchStrategy[Case]:
    plain_st = st.one_of(
        mutated(corpus),
        st.binary(max_size=256),
        st.sampled_from(_BOMBS),  # past the decoded limit, or just within it
        st.builds(
            lambda v: json.dumps(v).encode(),
            st.recursive(st.none() | st.text(max_size=20), lambda c: st.lists(c, max_size=4)),
        ),
    )
    chain_st = st.lists(st.sampled_from(CODINGS), max_size=3)
    return st.builds(
        _wire, plain_st, chain_st, st.booleans(), st.integers(0, 1 << 16), st.integers(1, 255)
    )


def _wire(plain: bytes, chain: list[str], damage: bool, at: int, flip: int) -> Case:
    wire = _encode(chain, plain)
    original: bytes | None = plain
    if wire is None:
        wire, original = plain, None
    if damage and wire:
        at %= len(wire) + 1
        if at == len(wire):
            wire = wire[: at // 2]  # truncated
        else:
            wire = wire[:at] + bytes([wire[at] ^ flip]) + wire[at + 1 :]
        original = None
    return ", ".join(chain), wire, original


def check(case: Case) -> None:
    header, wire, original = case
    try:
        out = decode_body(wire, header, LIMITS)
    except BodyError as exc:
        assert exc.code in CODES, exc.code
        if original is not None and exc.code != "proxy.decompression_limit":
            raise AssertionError(f"a valid {header!r} body was refused: {exc.code}") from None
        if exc.code == "proxy.decompression_limit":
            assert original is None or len(original) > LIMITS.max_decoded
    else:
        assert len(out) <= LIMITS.max_decoded
        if original is not None:
            assert out == original, "a valid chain decoded to different bytes"
        try:
            value = parse_json_object(out)
        except BodyError as exc:
            assert exc.code in CODES, exc.code
        else:
            assert isinstance(value, dict)


def _from_bytes(raw: bytes) -> Case:
    header, _, wire = raw.partition(b"\n")
    return header.decode("latin-1"), wire, None


TARGET = Target(
    "body",
    _cases,
    check,
    from_bytes=_from_bytes,
    to_bytes=lambda c: c[0].encode("latin-1") + b"\n" + c[1],
)
