"""Request bodies: Content-Encoding decoding with limits, and strict JSON parsing.

Pure. Every failure raises :class:`BodyError` carrying its own reason code, so the caller blocks
with that code; nothing here ever returns bytes it did not fully decode.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import brotli
import zstandard

DEFAULT_MAX_BODY = 32 * 1024 * 1024  # the largest request the providers accept (Anthropic: 32 MB)
DEFAULT_MAX_DECODED = 64 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64
_CHUNK = 64 * 1024
_ZSTD_SLICE = 256  # compressed bytes per step: bounds the output one step can produce


class BodyError(ValueError):
    """A body that cannot be scanned. ``code`` is the reason code; the message has no content."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class BodyLimits:
    max_body: int = DEFAULT_MAX_BODY  # bytes on the wire
    max_decoded: int = DEFAULT_MAX_DECODED  # bytes after Content-Encoding
    max_depth: int = DEFAULT_MAX_DEPTH  # JSON nesting


def _too_big(limit: int) -> BodyError:
    return BodyError("proxy.decompression_limit", f"decoded body exceeds {limit} bytes")


def _gunzip_like(data: bytes, wbits: int, limit: int) -> bytes:
    out = bytearray()
    rest = data
    while True:
        dec = zlib.decompressobj(wbits)
        buf = rest
        while buf:
            out += dec.decompress(buf, _CHUNK)
            if len(out) > limit:
                raise _too_big(limit)
            buf = dec.unconsumed_tail
        while not dec.eof:
            piece = dec.decompress(b"", _CHUNK)
            if not piece:
                break
            out += piece
            if len(out) > limit:
                raise _too_big(limit)
        if not dec.eof:
            raise BodyError("proxy.truncated_body", "compressed body ends early")
        rest = dec.unused_data
        # gzip allows several members one after another; zlib/deflate streams do not.
        if not rest or wbits != 31:
            if rest and rest.strip(b"\x00"):
                raise BodyError("proxy.malformed_body", "data after the end of the stream")
            return bytes(out)


def _gzip(data: bytes, limit: int) -> bytes:
    try:
        return _gunzip_like(data, 31, limit)
    except zlib.error as exc:
        raise BodyError("proxy.malformed_body", "invalid gzip data") from exc


def _deflate(data: bytes, limit: int) -> bytes:
    # RFC 9110 "deflate" is zlib-wrapped; some clients send raw deflate. Accept both.
    try:
        return _gunzip_like(data, 15, limit)
    except zlib.error:
        pass
    try:
        return _gunzip_like(data, -15, limit)
    except zlib.error as exc:
        raise BodyError("proxy.malformed_body", "invalid deflate data") from exc


def _brotli(data: bytes, limit: int) -> bytes:
    dec = brotli.Decompressor()
    out = bytearray()
    try:
        out += dec.process(data, output_buffer_limit=_CHUNK)
        while len(out) <= limit and not dec.is_finished():
            piece = dec.process(b"", output_buffer_limit=_CHUNK)
            if not piece and dec.can_accept_more_data():
                break  # it wants more input than there is: the stream was cut
            out += piece
        if len(out) > limit:
            raise _too_big(limit)
        finished = dec.is_finished()
    except brotli.error as exc:
        raise BodyError("proxy.malformed_body", "invalid brotli data") from exc
    if not finished:
        raise BodyError("proxy.truncated_body", "compressed body ends early")
    return bytes(out)


def _zstd(data: bytes, limit: int) -> bytes:
    out = bytearray()
    rest = data
    try:
        while rest:
            size = zstandard.frame_content_size(rest[:18])
            if size > limit:
                raise _too_big(limit)
            dec = zstandard.ZstdDecompressor().decompressobj()
            pos = 0
            while pos < len(rest) and not dec.eof:
                out += dec.decompress(rest[pos : pos + _ZSTD_SLICE])
                pos += _ZSTD_SLICE
                if len(out) > limit:
                    raise _too_big(limit)
            if not dec.eof:
                raise BodyError("proxy.truncated_body", "compressed body ends early")
            rest = dec.unused_data + rest[pos:] if pos < len(rest) else dec.unused_data
    except zstandard.ZstdError as exc:
        raise BodyError("proxy.malformed_body", "invalid zstd data") from exc
    return bytes(out)


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _gzip,
    "x-gzip": _gzip,
    "deflate": _deflate,
    "br": _brotli,
    "zstd": _zstd,
}


def decode_body(data: bytes, content_encoding: str, limits: BodyLimits) -> bytes:
    """``data`` with every listed Content-Encoding undone (last applied, first undone).

    Unknown encodings raise ``proxy.unsupported_encoding``; output beyond
    ``limits.max_decoded`` raises ``proxy.decompression_limit``; a cut stream raises
    ``proxy.truncated_body``.
    """
    if len(data) > limits.max_body:
        raise BodyError("proxy.body_too_large", f"body exceeds {limits.max_body} bytes")
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    for coding in reversed(codings):
        if coding == "identity":
            continue
        decoder = _DECODERS.get(coding)
        if decoder is None:
            raise BodyError(
                "proxy.unsupported_encoding", f"Content-Encoding {coding[:24]!r} is not decoded"
            )
        data = decoder(data, limits.max_decoded)
    if len(data) > limits.max_decoded:
        raise _too_big(limits.max_decoded)
    return data


def _reject_constant(name: str) -> Any:
    raise BodyError("proxy.malformed_body", f"non-standard JSON constant {name}")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 parses as inf; no JSON encoder can write it back
        raise BodyError("proxy.malformed_body", "a JSON number is out of range")
    return value


def parse_json_object(data: bytes) -> dict[str, Any]:
    """The body as a JSON object; raises :class:`BodyError` with the precise reason code.

    Invalid UTF-8, NaN/Infinity, a number beyond a double's range (``1e400``), or a top level
    that is not an object are malformed; a document that stops where more was expected is
    truncated; nesting deep enough to exhaust the parser is too deep (the depth limit proper
    is enforced by the field walker).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError("proxy.malformed_body", "body is not valid UTF-8") from exc
    if text.startswith("\ufeff"):
        raise BodyError("proxy.malformed_body", "body starts with a byte-order mark")
    try:
        value = json.loads(text, parse_float=_finite_float, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise BodyError("proxy.nesting_too_deep", "JSON nesting exhausts the parser") from exc
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise BodyError("proxy.truncated_body", "JSON body ends early") from exc
        raise BodyError(
            "proxy.malformed_body", f"invalid JSON at line {exc.lineno} column {exc.colno}"
        ) from exc
    if not isinstance(value, dict):
        raise BodyError("proxy.malformed_body", "JSON body is not an object")
    return value
