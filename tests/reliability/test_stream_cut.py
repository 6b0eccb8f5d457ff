"""An upstream that cuts a streamed answer short: the agent is told, and the log says so.

The cut stream is close-delimited, so to an HTTP client it ends like a finished one; before
this was fixed the agent received it as a clean, complete answer. Now the firewall notices the
missing terminal event, ends the stream with the provider's own error event (which the official
SDKs raise on), and records a ``block`` with ``proxy.upstream_error`` following the decision.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from domestique.audit import AuditStore
from domestique.proxy.app import FirewallApp, ProxyConfig
from domestique.proxy.server import build_app, build_engine, parse_upstreams
from proxy.upstream import run_asgi

from .cutting import Cutter, run_cutter

SECRET = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: redacted, so the answer is restored
NAMES = ("anthropic", "openai", "gemini")

CASES = [
    ("/v1/messages", b'event: error\ndata: {"type":"error"'),
    ("/v1/chat/completions", b'data: {"error":{"message":"domestique: the upstream'),
    ("/v1/responses", b'event: error\ndata: {"type":"error"'),
    ("/v1beta/models/m:streamGenerateContent?alt=sse", b'data: {"error":{"code":502'),
]


def _body(path: str, text: str) -> dict[str, Any]:
    if path.startswith("/v1beta"):
        return {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    if path == "/v1/responses":
        return {"model": "m", "stream": True, "input": text}
    return {
        "model": "m",
        "stream": True,
        "max_tokens": 9,
        "messages": [{"role": "user", "content": text}],
    }


def _records(home: Path, at_least: int = 1) -> list[Any]:
    """The records, waiting a little for ``at_least``: the outcome record is written after the
    client's stream has ended (the decision record was written before anything was sent)."""
    deadline = time.monotonic() + 5
    while True:
        store = AuditStore.open(home)
        try:
            records = list(store.records())
        finally:
            store.close()
        if len(records) >= at_least or time.monotonic() > deadline:
            return records
        time.sleep(0.02)


@pytest.fixture
def cut_firewall(tmp_path: Path) -> Iterator[tuple[str, Cutter, Path]]:
    with run_cutter(keep=2) as up:
        app = build_app(parse_upstreams([f"{n}={up.url}" for n in NAMES]), home=tmp_path)
        with run_asgi(app) as url:
            yield url, up, tmp_path


@pytest.mark.parametrize("secret", [False, True], ids=["framed", "restored"])
@pytest.mark.parametrize(("path", "expect"), CASES, ids=[c[0].split("/")[2] for c in CASES])
def test_a_cut_stream_ends_with_the_providers_error_and_a_record(
    cut_firewall: tuple[str, Cutter, Path], path: str, expect: bytes, secret: bool
) -> None:
    url, _, home = cut_firewall
    text = f"deploy with {SECRET}" if secret else "hello"
    headers = {"x-api-key": "k", "authorization": "Bearer k", "x-goog-api-key": "k"}
    with httpx.Client(timeout=30, trust_env=False) as client:
        resp = client.post(url + path, json=_body(path, text), headers=headers)
    assert resp.status_code == 200
    raw = resp.content
    assert raw.count(expect) == 1, raw
    *events, last = [e for e in raw.split(b"\n\n") if e]
    assert expect in last
    assert b"proxy.upstream_error" in last
    assert b"no terminal event" in last
    for ev in events:  # the events before the error are whole
        for line in ev.split(b"\n"):
            if line.startswith(b"data:"):
                assert json.loads(line[5:]) is not None
    decision, outcome = _records(home, 2)[-2:]
    assert decision.action.value == ("redact" if secret else "allow")
    assert outcome.action.value == "block"
    assert outcome.codes == ("proxy.upstream_error",)
    assert outcome.object["follows"] == decision.id


@pytest.mark.parametrize("path", [c[0] for c in CASES], ids=[c[0].split("/")[2] for c in CASES])
def test_a_whole_close_delimited_stream_is_not_called_cut(tmp_path: Path, path: str) -> None:
    """The same close-delimited framing with the terminal event: relayed as it came, no error."""
    with run_cutter(keep=None) as up:
        app = build_app(parse_upstreams([f"{n}={up.url}" for n in NAMES]), home=tmp_path)
        with run_asgi(app) as url, httpx.Client(timeout=30, trust_env=False) as client:
            resp = client.post(url + path, json=_body(path, "hello"), headers={"x-api-key": "k"})
    assert resp.status_code == 200
    assert b"proxy.upstream_error" not in resp.content
    assert [r.action.value for r in _records(tmp_path)] == ["allow"]


