"""Known escapes around the firewall proxy (docs/known-escapes.md, "Firewall proxy").

Blocked or mitigated escapes have passing tests; open ones are strict xfail, so a change in
behaviour (for better or worse) fails the suite until the list is updated. The tests drive the
real pipeline: the real detection engine and the real built-in policy.
"""

from __future__ import annotations

import base64
import codecs
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from domestique.detect import default_scanner
from domestique.keys import Fingerprinter, install_key
from domestique.policy import DecisionContext, load_policy
from domestique.proxy.pipeline import Inspection, inspect_request
from domestique.proxy.routes import Refusal, Route, classify
from domestique.records import Action, Component, Reason, Verdict
from domestique.redact import PlaceholderMaker
from proxy.upstream import run_asgi, run_upstream

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id (the detectors know the format)


class _Bound:
    def __init__(self, home: Path) -> None:
        self.policy = load_policy(home=home)
        self.ctx = DecisionContext(Component.PROXY, hosts=("api.anthropic.com",))

    def action_for(self, code: str) -> Action:
        return self.policy.action_for(code, self.ctx)

    def decide(self, reasons: Any) -> Verdict:
        return self.policy.decide(reasons, self.ctx)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DOMESTIQUE_HOME", str(tmp_path))
    return tmp_path


def _inspect(
    home: Path, body: dict[str, Any] | bytes, path: str = "/v1/messages", encoding: str = ""
) -> Inspection:
    route = classify("POST", path, {})
    assert isinstance(route, Route)
    key = install_key(home)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return inspect_request(
        route,
        raw,
        content_encoding=encoding,
        scanner=default_scanner(home),
        policy=_Bound(home),
        maker=PlaceholderMaker(key),
        fingerprinter=Fingerprinter(key),
    )


def _leaks(ins: Inspection, probe: bytes = KEY_ID.encode()) -> bool:
    """True when what would be forwarded still carries the secret (in any form given)."""
    return ins.body is not None and probe in ins.body


def _user(content: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


# -- open ----------------------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True, reason="open: images are not OCR'd; recorded as proxy.binary_unscanned"
)
def test_secret_in_an_image_is_forwarded(home: Path) -> None:
    """A screenshot of a key (here: a PNG tEXt chunk) is binary; it is recorded, not read."""
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x20tEXt" + b"Comment\x00" + KEY_ID.encode()
    data = base64.b64encode(png).decode()
    ins = _inspect(
        home,
        _user(
            [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": data},
                }
            ]
        ),
    )
    assert "proxy.binary_unscanned" in [r.code for r in ins.reasons]
    assert not _leaks(ins, data.encode())


def test_secret_in_a_real_pdf_is_blocked(home: Path) -> None:
    """blocked: the text of a real PDF (drawn by a compressed page stream) is extracted and
    scanned; a PDF cannot be redacted in place, so a finding blocks (proxy.secret_in_document)."""
    from proxy.pdfs import make_pdf

    pdf = make_pdf(["Quarterly report", f"aws key {KEY_ID}"])
    assert KEY_ID.encode() not in pdf
    data = base64.b64encode(pdf).decode()
    source = {"type": "base64", "media_type": "application/pdf", "data": data}
    ins = _inspect(home, _user([{"type": "document", "source": source}]))
    assert ins.blocked
    assert [r.code for r in ins.reasons] == ["proxy.secret_in_document"]


def test_secret_split_across_messages_is_redacted(home: Path) -> None:
    """blocked (redacted): half a key in one message, half in the next; the seam scan lays
    conversation text end to end and redacts each part where it lies."""
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": KEY_ID[:10]},
            {"role": "user", "content": KEY_ID[10:]},
        ],
    }
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT
    assert not _leaks(ins, KEY_ID[:10].encode())
    assert not _leaks(ins, KEY_ID[10:].encode())


def test_secret_around_a_placeholder_shaped_string_is_redacted(home: Path) -> None:
    """blocked (redacted): ``AKIAZ3MHQX[REDACTED:x:0badc0de]7B2LKWP4RN`` reads as the key
    once the insert is dropped; the seam scan cuts placeholder-shaped strings out."""
    ins = _inspect(home, _user(f"use {KEY_ID[:10]}[REDACTED:x:0badc0de]{KEY_ID[10:]} now"))
    assert ins.action is Action.REDACT
    assert not _leaks(ins, KEY_ID[:10].encode())
    assert not _leaks(ins, KEY_ID[10:].encode())


