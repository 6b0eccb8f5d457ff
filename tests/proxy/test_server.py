"""Wiring: upstream options, and an invalid policy that blocks every request."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from domestique.proxy.routes import Provider
from domestique.proxy.server import UpstreamError, build_app, parse_upstreams

from .upstream import run_asgi, run_upstream


def test_defaults_are_the_public_apis() -> None:
    """Without --upstream, each provider goes to its public API."""
    ups = parse_upstreams([])
    assert ups[Provider.ANTHROPIC] == "https://api.anthropic.com"
    assert ups[Provider.OPENAI] == "https://api.openai.com"
    assert ups[Provider.GEMINI] == "https://generativelanguage.googleapis.com"


def test_upstream_override() -> None:
    """NAME=URL replaces one provider's upstream; a trailing slash is dropped."""
    ups = parse_upstreams(["openai=http://127.0.0.1:9000/"])
    assert ups[Provider.OPENAI] == "http://127.0.0.1:9000"
    assert ups[Provider.ANTHROPIC] == "https://api.anthropic.com"


@pytest.mark.parametrize(
    "item",
    [
        "mistral=https://api.mistral.ai",
        "openai",
        "openai=ftp://x",
        "openai=http://user:pw@h",
        "openai=http://h/?x=1",
        "openai=",
    ],
)
def test_bad_upstreams_are_rejected(item: str) -> None:
    """Unknown names, non-http URLs, credentials or queries in the URL are refused."""
    with pytest.raises(UpstreamError):
        parse_upstreams([item])


def test_invalid_policy_blocks_every_request(tmp_path: Path) -> None:
    """A --policy file with a typo: the proxy runs, and every request is blocked."""
    bad = tmp_path / "bad.toml"
    bad.write_text('version = 1\n[[rules]]\nid = "x"\ncodes = ["secret.*"]\naction = "alow"\n')
    with run_upstream() as up:
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path, policy_file=bad)
        with run_asgi(app) as url:
            resp = httpx.post(
                url + "/v1/messages",
                content=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
                timeout=30,
            )
        assert resp.status_code in (403, 500)
        assert "policy.invalid" in resp.json()["domestique"]["reasons"]
        assert up.received == []
