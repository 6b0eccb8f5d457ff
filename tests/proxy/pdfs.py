"""Real PDF files for the tests, written byte by byte (text in FlateDecode page streams)."""

from __future__ import annotations

import io
import zlib


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], *, compress: bool = True, stream: bytes | None = None) -> bytes:
    """A PDF with one page per entry, each drawing its text in Helvetica, line by line.

    ``stream``: raw (already compressed) content for every page instead (bombs).
    """
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids: list[int] = []
    for text in pages:
        if stream is None:
            lines = [f"({_escape(line)}) Tj 0 -14 Td" for line in text.splitlines() or [""]]
            content = f"BT /F1 12 Tf 72 720 Td {' '.join(lines)} ET".encode("latin-1")
            data = zlib.compress(content) if compress else content
        else:
            data = stream
        filters = b"/Filter /FlateDecode " if compress or stream is not None else b""
        body = b"<< " + filters + b"/Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
        contents = add(body)
        page = add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] " % tree
            + b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (font, contents)
        )
        kids.append(page)
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    refs = b" ".join(b"%d 0 R" % k for k in kids)
    objects[tree - 1] = b"<< /Type /Pages /Kids [" + refs + b"] /Count %d >>" % len(kids)
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, catalog))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def encrypted(pdf: bytes, user_password: str, owner_password: str = "owner") -> bytes:  # noqa: S107
    """``pdf`` encrypted with AES-256 (an empty user password: opens without one)."""
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password, owner_password, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def flate_bomb(megabytes: int) -> bytes:
    """A FlateDecode page stream that inflates to ``megabytes`` MB of spaces."""
    z = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    return b"".join([*(z.compress(chunk) for _ in range(megabytes)), z.flush()])


def operator_bomb(operators: int) -> bytes:
    """A FlateDecode page stream of ``operators`` text-drawing operators (a few KB packed)."""
    return zlib.compress(b"BT /F1 12 Tf 72 720 Td " + b"(ab) Tj " * operators + b"ET", 9)
