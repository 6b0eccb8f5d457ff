"""Base64 payloads judged by content: decode every variant the providers accept, sniff text.

Pure. A part a request labels as binary (``file_data``, ``data`` beside a MIME type, a
``data:`` URL) is read as bytes, whatever its label says, and taken as text when the bytes
are text in a common encoding: UTF-8 (with or without BOM), UTF-16 (with BOM, or without
one when every other byte is zero), UTF-32 with BOM, or Latin-1 when nearly every byte is a
printable Latin-1 character. The label is only used for what content cannot tell: nothing.

A text payload is re-encoded exactly as it came (alphabet, padding, character encoding and
BOM) when something in it is redacted. What cannot be read (images, audio, compressed or
encrypted data) is reported as binary; :func:`sniff` never guesses text out of noise.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections import OrderedDict
from dataclasses import dataclass

MAX_DECODED_PART = 8 * 1024 * 1024  # payloads decoding to more are not read (binary)
_SAMPLE = 64 * 1024  # bytes looked at first: noise is rejected without reading it all
_BINARY_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",  # JPEG
    b"GIF8",
    b"RIFF",  # WAV, WebP, AVI
    b"ID3",  # MP3
    b"OggS",
    b"fLaC",
    b"\x1f\x8b",  # gzip
    b"PK\x03\x04",  # zip (office documents)
    b"BM",
    b"II*\x00",
    b"MM\x00*",
    b"\x00\x00\x00",  # MP4/HEIC boxes and most binary headers
    b"%PDF-",  # a real PDF: its text sits in compressed streams (known escape)
)
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Control characters that do not occur in text (tab, line breaks, form feed and escape do).
_CONTROLS = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
# Bytes that are printable Latin-1 text (or tab, line breaks, form feed, escape).
_LATIN1_TEXT = bytes([9, 10, 11, 12, 13, 27, *range(0x20, 0x7F), *range(0xA0, 0x100)])


@dataclass(frozen=True, slots=True)
class Encoding:
    """How a text payload was written, so a redacted text goes back the same way."""

    prefix: str  # ``data:…;base64,`` of a data URL, or ""
    urlsafe: bool
    padded: bool
    codec: str  # a Python codec name
    bom: bytes

    def encode(self, text: str) -> str:
        """``text`` written as the payload was: same codec and BOM, alphabet and padding."""
        raw = self.bom + text.encode(self.codec, "strict")
        out = (base64.urlsafe_b64encode if self.urlsafe else base64.b64encode)(raw).decode()
        return self.prefix + (out if self.padded else out.rstrip("="))


def decode_base64(payload: str) -> tuple[bytes, bool, bool] | None:
    """(bytes, URL-safe?, padded?) of any base64 the providers accept; None if not base64.

    Standard or URL-safe alphabet, padded or not, with line breaks or spaces anywhere.
    """
    if len(payload) > MAX_DECODED_PART * 4 // 3 + 1024:
        return None
    if len(payload) % 4 == 0:  # the common case, standard and padded: C speed
        try:
            return base64.b64decode(payload, validate=True), False, True
        except (binascii.Error, ValueError):
            pass
    if not payload.isascii():
        return None
    compact = "".join(payload.split())  # line breaks and spaces anywhere
    urlsafe = "-" in compact or "_" in compact
    if urlsafe and ("+" in compact or "/" in compact):
        return None
    body = compact.rstrip("=")
    if "=" in body or len(body) % 4 == 1 or not body:
        return None
    # Unpadded only when padding was needed and left out; otherwise write it as standard.
    padded = body != compact or len(body) % 4 == 0
    try:
        data = base64.b64decode(
            body + "=" * (-len(body) % 4), altchars=b"-_" if urlsafe else None, validate=True
        )
    except (binascii.Error, ValueError):
        return None
    return data, urlsafe, padded


def _readable(text: str) -> bool:
    """True when ``text`` has no NUL and almost no other control characters."""
    if not text or "\x00" in text:
        return False
    return len(_CONTROLS.findall(text)) * 100 <= len(text)


def _utf16_without_bom(data: bytes) -> str | None:
    if len(data) < 4 or len(data) % 2:
        return None
    head = data[:_SAMPLE]
    even, odd = head[0::2], head[1::2]
    for zeros, codec in ((odd, "utf-16-le"), (even, "utf-16-be")):
        if zeros.count(0) * 10 >= len(zeros) * 7:  # mostly ASCII/Latin text in UTF-16
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                return None
    return None


def sniff(data: bytes) -> tuple[str, str, bytes] | None:
    """(text, codec, BOM) when ``data`` is text in a common encoding; None when it is not."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                return None
            return (text, codec, bom) if _readable(text) or not text else None
    if data.startswith(_BINARY_MAGIC):
        return None
    # ASCII in UTF-16 is valid UTF-8 full of NULs: try the wide reading first.
    wide = _utf16_without_bom(data) if b"\x00" in data else None
    if wide is not None:
        codec = "utf-16-le" if data[1] == 0 else "utf-16-be"
        return (wide, codec, b"") if _readable(wide) else None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return (text, "utf-8", b"") if _readable(text) else None
    # Latin-1 decodes anything: only take it when nearly every byte is a printable character.
    for part in (data[:_SAMPLE], data) if len(data) > _SAMPLE else (data,):
        if len(part.translate(None, _LATIN1_TEXT)) * 100 > len(part) * 3:
            return None
    return data.decode("latin-1"), "latin-1", b""


