"""Real agent request shapes through the real firewall app and a real local upstream.

Issue 19: shapes the official agent CLIs send that the hand-written matrix never tried.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from domestique.proxy.server import build_app, parse_upstreams

from . import providers
from .upstream import Upstream, run_asgi, run_upstream

C = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: the canary
HEADERS = {"authorization": "Bearer sk-dev-key-not-a-real-one", "content-type": "application/json"}


@pytest.fixture(scope="module")
def firewall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Upstream, Path]]:
    home = tmp_path_factory.mktemp("fw-home")
    with run_upstream() as up:
        upstreams = parse_upstreams([f"{n}={up.url}" for n in ("anthropic", "openai", "gemini")])
        with run_asgi(build_app(upstreams, home=home)) as url:
            yield url, up, home


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(timeout=30, trust_env=False, transport=nodelay) as c:
        yield c


def _post(client: httpx.Client, url: str, path: str, body: dict[str, object]) -> httpx.Response:
    return client.post(url + path, content=json.dumps(body).encode(), headers=HEADERS)


CODEX_TOOLS = [
    {
        "type": "function",
        "name": "shell",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"}},
                # A property named "type": the schema object under it crashed the walker.
                "type": {"type": "string", "enum": ["exec", "view"]},
            },
            "required": ["command"],
        },
    },
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark"}},
]


@pytest.mark.parametrize("stream", [False, True])
def test_codex_tool_schemas_pass_and_answers_are_restored(
    firewall: tuple[str, Upstream, Path], client: httpx.Client, stream: bool
) -> None:
    """Issue 19.1: a Responses request whose tool schema has a property named ``type`` is
    scanned and forwarded (not an engine.internal_error); the answer, which echoes those tools
    like the real API, is restored (not a 500)."""
    url, up, _ = firewall
    up.received.clear()
    body = {"model": "gpt-x", "stream": stream, "input": f"key {C}", "tools": CODEX_TOOLS}
    resp = _post(client, url, "/v1/responses", body)
    assert resp.status_code == 200, resp.text
    assert resp.headers["x-domestique-action"] == "redact"
    sent = json.loads(up.received[0].body)
    assert sent["tools"] == CODEX_TOOLS
    assert C.encode() not in up.bodies()
    if stream:
        text, _ = providers.responses_collect(resp.content)
        assert text == f"I saw: {C}"
        assert f'"tools":{json.dumps(CODEX_TOOLS, separators=(",", ":"))}' in resp.text
    else:
        answer = resp.json()
        assert answer["output"][0]["content"][0]["text"] == f"I saw: {C}"
        assert answer["tools"] == CODEX_TOOLS
