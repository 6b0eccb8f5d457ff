"""Body decoding and JSON parsing: every encoding decoded, every failure its own reason code."""

from __future__ import annotations

import gzip
import json
import zlib

import brotli
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.proxy.body import BodyError, BodyLimits, decode_body, parse_json_object

ENCODERS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
}


def _code(fn: object, *args: object) -> str:
    with pytest.raises(BodyError) as info:
        fn(*args)  # type: ignore[operator]
    return info.value.code


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=4096), encoding=st.sampled_from(sorted(ENCODERS)))
def test_every_supported_encoding_round_trips(data: bytes, encoding: str) -> None:
    """gzip, deflate, br and zstd bodies decode to exactly the original bytes."""
    assert decode_body(ENCODERS[encoding](data), encoding, BodyLimits()) == data


def test_stacked_encodings_are_undone_last_first() -> None:
    """``Content-Encoding: gzip, br`` means gzip was applied first; both are undone."""
    body = b'{"a": 1}'
    assert decode_body(brotli.compress(gzip.compress(body)), "gzip, br", BodyLimits()) == body


def test_raw_deflate_is_accepted() -> None:
    """Some clients send raw deflate under "deflate"; it decodes too."""
    comp = zlib.compressobj(wbits=-15)
    data = comp.compress(b"hello") + comp.flush()
    assert decode_body(data, "deflate", BodyLimits()) == b"hello"


def test_identity_and_no_encoding_pass_through() -> None:
    """No Content-Encoding, or identity, leaves the bytes as they are."""
    assert decode_body(b"x", "", BodyLimits()) == b"x"
    assert decode_body(b"x", "identity", BodyLimits()) == b"x"


@pytest.mark.parametrize("encoding", ["compress", "x-custom", "snappy", "gzip, lz4"])
def test_unknown_encodings_are_unsupported(encoding: str) -> None:
    """An encoding the firewall cannot decode is proxy.unsupported_encoding, never passed on."""
    assert _code(decode_body, b"abc", encoding, BodyLimits()) == "proxy.unsupported_encoding"


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_decompression_bombs_stop_at_the_limit(encoding: str) -> None:
    """A small body that inflates past max_decoded is proxy.decompression_limit."""
    bomb = ENCODERS[encoding](b"\0" * 2_000_000)
    limits = BodyLimits(max_decoded=100_000)
    assert _code(decode_body, bomb, encoding, limits) == "proxy.decompression_limit"


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_cut_compressed_streams_are_truncated(encoding: str) -> None:
    """A compressed body cut short is proxy.truncated_body (or malformed), never partial data."""
    data = ENCODERS[encoding](bytes(range(256)) * 200)
    code = _code(decode_body, data[: len(data) // 2], encoding, BodyLimits())
    assert code in ("proxy.truncated_body", "proxy.malformed_body")


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_garbage_is_malformed(encoding: str) -> None:
    """Bytes that are not in the declared encoding are proxy.malformed_body (or truncated)."""
    code = _code(decode_body, b"this is not compressed at all" * 3, encoding, BodyLimits())
    assert code in ("proxy.malformed_body", "proxy.truncated_body")


def test_oversized_body_is_too_large() -> None:
    """A body over max_body is proxy.body_too_large before anything is decoded."""
    assert _code(decode_body, b"x" * 11, "", BodyLimits(max_body=10)) == "proxy.body_too_large"


def test_json_object_parses() -> None:
    """A JSON object is returned as a dict."""
    assert parse_json_object(b'{"model": "m", "n": [1, 2]}') == {"model": "m", "n": [1, 2]}


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b'{"a": 1', "proxy.truncated_body"),
        (b'{"messages": [{"content": "abc', "proxy.truncated_body"),
        (b'{"a": 1}}', "proxy.malformed_body"),
        (b'{"a": nope}', "proxy.malformed_body"),
        (b"[1, 2]", "proxy.malformed_body"),
        (b'"text"', "proxy.malformed_body"),
        (b'{"a": NaN}', "proxy.malformed_body"),
        (b'{"a": Infinity}', "proxy.malformed_body"),
        (b'{"a": 1e400}', "proxy.malformed_body"),
        (b'{"a": -1.5e999}', "proxy.malformed_body"),
        (b'{"a": "\xff"}', "proxy.malformed_body"),
        (b"\xef\xbb\xbf{}", "proxy.malformed_body"),
        (b"", "proxy.truncated_body"),
        (b"[" * 100_000 + b"]" * 100_000, "proxy.nesting_too_deep"),
    ],
)
def test_bad_json_has_its_own_reason_code(data: bytes, code: str) -> None:
    """Truncated, malformed, non-object and parser-exhausting JSON each get their own code."""
    body = b'{"x": ' + data + b"}" if code == "proxy.nesting_too_deep" else data
    assert _code(parse_json_object, body) == code


def test_error_messages_never_quote_the_body() -> None:
    """A BodyError message names a position, never the content (it may be a secret)."""
    with pytest.raises(BodyError) as info:
        parse_json_object(b'{"key": sk_live_SECRETVALUE}')
    assert "SECRET" not in str(info.value)
    assert json.dumps(info.value.message)
