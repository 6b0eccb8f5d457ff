"""The routes the SDKs and agent CLIs call, end to end through a real proxy and upstream.

Content routes (Responses compact and input_tokens, Gemini /v1, countTokens, embeddings, tuned
models) are scanned and redacted like the others; model listing and lookup are forwarded as
``GET`` without a body and recorded; the start-up probe ``HEAD /`` is answered here; a failing
upstream leaves a record that says so; every request prints one line without content.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from domestique.audit import AuditStore
from domestique.proxy.server import build_app, parse_upstreams

from .upstream import Upstream, run_asgi, run_upstream

C = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id
NAMES = ("anthropic", "openai", "gemini")


@pytest.fixture(scope="module")
def firewall(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, Upstream, Path, list[str]]]:
    home = tmp_path_factory.mktemp("fw-routes-home")
    lines: list[str] = []
    with run_upstream() as up:
        upstreams = parse_upstreams([f"{n}={up.url}" for n in NAMES])
        app = build_app(upstreams, home=home, log=lines.append)
        with run_asgi(app) as url:
            yield url, up, home, lines


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30, trust_env=False) as c:
        yield c


def _records(home: Path) -> list[Any]:
    store = AuditStore.open(home)
    try:
        return list(store.records())
    finally:
        store.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("path", "body", "route"),
    [
        (
            "/v1/responses/compact",
            {"model": "gpt-5", "input": [{"role": "user", "content": f"key {C}"}]},
            "openai.responses.compact",
        ),
        (
            "/v1/responses/input_tokens",
            {"model": "gpt-5", "input": f"key {C}"},
            "openai.responses.input_tokens",
        ),
        ("/v1/moderations", {"input": f"key {C}"}, "openai.moderations"),
        (
            "/v1/models/gemini-2.5-pro:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": f"key {C}"}]}]},
            "gemini.generate_content",
        ),
        (
            "/v1beta/models/gemini-2.5-pro:countTokens",
            {"contents": [{"role": "user", "parts": [{"text": f"key {C}"}]}]},
            "gemini.count_tokens",
        ),
        (
            "/v1/models/text-embedding-004:embedContent",
            {"content": {"parts": [{"text": f"key {C}"}]}},
            "gemini.embed_content",
        ),
        (
            "/v1beta/models/gemini-embedding-001:batchEmbedContents",
            {
                "requests": [
                    {
                        "model": "models/gemini-embedding-001",
                        "content": {"parts": [{"text": f"key {C}"}]},
                    }
                ]
            },
            "gemini.batch_embed_contents",
        ),
        (
            "/v1beta/tunedModels/my-model-1:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": f"key {C}"}]}]},
            "gemini.generate_content",
        ),
    ],
)
def test_new_content_routes_are_scanned_and_restored(
    firewall: tuple[str, Upstream, Path, list[str]],
    client: httpx.Client,
    path: str,
    body: dict[str, Any],
    route: str,
) -> None:
    """The secret is redacted on its way up, the answer's echo comes back restored."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.post(url + path, json=body, headers={"x-goog-api-key": "k"})
    assert resp.status_code == 200
    assert [r.path for r in up.received] == [path]
    assert C.encode() not in up.bodies()
    assert b"[REDACTED:" in up.bodies()
    assert C in resp.text
    last = _records(home)[-1]
    assert (last.action.value, last.object["route"]) == ("redact", route)