@pytest.mark.parametrize(
    "encoded",
    [
        pytest.param(codecs.encode(KEY_ID, "rot13"), id="rot13"),
        pytest.param(KEY_ID[::-1], id="reversed"),
        pytest.param(" ".join(KEY_ID), id="spaced"),
        pytest.param(base64.b64encode(zlib.compress(KEY_ID.encode())).decode(), id="zlib-base64"),
    ],
)
@pytest.mark.xfail(strict=True, reason="open: encodings the detectors do not decode")
def test_secret_in_an_encoding_the_detectors_do_not_decode(home: Path, encoded: str) -> None:
    """ROT13, reversed, spaced out, compressed-then-base64: the value is not recognised."""
    ins = _inspect(home, _user(f"decode this: {encoded}"))
    assert not _leaks(ins, encoded.encode())


def test_secret_in_a_request_header_is_blocked(home: Path) -> None:
    """blocked: a forwarded header other than the provider credential is scanned; a header
    cannot be redacted, so the request is refused (proxy.secret_in_header). The developer's
    own key in the provider's auth header passes."""
    import httpx

    from domestique.proxy.server import build_app, parse_upstreams

    with run_upstream() as up:
        with run_asgi(build_app(parse_upstreams([f"anthropic={up.url}"]), home=home)) as url:
            refused = httpx.post(
                url + "/v1/messages",
                content=json.dumps(_user("hi")),
                headers={"x-debug-note": KEY_ID, "x-api-key": "sk-ant-dev-key"},
                trust_env=False,
                timeout=30,
            )
            assert refused.status_code == 403
            assert refused.json()["domestique"]["reasons"] == ["proxy.secret_in_header"]
            assert not up.received
            passed = httpx.post(
                url + "/v1/messages",
                content=json.dumps(_user("hi")),
                headers={"x-api-key": "sk-ant-api03-" + "Zx8Kq2Lm4Np6Rt8Vw0Yb" * 4},
                trust_env=False,
                timeout=30,
            )
        assert passed.status_code == 200, passed.text
        assert len(up.received) == 1


def test_secret_in_the_query_string_is_blocked(home: Path) -> None:
    """blocked: query parameters are scanned (proxy.secret_in_path); Gemini's ``key=`` (the
    developer's key) passes."""
    import httpx

    from domestique.proxy.server import build_app, parse_upstreams

    with run_upstream() as up:
        app = build_app(parse_upstreams([f"gemini={up.url}"]), home=home)
        with run_asgi(app) as url:
            refused = httpx.post(
                f"{url}/v1beta/models/g:generateContent?note={KEY_ID}",
                content=json.dumps({"contents": []}),
                trust_env=False,
                timeout=30,
            )
            assert refused.status_code == 403
            assert refused.json()["domestique"]["reasons"] == ["proxy.secret_in_path"]
            assert not up.received
            passed = httpx.post(
                f"{url}/v1beta/models/g:generateContent?key=AIzaSyDdev0key0for0tests0only0xx",
                content=json.dumps({"contents": []}),
                trust_env=False,
                timeout=30,
            )
        assert passed.status_code == 200, passed.text
        assert up.received[0].path.endswith("key=AIzaSyDdev0key0for0tests0only0xx")


@pytest.mark.xfail(strict=True, reason="open: a tool not pointed at the proxy is not seen at all")
def test_traffic_that_bypasses_the_proxy_is_not_seen(home: Path) -> None:
    """Cursor (requests built on Cursor's servers), a ChatGPT-login Codex, or a tool without
    the base URL setting talk to the provider directly: the firewall never sees the request and
    nothing is recorded. Only egress control on the network (not a local proxy) closes this."""
    import httpx

    from domestique.audit import AuditStore

    with run_upstream() as up:
        httpx.post(up.url + "/v1/messages", content=json.dumps(_user(KEY_ID)), trust_env=False)
        assert up.received  # the secret went straight to the "provider"
    store = AuditStore.open(home)
    try:
        assert store.count() > 0
    finally:
        store.close()


# -- blocked / mitigated -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f'{{"k": "\\u0041{KEY_ID[1:]}"}}', id="json-unicode-escape"),
        pytest.param(
            base64.b64encode(f"aws_access_key_id = {KEY_ID}".encode()).decode(), id="base64"
        ),
        pytest.param(KEY_ID.encode().hex(), id="hex"),
    ],
)
def test_escaped_and_encoded_text_is_decoded_and_redacted(home: Path, text: str) -> None:
    """mitigated: escapes, base64 and hex inside text fields are decoded by the detectors."""
    ins = _inspect(home, _user(f"here: {text}"))
    assert ins.action is Action.REDACT
    assert not _leaks(ins, text.encode())


def test_unsupported_content_encoding_is_blocked(home: Path) -> None:
    """blocked: a body in an encoding the firewall cannot read is never forwarded."""
    ins = _inspect(home, json.dumps(_user(KEY_ID)).encode(), encoding="compress")
    assert ins.blocked
    assert [r.code for r in ins.reasons] == ["proxy.unsupported_encoding"]