class _BinaryVerdicts:
    """Payloads already found not to be text, by keyed digest (an agent resends the same
    image every turn; decoding megabytes again each time is the cost this saves). Only the
    "not text" verdict is kept, so a hit can never skip a scan; the key is random per process."""

    def __init__(self, max_entries: int = 512, min_chars: int = 4096) -> None:
        self._key = os.urandom(32)
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self.max_entries = max_entries
        self.min_chars = min_chars

    def digest(self, text: str) -> bytes | None:
        if len(text) < self.min_chars:
            return None
        # every character exactly: a lossy encoding would let two payloads share a verdict
        return hashlib.blake2b(
            text.encode("utf-8", "surrogatepass"), digest_size=16, key=self._key
        ).digest()

    def known(self, digest: bytes | None) -> bool:
        if digest is None or digest not in self._seen:
            return False
        self._seen.move_to_end(digest)
        return True

    def add(self, digest: bytes | None) -> None:
        if digest is not None:
            self._seen[digest] = None
            while len(self._seen) > self.max_entries:
                self._seen.popitem(last=False)


_NOT_TEXT = _BinaryVerdicts()


def read_payload(text: str) -> tuple[str, Encoding] | None:
    """The text inside a base64 payload (optionally a ``data:…;base64,`` URL), or None.

    None when the payload is not base64 of any variant, or its bytes are not text (a PDF,
    an image, audio, compressed data): what the label says plays no part.
    """
    prefix = ""
    payload = text
    if text[:5].lower() == "data:":
        head, sep, payload = text.partition(",")
        if not sep or not head.lower().endswith(";base64"):
            return None
        prefix = head + sep
    digest = _NOT_TEXT.digest(text)
    if _NOT_TEXT.known(digest):
        return None
    decoded = decode_base64(payload)
    found = sniff(decoded[0]) if decoded is not None else None
    if decoded is None or found is None:
        _NOT_TEXT.add(digest)
        return None
    _, urlsafe, padded = decoded
    plain, codec, bom = found
    return plain, Encoding(prefix, urlsafe, padded, codec, bom)


def is_data_url(text: str) -> bool:
    """True for a string shaped like ``data:<type>;base64,<payload>``."""
    return text[:5].lower() == "data:" and ";base64," in text[:256].lower()
