"""Text inside real PDFs is read and scanned, through the firewall to a real local upstream.

The PDFs are written in the test (text drawn by FlateDecode page streams, the way real PDFs
hold it), sent in each provider's document shape. A finding blocks (a PDF cannot be redacted
in place); a clean PDF is forwarded byte for byte; a PDF bomb, a huge PDF and an unreadable or
password-encrypted PDF block with their own codes, quickly.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from domestique.proxy import pdf
from domestique.proxy.server import build_app, parse_upstreams

from .pdfs import encrypted, flate_bomb, make_pdf, operator_bomb
from .upstream import Upstream, run_asgi, run_upstream

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id (the detectors know the format)
GITHUB = "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"  # made-up GitHub token
REPORT = "Quarterly report\nRevenue grew in every region.\nThe build is green."


def _anthropic(data: str) -> tuple[str, str, dict[str, Any]]:
    block = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    content = [block, {"type": "text", "text": "Summarise this."}]
    return (
        "anthropic",
        "/v1/messages",
        {"model": "m", "messages": [{"role": "user", "content": content}]},
    )


def _openai_chat(data: str) -> tuple[str, str, dict[str, Any]]:
    part = {
        "type": "file",
        "file": {"filename": "r.pdf", "file_data": f"data:application/pdf;base64,{data}"},
    }
    body = {"model": "m", "messages": [{"role": "user", "content": [part]}]}
    return "openai", "/v1/chat/completions", body


def _openai_responses(data: str) -> tuple[str, str, dict[str, Any]]:
    part = {
        "type": "input_file",
        "filename": "r.pdf",
        "file_data": f"data:application/pdf;base64,{data}",
    }
    body = {"model": "m", "input": [{"role": "user", "content": [part]}]}
    return "openai", "/v1/responses", body


def _gemini(data: str) -> tuple[str, str, dict[str, Any]]:
    part = {"inline_data": {"mime_type": "application/pdf", "data": data}}
    body = {"contents": [{"role": "user", "parts": [part, {"text": "Summarise this."}]}]}
    return "gemini", "/v1beta/models/gemini-x:generateContent", body


def _gemini_camel(data: str) -> tuple[str, str, dict[str, Any]]:
    part = {"inlineData": {"mimeType": "application/pdf", "data": data}}
    body = {"contents": [{"role": "user", "parts": [part]}]}
    return "gemini", "/v1beta/models/gemini-x:generateContent", body


SHAPES = {
    "anthropic-document": _anthropic,
    "openai-chat-file": _openai_chat,
    "openai-responses-input_file": _openai_responses,
    "gemini-inline_data": _gemini,
    "gemini-inlineData": _gemini_camel,
}


def _send(home: Path, shape: str, pdf_bytes: bytes) -> tuple[httpx.Response, Upstream, str]:
    data = base64.b64encode(pdf_bytes).decode()
    provider, path, body = SHAPES[shape](data)
    with run_upstream() as up:
        app = build_app(parse_upstreams([f"{provider}={up.url}"]), home=home)
        with run_asgi(app) as url, httpx.Client(trust_env=False, timeout=60) as client:
            resp = client.post(url + path, content=json.dumps(body))
    return resp, up, data


def _codes(resp: httpx.Response) -> list[str]:
    return list(resp.json()["domestique"]["reasons"])


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_secret_in_a_pdf_blocks_and_never_reaches_the_upstream(
    tmp_path: Path, shape: str
) -> None:
    pdf_bytes = make_pdf([REPORT, f"Deploy notes\naws key {KEY_ID} for the bucket"])
    resp, up, data = _send(tmp_path, shape, pdf_bytes)
    assert resp.status_code == 403, resp.text
    assert _codes(resp) == ["proxy.secret_in_document"]
    assert "<pdf>" in resp.text  # the evidence names the PDF's text as where
    assert KEY_ID not in resp.text
    assert up.received == []
    assert data  # the payload that was refused


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_clean_pdf_is_forwarded_byte_for_byte(tmp_path: Path, shape: str) -> None:
    pdf_bytes = make_pdf([REPORT, "Appendix\nNothing secret here."])
    resp, up, data = _send(tmp_path, shape, pdf_bytes)
    assert resp.status_code == 200, resp.text
    assert len(up.received) == 1
    assert data.encode() in up.received[0].body


def test_the_text_is_read_from_compressed_streams_on_every_page(tmp_path: Path) -> None:
    """The key on page 3 of 3, drawn by a FlateDecode stream (not visible in the bytes)."""
    pdf_bytes = make_pdf(["one", "two", f"token {GITHUB}"])
    assert GITHUB.encode() not in pdf_bytes
    resp, up, _ = _send(tmp_path, "anthropic-document", pdf_bytes)
    assert _codes(resp) == ["proxy.secret_in_document"]
    assert up.received == []


def test_an_owner_password_only_pdf_is_read(tmp_path: Path) -> None:
    """An AES-encrypted PDF with an empty user password opens without one: it is read."""
    resp, up, _ = _send(tmp_path, "anthropic-document", encrypted(make_pdf([f"k {KEY_ID}"]), ""))
    assert _codes(resp) == ["proxy.secret_in_document"]
    assert up.received == []


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda: encrypted(make_pdf([REPORT]), "s3cret-pw"), "proxy.document_unreadable"),
        (lambda: b"%PDF-1.7\n" + b"\x00garbage that is no PDF\n" * 40, "proxy.document_unreadable"),
        (lambda: make_pdf([REPORT])[:300], "proxy.document_unreadable"),
        (lambda: make_pdf(["page"] * (pdf.MAX_PAGES + 1)), "proxy.document_limit"),
        (lambda: make_pdf(["bomb"], stream=flate_bomb(64)), "proxy.document_limit"),
        (lambda: make_pdf(["ops"], stream=operator_bomb(1_000_000)), "proxy.document_limit"),
    ],
    ids=["password", "garbage", "truncated", "too-many-pages", "flate-bomb", "operator-bomb"],
)
def test_a_pdf_that_cannot_be_read_blocks_with_its_code(
    tmp_path: Path, make: Any, code: str
) -> None:
    """Errors deny: what the firewall cannot read, the provider's reader might. Bounded: a
    bomb is refused within seconds, not read to the end."""
    started = time.monotonic()
    resp, up, _ = _send(tmp_path, "gemini-inline_data", make())
    assert resp.status_code == 403, resp.text
    assert _codes(resp) == [code]
    assert up.received == []
    assert time.monotonic() - started < 60  # generous: a shared machine; hangs are the bug


def test_the_time_budget_stops_between_pages() -> None:
    """A PDF that takes longer than the budget to read is a limit, not a wait."""
    ticks = iter(range(0, 1000, 4))  # every look at the clock: 4 s later
    document = make_pdf(["a", "b", "c: the time budget test"])
    found = pdf.read_pdf(document, clock=lambda: float(next(ticks)))
    assert isinstance(found, pdf.PdfProblem)
    assert found.code == "proxy.document_limit"
    assert "not read within" in found.message


def test_a_resent_pdf_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents resend a document every turn: its outcome is remembered (by a keyed digest of
    its bytes), a changed byte is a new document, and a time limit is never remembered."""
    reads: list[int] = []
    real = pdf._read

    def counting(data: bytes, clock: Any) -> Any:
        reads.append(len(data))
        return real(data, clock)

    monkeypatch.setattr(pdf, "_read", counting)
    document = make_pdf(["resent every turn", f"key {KEY_ID}"])
    first, second = pdf.read_pdf(document), pdf.read_pdf(document)
    assert first == second
    assert isinstance(first, pdf.PdfText)
    assert len(reads) == 1
    pdf.read_pdf(make_pdf(["resent every turn", f"key {KEY_ID}."]))
    assert len(reads) == 2
    slow = make_pdf(["slow", "slower"])
    for _ in range(2):
        ticks = iter(range(0, 1000, 4))
        pdf.read_pdf(slow, clock=lambda: float(next(ticks)))  # noqa: B023 - used at once
    assert len(reads) == 4