def test_duplicate_json_keys_cannot_hide_a_secret(home: Path) -> None:
    """blocked: the forwarded body is the re-serialised object that was scanned."""
    raw = (
        b'{"model":"m","messages":[{"role":"user","content":"'
        + KEY_ID.encode()
        + b'"}],"messages":[]}'
    )
    ins = _inspect(home, raw)
    assert not _leaks(ins)


def test_secret_inside_a_signature_is_blocked(home: Path) -> None:
    """blocked: a signature cannot be changed, and one that matches a detector is not a
    signature: the request is refused (proxy.secret_in_signed_part, not loosenable)."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "t", "signature": f"c2ln{KEY_ID}"}],
            }
        ],
    }
    ins = _inspect(home, body)
    assert ins.blocked
    assert [r.code for r in ins.reasons] == ["proxy.secret_in_signed_part"]


@pytest.mark.xfail(
    strict=True, reason="open: the model's replayed thinking passes unmodified (recorded)"
)
def test_secret_in_a_forged_thinking_block_is_forwarded(home: Path) -> None:
    """A client that writes a secret into a thinking block of its own reaches the provider:
    the model's signed output is passed unmodified (proxy.secret_in_model_output, recorded),
    and the provider only rejects the forged signature after receiving the text. A policy
    that sets proxy.secret_in_model_output to block closes it at the cost of sessions whose
    model wrote a finding in its thinking."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"the key is {KEY_ID}", "signature": "c2ln"}
                ],
            }
        ],
    }
    ins = _inspect(home, body)
    assert "proxy.secret_in_model_output" in [r.code for r in ins.reasons]
    assert not _leaks(ins)


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("POST", "/v1/files", {}),
        ("POST", "/v1/batches", {}),
        ("POST", "/v1/messages/batches", {}),
        ("GET", "/v1/responses", {"upgrade": "websocket"}),
        ("POST", "/upload/v1beta/files", {}),
    ],
)
def test_unscanned_routes_and_websockets_are_refused(
    method: str, path: str, headers: dict[str, str]
) -> None:
    """blocked: file uploads, batches and WebSockets are refused, never relayed unscanned."""
    assert isinstance(classify(method, path, headers), Refusal)


def test_secret_in_a_gemini_model_path_is_blocked(home: Path) -> None:
    """blocked: the model name in a Gemini path is scanned; a path cannot be redacted."""
    ins = _inspect(home, {"contents": []}, f"/v1beta/models/{KEY_ID}:generateContent")
    assert ins.blocked
    assert [r.code for r in ins.reasons] == ["proxy.secret_in_path"]


@pytest.mark.parametrize(
    ("path", "part"),
    [
        pytest.param("/v1/chat/completions", "openai", id="openai-file_data"),
        pytest.param("/v1beta/models/g:generateContent", "gemini", id="gemini-inlineData"),
    ],
)
def test_secret_in_a_base64_text_file_is_redacted(home: Path, path: str, part: str) -> None:
    """mitigated: a base64 part of a text type is decoded, scanned, redacted, re-encoded."""
    data = base64.b64encode(f"aws_access_key_id = {KEY_ID}\n".encode()).decode()
    if part == "openai":
        file = {"filename": "creds.txt", "file_data": f"data:text/plain;base64,{data}"}
        body: dict[str, Any] = {
            "model": "m",
            "messages": [{"role": "user", "content": [{"type": "file", "file": file}]}],
        }
    else:
        inline = {"inlineData": {"mimeType": "text/plain", "data": data}}
        body = {"contents": [{"role": "user", "parts": [inline]}]}
    ins = _inspect(home, body, path)
    assert ins.action is Action.REDACT
    assert ins.body is not None
    assert data.encode() not in ins.body
    sent = json.loads(ins.body)
    blob = (
        sent["messages"][0]["content"][0]["file"]["file_data"].split(",", 1)[1]
        if part == "openai"
        else sent["contents"][0]["parts"][0]["inlineData"]["data"]
    )
    text = base64.b64decode(blob).decode()
    assert text.startswith("aws_access_key_id = [REDACTED:aws_access_key_id:")


def test_secret_as_an_object_key_is_redacted(home: Path) -> None:
    """blocked: object keys that are not plain identifiers are scanned and redacted too."""
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t", "name": "x", "input": {KEY_ID: "value"}}
                ],
            }
        ],
    }
    ins = _inspect(home, body)
    assert ins.action is Action.REDACT
    assert not _leaks(ins)


def test_reason_import_is_used() -> None:
    """The reason type the policy receives is the records' Reason (contract check)."""
    assert Reason("x", "y").code == "x"