@pytest.mark.parametrize(
    ("path", "headers", "query", "route"),
    [
        ("/v1/models", {"authorization": "Bearer sk-dev"}, "", "openai.models"),
        ("/v1/models/gpt-5", {"authorization": "Bearer sk-dev"}, "", "openai.models"),
        (
            "/v1/models",
            {"x-api-key": "k", "anthropic-version": "2023-06-01"},
            "?limit=20",
            "anthropic.models",
        ),
        ("/v1beta/models", {"x-goog-api-key": "k"}, "?pageSize=50", "gemini.models"),
        ("/v1/models", {"x-goog-api-key": "k"}, "", "gemini.models"),
        ("/v1beta/models/gemini-2.5-pro", {"x-goog-api-key": "k"}, "", "gemini.models"),
    ],
)
def test_model_listing_is_forwarded_as_get_and_recorded(  # noqa: PLR0917 - parametrized
    firewall: tuple[str, Upstream, Path, list[str]],
    client: httpx.Client,
    path: str,
    headers: dict[str, str],
    query: str,
    route: str,
) -> None:
    """models.list() / models.get(): a GET with no body reaches the upstream, allow recorded."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.get(url + path + query, headers=headers)
    assert resp.status_code == 200
    assert resp.json() == {}
    assert [(r.method, r.path, r.body) for r in up.received] == [("GET", path + query, b"")]
    last = _records(home)[-1]
    assert (last.action.value, last.object["route"], last.codes) == ("allow", route, ())


def test_content_free_route_with_a_body_is_refused(
    firewall: tuple[str, Upstream, Path, list[str]], client: httpx.Client
) -> None:
    """A body where the route takes none cannot be judged as content: refused, not forwarded."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.request("GET", url + "/v1/models", content=json.dumps({"x": C}))
    assert resp.status_code == 400
    assert resp.json()["domestique"]["reasons"] == ["proxy.malformed_body"]
    assert up.received == []
    assert _records(home)[-1].action.value == "block"


def test_secret_in_a_model_lookup_path_is_blocked(
    firewall: tuple[str, Upstream, Path, list[str]], client: httpx.Client
) -> None:
    """The model named in a lookup path is scanned like Gemini's: a path cannot be redacted."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.get(url + f"/v1beta/models/{C}", headers={"x-goog-api-key": "k"})
    assert resp.status_code == 403
    assert "proxy.secret_in_path" in resp.json()["domestique"]["reasons"]
    assert up.received == []
    data = b"".join(p.read_bytes() for p in home.rglob("audit*") if p.is_file())
    assert C.encode() not in data


@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_start_up_probe_is_answered_and_not_a_stop(
    firewall: tuple[str, Upstream, Path, list[str]], client: httpx.Client, method: str
) -> None:
    """Claude Code's ``HEAD /``: 200 from the firewall, nothing forwarded, recorded as allow."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.request(method, url + "/", headers={"anthropic-version": "2023-06-01"})
    assert resp.status_code == 200
    assert up.received == []
    last = _records(home)[-1]
    assert last.action.value == "allow"
    assert not last.action.stops
    assert (last.object["route"], last.object["forwarded"]) == ("probe", False)


def test_unreachable_upstream_is_recorded_as_what_happened(
    tmp_path: Path, client: httpx.Client
) -> None:
    """The client gets 502 proxy.upstream_error, and the log says so: a block record with
    that code follows the decision to forward and is the record the answer names."""
    dead = f"http://127.0.0.1:{_free_port()}"
    app = build_app(parse_upstreams([f"anthropic={dead}"]), home=tmp_path)
    with run_asgi(app) as url:
        resp = client.post(
            url + "/v1/messages",
            json={"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": "k"},
        )
    assert resp.status_code == 502
    body = resp.json()
    assert body["domestique"]["reasons"] == ["proxy.upstream_error"]
    decision, outcome = _records(tmp_path)[-2:]
    assert decision.action.value == "allow"
    assert outcome.action.value == "block"
    assert outcome.codes == ("proxy.upstream_error",)
    assert outcome.object["follows"] == decision.id
    assert outcome.object["route"] == "anthropic.messages"
    assert body["domestique"]["record_id"] == outcome.id


