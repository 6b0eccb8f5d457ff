"""The text of a PDF a request carries, read with bounded work. Pure (no I/O, no subprocess).

The providers read the text of PDF documents (Anthropic ``document`` blocks, OpenAI
``input_file`` / ``file`` parts, Gemini ``inline_data`` of type ``application/pdf``), so the
firewall reads it too, with `pypdf <https://pypi.org/project/pypdf/>`_ (pure Python, maintained,
with its own limits against decompression and parsing bombs).

Bounded: :data:`MAX_PAGES` pages, :data:`MAX_CHARS` characters of text, decompression and
parsing work capped through pypdf's configuration (no external decoder binary is ever called),
and a time budget for the document, checked while its text is drawn. The outcome is one of:

* :class:`PdfText` — the text of every page, to scan (a finding blocks: a PDF cannot be
  redacted in place, ``proxy.secret_in_document``);
* :class:`PdfProblem` with ``proxy.document_limit`` — over a limit (a PDF bomb, a huge file);
* :class:`PdfProblem` with ``proxy.document_unreadable`` — not parseable, or encrypted with a
  password (an empty user password, common for "protected" PDFs, is tried and read).

Both problems block by default: what the firewall could not read, the provider's own reader may
read (errors deny). The exception raised inside pypdf is never quoted (it can hold content).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_PAGES = 300
MAX_CHARS = 2_000_000
TIME_BUDGET_S = 3.0  # for the whole document, checked while its text is drawn
_LIMITS: dict[str, object] = {
    "maximum_declared_stream_length": 32_000_000,
    "array_based_stream_maximum_output_length": 32_000_000,
    "zlib_maximum_output_length": 32_000_000,
    "zlib_maximum_recovery_input_length": 1_000_000,
    "lzw_maximum_output_length": 32_000_000,
    "run_length_maximum_output_length": 32_000_000,
    "brotli_maximum_output_length": 32_000_000,
    "jbig2_maximum_output_length": 8_000_000,
    "image_maximum_buffer_size": 32_000_000,
    "stream_decoding_work_maximum_length": 96_000_000,
    # ~150,000 tokens a second: a content stream is parsed in ~2 s at most (a dense real page
    # holds 10-20,000); the text is then drawn under the time budget.
    "stream_parsing_work_maximum_count": 300_000,
    "xform_maximum_invocations_per_extraction": 1_000,
    "page_tree_maximum_entries": 10_000,
    "page_tree_maximum_page_entries": 100_000,
    "jbig2dec_binary": None,  # never start an external decoder
}

# pypdf reports recoverable oddities through ``logging``; nothing of it reaches the terminal.
_LOG = logging.getLogger("pypdf")
_LOG.addHandler(logging.NullHandler())
_LOG.propagate = False


class _OutOfTime(Exception):
    """The time budget ran out while a page's text was drawn."""


@dataclass(frozen=True, slots=True)
class PdfText:
    text: str
    pages: int


@dataclass(frozen=True, slots=True)
class PdfProblem:
    code: str  # proxy.document_limit | proxy.document_unreadable
    message: str


def is_pdf(data: bytes) -> bool:
    """True for bytes that start like a PDF (a header may follow up to 1 KB of junk)."""
    return b"%PDF-" in data[:1024]


class _Recent:
    """Outcomes of PDFs read lately, by keyed digest of their bytes: an agent resends the same
    document on every turn, and reading it again costs what reading it first did. In memory,
    per process, bounded by entries and by characters held; the key is random per process.
    A time limit is not kept (it may pass at a quieter moment)."""

    def __init__(self, max_entries: int = 32, max_chars: int = 8_000_000) -> None:
        self._key = os.urandom(32)
        self._entries: OrderedDict[bytes, PdfText | PdfProblem] = OrderedDict()
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._chars = 0

    def digest(self, data: bytes) -> bytes:
        return hashlib.blake2b(data, digest_size=16, key=self._key).digest()

    def get(self, digest: bytes) -> PdfText | PdfProblem | None:
        found = self._entries.get(digest)
        if found is not None:
            self._entries.move_to_end(digest)
        return found

    def put(self, digest: bytes, outcome: PdfText | PdfProblem) -> None:
        size = len(outcome.text) if isinstance(outcome, PdfText) else 0
        if size > self.max_chars or digest in self._entries:
            return
        self._entries[digest] = outcome
        self._chars += size
        while len(self._entries) > self.max_entries or self._chars > self.max_chars:
            _, old = self._entries.popitem(last=False)
            self._chars -= len(old.text) if isinstance(old, PdfText) else 0


_RECENT = _Recent()


def read_pdf(data: bytes, *, clock: Callable[[], float] = time.monotonic) -> PdfText | PdfProblem:
    """The text of ``data`` (a PDF), or why it cannot be read within the limits."""
    digest = _RECENT.digest(data)
    found = _RECENT.get(digest)
    if found is None:
        found = _read(data, clock)
        timed_out = isinstance(found, PdfProblem) and "not read within" in found.message
        if not timed_out:
            _RECENT.put(digest, found)
    return found


def _read(data: bytes, clock: Callable[[], float]) -> PdfText | PdfProblem:
    import pypdf
    from pypdf.errors import LimitReachedError

    now = clock
    deadline = now() + TIME_BUDGET_S
    try:
        with pypdf.apply_configuration(None, **_LIMITS):
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                return PdfProblem(
                    "proxy.document_unreadable", "PDF encrypted with a password: not readable"
                )
            count = len(reader.pages)
            if count > MAX_PAGES:
                return PdfProblem(
                    "proxy.document_limit", f"PDF of {count} pages (over {MAX_PAGES})"
                )
            parts: list[str] = []
            size = 0
            calls = [0]

            def watch(*_: object) -> None:  # called for every operator drawn
                calls[0] += 1
                if calls[0] % 512 == 0 and now() > deadline:
                    raise _OutOfTime

            for number, page in enumerate(reader.pages, 1):
                text = page.extract_text(visitor_operand_before=watch) or ""
                size += len(text)
                if size > MAX_CHARS:
                    return PdfProblem(
                        "proxy.document_limit", f"PDF text over {MAX_CHARS} characters"
                    )
                parts.append(text)
                if now() > deadline:
                    return PdfProblem(
                        "proxy.document_limit",
                        f"PDF text not read within {TIME_BUDGET_S:.0f} s"
                        f" (page {number} of {count})",
                    )
    except _OutOfTime:
        return PdfProblem("proxy.document_limit", f"PDF text not read within {TIME_BUDGET_S:.0f} s")
    except LimitReachedError:
        return PdfProblem("proxy.document_limit", "PDF over pypdf's decoding or parsing limits")
    except RecursionError:
        return PdfProblem("proxy.document_limit", "PDF nested too deeply")
    except MemoryError:
        return PdfProblem("proxy.document_limit", "PDF too large to read")
    except Exception as exc:  # noqa: BLE001 - any failure inside the reader: not readable
        return PdfProblem("proxy.document_unreadable", f"PDF not readable ({type(exc).__name__})")
    return PdfText("\n".join(parts), count)
