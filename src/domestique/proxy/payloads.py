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
import re
from dataclasses import dataclass

MAX_DECODED_PART = 8 * 1024 * 1024  # bytes of one decoded payload that are sniffed
_B64_CHARS = re.compile(r"[A-Za-z0-9+/=_\-\s]*")
_WS = re.compile(r"\s+")
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
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\x1b")


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
    if len(payload) > MAX_DECODED_PART * 4 // 3 + 1024 or not _B64_CHARS.fullmatch(payload):
        return None
    compact = _WS.sub("", payload)
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
    controls = sum(1 for c in text if (c < " " or "\x7f" <= c < "\xa0") and c not in _TEXT_CONTROLS)
    return controls * 100 <= len(text)


def _utf16_without_bom(data: bytes) -> str | None:
    if len(data) < 4 or len(data) % 2:
        return None
    even, odd = data[0::2], data[1::2]
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
    text = data.decode("latin-1")
    printable = sum(1 for c in text if " " <= c < "\x7f" or c >= "\xa0" or c in _TEXT_CONTROLS)
    return (text, "latin-1", b"") if printable * 100 >= len(text) * 97 else None


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
    decoded = decode_base64(payload)
    if decoded is None:
        return None
    data, urlsafe, padded = decoded
    if len(data) > MAX_DECODED_PART:
        return None
    found = sniff(data)
    if found is None:
        return None
    plain, codec, bom = found
    return plain, Encoding(prefix, urlsafe, padded, codec, bom)


def is_data_url(text: str) -> bool:
    """True for a string shaped like ``data:<type>;base64,<payload>``."""
    return text[:5].lower() == "data:" and ";base64," in text[:256].lower()