def test_a_reset_mid_stream_is_an_error_too(tmp_path: Path) -> None:
    """An RST instead of a FIN after two events: the same error event and record."""
    with run_cutter(keep=2, reset=True) as up:
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url, httpx.Client(timeout=30, trust_env=False) as client:
            resp = client.post(url + CASES[0][0], json=_body(CASES[0][0], "hi"))
    assert b"proxy.upstream_error" in resp.content
    assert [r.action.value for r in _records(tmp_path, 2)] == ["allow", "block"]


def _drain(events: Any) -> None:
    for _ in events:
        pass


def test_the_anthropic_sdk_raises_on_a_cut_stream(
    cut_firewall: tuple[str, Cutter, Path],
) -> None:
    url, _, _ = cut_firewall
    prompt: Any = [{"role": "user", "content": "hi"}]
    with anthropic.Anthropic(base_url=url, api_key="k", max_retries=0) as client:
        stream = client.messages.create(model="m", max_tokens=9, messages=prompt, stream=True)
        with pytest.raises(anthropic.APIStatusError, match=r"proxy\.upstream_error"):
            _drain(stream)


def test_the_openai_sdk_raises_on_a_cut_chat_stream(
    cut_firewall: tuple[str, Cutter, Path],
) -> None:
    url, _, _ = cut_firewall
    prompt: Any = [{"role": "user", "content": "hi"}]
    with openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as client:
        stream = client.chat.completions.create(model="m", stream=True, messages=prompt)
        with pytest.raises(openai.APIError, match=r"proxy\.upstream_error"):
            _drain(stream)


def test_the_openai_sdk_ends_a_cut_responses_stream_with_its_error_event(
    cut_firewall: tuple[str, Cutter, Path],
) -> None:
    """The SDK hands a Responses ``error`` event to the caller as its typed error event (the
    same as for an error OpenAI itself sends mid-stream), never a ``response.completed``."""
    url, _, _ = cut_firewall
    with openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as client:
        events = list(client.responses.create(model="m", stream=True, input="hi"))
    assert events[-1].type == "error"
    assert "proxy.upstream_error" in events[-1].message
    assert all(e.type != "response.completed" for e in events)


def test_an_upstream_that_hangs_mid_stream_times_out_into_the_error_event(tmp_path: Path) -> None:
    """Two events, then silence: the read timeout (0.5 s here, 600 s by default) ends the
    stream with the provider's error event and the record, instead of holding the agent."""
    with run_cutter(keep=2, hang_s=3) as up:
        config = ProxyConfig(
            upstreams=dict(parse_upstreams([f"openai={up.url}"])), read_timeout_s=0.5
        )
        app = FirewallApp(config, build_engine(tmp_path, None))
        with run_asgi(app) as url, httpx.Client(timeout=30, trust_env=False) as client:
            t0 = time.monotonic()
            resp = client.post(
                url + "/v1/chat/completions", json=_body("/v1/chat/completions", "hi")
            )
            elapsed = time.monotonic() - t0
    assert elapsed < 2.8
    last = [e for e in resp.content.split(b"\n\n") if e][-1]
    assert b'"error"' in last
    assert b"proxy.upstream_error" in last
    assert [r.action.value for r in _records(tmp_path, 2)] == ["allow", "block"]


def test_an_upstream_answering_garbage_as_a_stream_is_an_error(tmp_path: Path) -> None:
    """Bytes that are no SSE at all hold no terminal event: the agent gets the error event."""
    with run_cutter(keep=None, garbage=b"\x00\xffnot an event stream\r\n") as up:
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url, httpx.Client(timeout=30, trust_env=False) as client:
            resp = client.post(url + "/v1/messages", json=_body("/v1/messages", "hi"))
    assert b"event: error" in resp.content
    assert b"proxy.upstream_error" in resp.content
    assert [r.action.value for r in _records(tmp_path, 2)] == ["allow", "block"]
