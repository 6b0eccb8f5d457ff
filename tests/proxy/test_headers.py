"""Agents' own tracing and request-id headers pass; a secret in any header still blocks.

Real detection engine and built-in policy. The ids are drawn at random (seeded) many times:
a random 32-hex trace id beside "sentry" reads as a service credential, a random 19-digit
Datadog id passes the Luhn check about one time in ten, so a fixed sample would prove little.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import httpx
import pytest

from domestique.detect import default_scanner
from domestique.proxy.headers import scanned_value
from domestique.proxy.pipeline import RequestLine, request_line_findings
from domestique.proxy.routes import Provider, Route, classify
from domestique.proxy.server import build_app, parse_upstreams

from .conftest import BoundPolicy
from .upstream import run_asgi, run_upstream

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id (the detectors know the format)
GITHUB = "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"  # made-up GitHub token


def _tracing_headers(rng: random.Random) -> dict[str, str]:
    def hx(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(2 * n))

    def dec() -> str:
        return str(rng.getrandbits(63))

    def uid() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    trace, span = hx(16), hx(8)
    return {
        "sentry-trace": f"{trace}-{span}-0",
        "baggage": (
            f"sentry-environment=production,sentry-release=claude-code%402.1.197,"
            f"sentry-public_key={hx(16)},sentry-trace_id={trace},sentry-sample_rate=0.1,"
            f"sentry-sampled=false"
        ),
        "traceparent": f"00-{trace}-{span}-01",
        "tracestate": f"congo=t61rcWkgMzE,dd=s:1;o:rum;t.tid:{hx(8)}",
        "b3": f"{trace}-{span}-1",
        "x-b3-traceid": trace,
        "x-b3-spanid": span,
        "uber-trace-id": f"{trace}:{span}:0:1",
        "x-amzn-trace-id": f"Root=1-{hx(4)}-{hx(12)};Parent={span};Sampled=1",
        "x-cloud-trace-context": f"{trace}/{dec()};o=1",
        "x-datadog-trace-id": dec(),
        "x-datadog-parent-id": dec(),
        "x-datadog-tags": f"_dd.p.tid={span},_dd.p.dm=-1",
        "x-request-id": uid(),
        "x-client-request-id": uid(),
        "x-claude-code-session-id": uid(),
        "session_id": uid(),
        "conversation_id": uid(),
        "x-correlation-id": hx(16),
        "request-id": "req_" + "".join(rng.choice("ABCDEFGHabcdefgh0123456789") for _ in range(24)),
        "idempotency-key": f"stainless-python-retry-{uid()}",
        "openai-organization": "org-" + hx(12),
        "openai-project": "proj_" + hx(12),
        "x-stainless-retry-count": "0",
        "x-stainless-timeout": "600",
        "x-stainless-lang": "js",
        "x-stainless-package-version": "0.60.0",
        "x-stainless-os": "Linux",
        "x-stainless-arch": "x64",
        "x-stainless-runtime": "node",
        "x-stainless-runtime-version": "v22.1.0",
        "x-stainless-helper-method": "stream",
    }


def _route() -> Route:
    route = classify("POST", "/v1/messages", {})
    assert isinstance(route, Route)
    return route


def test_tracing_and_request_id_headers_are_not_findings(tmp_path: Path) -> None:
    """Five hundred draws of every tracing header the agents' SDKs send: no finding."""
    scanner, policy, rng = default_scanner(tmp_path), BoundPolicy(tmp_path), random.Random(12)
    found: set[str] = set()
    for _ in range(500):
        line = RequestLine("", tuple(_tracing_headers(rng).items()))
        found |= {ev.where for _, _, ev in request_line_findings(_route(), line, scanner, policy)}
    assert found == set()


def test_the_same_ids_read_whole_are_findings(tmp_path: Path) -> None:
    """Guard against a test that cannot fail: without the format rules, these draws hold
    findings (a trace id beside "sentry", a Luhn-valid Datadog id)."""
    scanner, rng = default_scanner(tmp_path), random.Random(12)
    hit: set[str] = set()
    for _ in range(100):
        for name, value in _tracing_headers(rng).items():
            if scanner.scan(f"{name}: {value}"):
                hit.add(name)
    assert {"sentry-trace", "x-datadog-trace-id"} <= hit


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("x-debug-note", KEY_ID),  # an unknown header
        ("traceparent", f"00-{KEY_ID}-01"),  # a trace header without its format
        ("sentry-trace", GITHUB),
        ("x-datadog-trace-id", f"{KEY_ID}"),
        ("x-request-id", GITHUB),  # an id header whose value is no id
        ("baggage", f"sentry-trace_id={'a' * 32},note={KEY_ID}"),  # an undocumented member
        ("baggage", f"sentry-public_key={GITHUB}"),  # a documented member, wrong format
        ("x-stainless-os", KEY_ID),
        ("x-stainless-package-version", GITHUB),
        # review: a word-shaped token, a hex session token, a secret in a member's properties
        ("x-stainless-lang", "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"),
        ("baggage", f"sentry-trace_id={'a' * 32};note={GITHUB}"),
    ],
)
def test_a_secret_in_any_header_still_blocks(tmp_path: Path, name: str, value: str) -> None:
    """A value without its header's documented format is scanned whole."""
    assert scanned_value(name, value) != ""
    line = RequestLine("", ((name, value),))
    items = request_line_findings(_route(), line, default_scanner(tmp_path), BoundPolicy(tmp_path))
    assert "proxy.secret_in_header" in [code for code, _, _ in items]


def test_agent_headers_pass_through_the_firewall(tmp_path: Path) -> None:
    """Through the real app to a real upstream: requests carrying the tracing headers are
    forwarded with the headers unchanged; one more header holding a key is refused."""
    rng = random.Random(7)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with run_upstream() as up:
        app = build_app(parse_upstreams([f"{Provider.ANTHROPIC.value}={up.url}"]), home=tmp_path)
        with run_asgi(app) as url, httpx.Client(trust_env=False, timeout=30) as client:
            for _ in range(20):
                headers = _tracing_headers(rng)
                resp = client.post(url + "/v1/messages", content=body, headers=headers)
                assert resp.status_code == 200, resp.text
                got = {k.lower(): v for k, v in up.received[-1].headers.items()}
                assert all(got[k] == v for k, v in headers.items())
            sent = len(up.received)
            headers["x-debug-note"] = KEY_ID
            refused = client.post(url + "/v1/messages", content=body, headers=headers)
            assert refused.status_code == 403
            assert refused.json()["domestique"]["reasons"] == ["proxy.secret_in_header"]
            assert len(up.received) == sent


def test_a_hex_session_id_is_scanned_not_trusted() -> None:
    """Review: bare hex passes only in tracing id headers; a hex session id is a bearer token,
    so it is handed to the detectors (a UUID or a prefixed id still passes)."""
    hex64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    assert scanned_value("x-session-id", hex64) == hex64
    assert scanned_value("x-request-id", "ab" * 16) == ""
    assert scanned_value("x-claude-code-session-id", "123e4567-e89b-12d3-a456-426614174000") == ""
