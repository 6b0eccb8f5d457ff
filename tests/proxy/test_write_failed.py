"""A decision whose record cannot be written is answered 500 in the provider's error shape.

Whatever the request held (a secret to redact, nothing at all, a refused route), the firewall
refuses it when it cannot keep its log, and says so as a server failure with
``audit.write_failed`` first: a 403 would tell the agent its content was refused. The audit
store is real, made unwritable by putting a file where its folder should be.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from domestique.audit import mask_or_stop, record_decision, store_for
from domestique.proxy.app import FirewallApp, ProxyConfig
from domestique.proxy.audit_batch import GroupRecorder
from domestique.proxy.server import build_engine, parse_upstreams
from domestique.records import Action, DecisionRecord

from .upstream import run_asgi, run_upstream

KEY_ID = "AKIAZ3MHQX7B2LKWP4RN"  # made-up AWS access key id (redacted by the built-in policy)
ROUTES = {
    "anthropic": ("/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "X"}]}),
    "openai": (
        "/v1/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "X"}]},
    ),
    "gemini": ("/v1beta/models/g:generateContent", {"contents": [{"parts": [{"text": "X"}]}]}),
}


def _app(tmp_path: Path, provider: str, url: str, *, batch: bool) -> FirewallApp:
    broken = tmp_path / "home-is-a-file"
    broken.write_text("not a folder\n")

    def recorder(record: DecisionRecord) -> DecisionRecord:
        return record_decision(record, home=broken, stop=Action.BLOCK)

    def append_many(records: Any) -> object:
        return store_for(broken).append_many(records)

    def mask(record: DecisionRecord) -> tuple[DecisionRecord, bool]:
        return mask_or_stop(record, broken, stop=Action.BLOCK)

    group = GroupRecorder(append_many, mask, stop=Action.BLOCK) if batch else None
    engine = dataclasses.replace(build_engine(tmp_path), recorder=recorder, group=group)
    return FirewallApp(ProxyConfig(upstreams=parse_upstreams([f"{provider}={url}"])), engine)


def _assert_server_error(provider: str, resp: httpx.Response) -> None:
    assert resp.status_code == 500, resp.text
    err = resp.json()
    assert err["domestique"]["reasons"][0] == "audit.write_failed"
    assert "[audit.write_failed" in err["error"]["message"]
    if provider == "anthropic":
        assert err["type"] == "error"
        assert err["error"]["type"] == "api_error"
    elif provider == "openai":
        assert err["error"]["type"] == "server_error"
        assert err["error"]["code"] == "audit.write_failed"
    else:
        assert err["error"]["status"] == "INTERNAL"
        assert err["error"]["code"] == 500
    assert KEY_ID not in resp.text


@pytest.mark.parametrize("batch", [False, True], ids=["inline", "group-commit"])
@pytest.mark.parametrize("provider", sorted(ROUTES))
@pytest.mark.parametrize("content", [f"my key is {KEY_ID}", "hello"], ids=["secret", "clean"])
def test_an_unwritable_record_is_a_500_in_the_providers_shape(
    tmp_path: Path, provider: str, content: str, *, batch: bool
) -> None:
    path, body = ROUTES[provider]
    raw = json.dumps(body).replace('"X"', json.dumps(content))
    with run_upstream() as up:
        with (
            run_asgi(_app(tmp_path, provider, up.url, batch=batch)) as url,
            httpx.Client(trust_env=False, timeout=30) as client,
        ):
            resp = client.post(
                url + path, content=raw, headers={"content-type": "application/json"}
            )
        _assert_server_error(provider, resp)
        assert up.received == []


def test_a_refused_route_whose_record_fails_is_a_500(tmp_path: Path) -> None:
    """Refused before judging (an unknown route): still a server error when unrecorded."""
    with run_upstream() as up:
        with (
            run_asgi(_app(tmp_path, "openai", up.url, batch=False)) as url,
            httpx.Client(trust_env=False, timeout=30) as client,
        ):
            resp = client.post(url + "/v1/files", content=b"{}")
        _assert_server_error("openai", resp)
        assert "proxy.unknown_route" in resp.json()["domestique"]["reasons"]
        assert up.received == []