def test_stream_broken_upstream_is_recorded(tmp_path: Path, client: httpx.Client) -> None:
    """An answer cut off mid-stream leaves a block record with proxy.upstream_error too."""
    with run_upstream() as up:
        up.break_after = 2
        up.one_char = False
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url:
            resp = client.post(
                url + "/v1/messages",
                json={
                    "model": "claude-x",
                    "stream": True,
                    "messages": [{"role": "user", "content": "hi"}],
                },
                headers={"x-api-key": "k"},
            )
    assert b"proxy.upstream_error" in resp.content
    decision, outcome = _records(tmp_path)[-2:]
    assert (decision.action.value, outcome.action.value) == ("allow", "block")
    assert outcome.codes == ("proxy.upstream_error",)
    assert outcome.object["follows"] == decision.id


def test_one_line_per_request_without_content(
    firewall: tuple[str, Upstream, Path, list[str]], client: httpx.Client
) -> None:
    """Each request prints one line: time, route, model, action, codes, fields, latency and
    status; never the secret it carried."""
    url, _, _, lines = firewall
    lines.clear()
    client.post(
        url + "/v1/messages",
        json={"model": "claude-x", "messages": [{"role": "user", "content": f"key {C}"}]},
        headers={"x-api-key": "k"},
    )
    client.get(url + "/v1/fine_tuning/jobs")
    client.get(url + f"/v1/x/{C}")
    deadline = time.monotonic() + 5
    while len(lines) < 3 and time.monotonic() < deadline:  # written once the answer is sent
        time.sleep(0.01)
    assert len(lines) == 3
    # Each line is written after its answer went out: take them by content, not by order.
    first = next(ln for ln in lines if "anthropic.messages" in ln)
    second = next(ln for ln in lines if "/v1/fine_tuning/jobs" in ln)
    third = next(ln for ln in lines if "/v1/x/" in ln)
    assert "anthropic.messages model=claude-x redact codes=secret.aws_access_key" in first
    assert "fields=" in first
    assert "judge=" in first
    assert first.endswith("status=200\n")
    assert "block codes=proxy.unknown_route" in second
    assert "status=404" in second
    assert all(C not in line for line in lines)
    assert all(line.count("\n") == 1 for line in lines)
    assert "/v1/x/AKIA…P4RN model=-" in third  # the path's secret segment masked


def test_model_names_are_recorded_as_sent_unless_they_hold_a_secret(
    firewall: tuple[str, Upstream, Path, list[str]], client: httpx.Client
) -> None:
    """A dated model name is recorded as it is; a secret sent as the model name is masked in
    the record (the body's copy is redacted like any field)."""
    url, up, home, _ = firewall
    for model in ("claude-sonnet-4-5-20250929", C):
        client.post(
            url + "/v1/messages",
            json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": "k"},
        )
    plain, secret = _records(home)[-2:]
    assert plain.object["model"] == "claude-sonnet-4-5-20250929"
    assert secret.object["model"] == "AKIA…P4RN"
    assert C.encode() not in up.bodies()
    data = b"".join(p.read_bytes() for p in home.rglob("audit*") if p.is_file())
    assert C.encode() not in data


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/v1/models", {"authorization": "Bearer sk-test"}),
        ("/v1/models", {"x-api-key": "k", "anthropic-version": "2023-06-01"}),
        ("/v1beta/models", {"x-goog-api-key": "k"}),
    ],
)
def test_secret_in_the_query_of_a_body_free_route_is_blocked(
    firewall: tuple[str, Upstream, Path, list[str]],
    client: httpx.Client,
    path: str,
    headers: dict[str, str],
) -> None:
    """A GET that carries no body is still judged on its query string and headers: a secret
    there is refused before anything is forwarded, and never stored raw."""
    url, up, home, _ = firewall
    up.received.clear()
    resp = client.get(url + path, params={"note": C}, headers=headers)
    assert resp.status_code == 403
    assert "proxy.secret_in_path" in resp.json()["domestique"]["reasons"]
    assert up.received == []
    refused = client.get(url + path, headers={**headers, "x-note": C})
    assert refused.status_code == 403
    assert "proxy.secret_in_header" in refused.json()["domestique"]["reasons"]
    assert up.received == []
    data = b"".join(p.read_bytes() for p in home.rglob("audit*") if p.is_file())
    assert C.encode() not in data
