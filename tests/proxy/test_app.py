"""The firewall end to end: a real proxy (uvicorn) in front of a real local upstream.

The matrix test puts a canary secret in every text-bearing position of every route, under
every content encoding, and checks that it never reaches the upstream and that the answer
comes back restored. Unknown routes, methods, upgrades and unreadable bodies never reach the
upstream at all. Every request leaves a decision record in the (real, SQLite) audit store.
"""

from __future__ import annotations

import gzip
import json
import re
import socket
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import brotli
import httpx
import pytest
import zstandard

from domestique.audit import AuditStore
from domestique.proxy.server import build_app, parse_upstreams

from . import providers
from .upstream import Upstream, run_asgi, run_upstream

C = "AKIAZ3MHQX7B2LKWP4RN"  # an AWS access key id: the canary
C2 = "glpat-Zx8Kq2Lm4Np6Rt8Vw0Yb"  # a GitLab token, for a second finding type
HEADERS = {"x-api-key": "sk-dev-key-not-a-real-one", "anthropic-version": "2023-06-01"}

ENCODINGS: dict[str, Callable[[bytes], bytes]] = {
    "identity": lambda b: b,
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
}

ANTHROPIC_POSITIONS: dict[str, dict[str, Any]] = {
    "system_string": {
        "system": f"You are helpful. {C}",
        "messages": [{"role": "user", "content": "hi"}],
    },
    "system_blocks": {
        "system": [{"type": "text", "text": C}],
        "messages": [{"role": "user", "content": "hi"}],
    },
    "user_string": {"messages": [{"role": "user", "content": f"my key is {C}"}]},
    "user_text_block": {"messages": [{"role": "user", "content": [{"type": "text", "text": C}]}]},
    "tool_result_string": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": f"cat .env\nAWS_ACCESS_KEY_ID={C}\n",
                    }
                ],
            }
        ]
    },
    "tool_result_blocks": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": C}],
                    }
                ],
            }
        ]
    },
    "tool_use_input": {
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": f"aws configure set key {C}", "env": {"K": [C]}},
                    }
                ],
            }
        ]
    },
    "document_text": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": C},
                        "title": "t",
                    }
                ],
            }
        ]
    },
    "document_content": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "content", "content": [{"type": "text", "text": C}]},
                        "context": "c",
                    }
                ],
            }
        ]
    },
    "search_result": {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "search_result",
                        "source": "s",
                        "title": "t",
                        "content": [{"type": "text", "text": C}],
                    }
                ],
            }
        ]
    },
    "tool_description": {
        "tools": [{"name": "x", "description": f"uses {C}", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "hi"}],
    },
    "tool_schema": {
        "tools": [
            {"name": "x", "input_schema": {"type": "object", "properties": {"k": {"default": C}}}}
        ],
        "messages": [{"role": "user", "content": "hi"}],
    },
    "unknown_block": {
        "messages": [
            {"role": "user", "content": [{"type": "future_block", "payload": {"deep": [C]}}]}
        ]
    },
    "metadata": {"metadata": {"user_id": C}, "messages": [{"role": "user", "content": "hi"}]},
}
CHAT_POSITIONS: dict[str, dict[str, Any]] = {
    "system": {"messages": [{"role": "system", "content": C}]},
    "developer_parts": {
        "messages": [{"role": "developer", "content": [{"type": "text", "text": C}]}]
    },
    "user_parts": {"messages": [{"role": "user", "content": [{"type": "text", "text": C}]}]},
    "assistant_content": {"messages": [{"role": "assistant", "content": C}]},
    "tool_call_arguments": {
        "messages": [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "sh",
                            "arguments": json.dumps({"cmd": f"export K={C}"}),
                        },
                    }
                ],
            }
        ]
    },
    "legacy_function_call": {
        "messages": [
            {"role": "assistant", "function_call": {"name": "f", "arguments": json.dumps({"k": C})}}
        ]
    },
    "custom_tool_input": {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "custom", "custom": {"name": "x", "input": C}}],
            }
        ]
    },
    "tool_message": {
        "messages": [{"role": "tool", "tool_call_id": "c1", "content": f"output: {C}"}]
    },
    "tool_definition": {
        "messages": [],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "description": C, "parameters": {"type": "object"}},
            }
        ],
    },
}
RESPONSES_POSITIONS: dict[str, dict[str, Any]] = {
    "instructions": {"instructions": C, "input": "hi"},
    "input_string": {"input": f"key {C}"},
    "input_text": {
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": C}]}
        ]
    },
    "function_call_arguments": {
        "input": [
            {
                "type": "function_call",
                "call_id": "c",
                "name": "sh",
                "arguments": json.dumps({"cmd": C}),
            }
        ]
    },
    "function_call_output": {
        "input": [{"type": "function_call_output", "call_id": "c", "output": C}]
    },
    "custom_tool_call": {
        "input": [{"type": "custom_tool_call", "call_id": "c", "name": "x", "input": C}]
    },
    "local_shell_env": {
        "input": [
            {
                "type": "local_shell_call",
                "call_id": "c",
                "action": {"type": "exec", "command": ["env"], "env": {"AWS_ACCESS_KEY_ID": C}},
            }
        ]
    },
    "apply_patch": {
        "input": [
            {
                "type": "apply_patch_call",
                "call_id": "c",
                "operation": {"type": "create_file", "path": "a", "diff": f"+key={C}"},
            }
        ]
    },
    "mcp_call": {
        "input": [
            {
                "type": "mcp_call",
                "id": "m",
                "name": "q",
                "server_label": "s",
                "arguments": json.dumps({"q": C}),
                "output": C,
            }
        ]
    },
    "unknown_item": {"input": [{"type": "future_item", "blob": {"x": C}}]},
    "tool_description": {
        "input": "hi",
        "tools": [{"type": "function", "name": "f", "description": C, "parameters": {}}],
    },
}
GEMINI_POSITIONS: dict[str, dict[str, Any]] = {
    "system_instruction": {
        "systemInstruction": {"parts": [{"text": C}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    },
    "parts_text": {"contents": [{"role": "user", "parts": [{"text": C}]}]},
    "function_call_args": {
        "contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "sh", "args": {"cmd": C}}}]}
        ]
    },
    "function_response": {
        "contents": [
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "sh", "response": {"output": C}}}],
            }
        ]
    },
    "tool_declaration": {
        "contents": [],
        "tools": [{"functionDeclarations": [{"name": "f", "description": C}]}],
    },
}

ROUTES: dict[str, tuple[str, dict[str, dict[str, Any]], dict[str, Any]]] = {
    "/v1/messages": ("anthropic", ANTHROPIC_POSITIONS, {"model": "claude-x", "max_tokens": 16}),
    "/v1/messages/count_tokens": ("anthropic", ANTHROPIC_POSITIONS, {"model": "claude-x"}),
    "/v1/chat/completions": ("openai", CHAT_POSITIONS, {"model": "gpt-x"}),
    "/v1/responses": ("openai", RESPONSES_POSITIONS, {"model": "gpt-x"}),
    "/v1/completions": (
        "openai",
        {"prompt": {"prompt": C}, "prompt_list": {"prompt": ["a", C]}},
        {"model": "gpt-x"},
    ),
    "/v1/embeddings": (
        "openai",
        {"input": {"input": C}, "input_list": {"input": ["a", C]}},
        {"model": "e"},
    ),
    "/v1beta/models/gemini-x:generateContent": ("gemini", GEMINI_POSITIONS, {}),
    "/v1beta/models/gemini-x:streamGenerateContent": ("gemini", GEMINI_POSITIONS, {}),
}
CASES = [(route, pos) for route, (_, positions, _) in ROUTES.items() for pos in positions]


@pytest.fixture(scope="module")
def firewall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Upstream, Path]]:
    home = tmp_path_factory.mktemp("fw-home")
    with run_upstream() as up:
        upstreams = parse_upstreams([f"{n}={up.url}" for n in ("anthropic", "openai", "gemini")])
        app = build_app(upstreams, home=home)
        with run_asgi(app) as url:
            yield url, up, home


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(timeout=30, trust_env=False, transport=nodelay) as c:
        yield c


def _post(
    client: httpx.Client,
    url: str,
    path: str,
    body: dict[str, Any] | bytes,
    encoding: str = "identity",
    **headers: str,
) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    hdrs = {**HEADERS, "content-type": "application/json", **headers}
    if encoding != "identity":
        raw = ENCODINGS[encoding](raw)
        hdrs["content-encoding"] = encoding
    return client.post(url + path, content=raw, headers=hdrs)


@pytest.mark.parametrize(("route", "position"), CASES, ids=[f"{r}|{p}" for r, p in CASES])
def test_canary_never_reaches_the_upstream(
    firewall: tuple[str, Upstream, Path], client: httpx.Client, route: str, position: str
) -> None:
    """In every position of every route, under every encoding: redacted, then restored."""
    url, up, _ = firewall
    _, positions, base = ROUTES[route]
    body = {**base, **positions[position]}
    for encoding in ENCODINGS:
        up.received.clear()
        resp = _post(client, url, route, body, encoding)
        assert resp.status_code == 200, resp.text
        assert resp.headers["x-domestique-action"] == "redact"
        assert len(up.received) == 1
        assert C.encode() not in up.bodies()
        assert b"[REDACTED:aws_access_key_id:" in up.bodies()
        if route != "/v1/messages/count_tokens":
            assert C in resp.text  # the upstream echoed the placeholder; it came back restored


def test_stream_answers_are_restored_per_provider(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """Streamed answers, one character per event, come back with the secret restored."""
    url, _, _ = firewall
    cases = [
        (
            "/v1/messages",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": C}]},
            providers.anthropic_collect,
        ),
        (
            "/v1/chat/completions",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": C}]},
            providers.chat_collect,
        ),
        ("/v1/responses", {"model": "m", "stream": True, "input": C}, providers.responses_collect),
        (
            "/v1beta/models/g:streamGenerateContent?alt=sse",
            {"contents": [{"parts": [{"text": C}]}]},
            providers.gemini_collect,
        ),
    ]
    for path, body, collect in cases:
        resp = _post(client, url, path, body)
        assert resp.status_code == 200
        assert "text/event-stream" in resp.headers["content-type"]
        text, args = collect(resp.content)
        assert text == f"I saw: {C}", path
        assert json.loads(args) == {"command": f"echo {C}"}, path


def test_placeholders_are_identical_across_requests(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """The same secret in two requests reaches the upstream as the same placeholder."""
    url, up, _ = firewall
    seen = []
    for _ in range(2):
        up.received.clear()
        _post(
            client,
            url,
            "/v1/messages",
            {"model": "m", "messages": [{"role": "user", "content": f"{C} {C2}"}]},
        )
        seen.append(json.loads(up.received[0].body)["messages"][0]["content"])
    assert seen[0] == seen[1]
    assert seen[0].count("[REDACTED:") == 2


def test_developer_key_and_provider_headers_pass_through(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """x-api-key, authorization, x-goog-api-key, anthropic-beta pass unchanged; query too."""
    url, up, home = firewall
    up.received.clear()
    _post(
        client,
        url,
        "/v1/messages",
        {"model": "m", "messages": []},
        **{"anthropic-beta": "b-1", "authorization": "Bearer tok-1"},
    )
    _post(
        client,
        url,
        "/v1beta/models/g:generateContent?key=qk-1",
        {"contents": []},
        **{"x-goog-api-key": "gk-1"},
    )
    first, second = up.received
    assert first.headers["x-api-key"] == HEADERS["x-api-key"]
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert (first.headers["anthropic-beta"], first.headers["authorization"]) == (
        "b-1",
        "Bearer tok-1",
    )
    assert second.headers["x-goog-api-key"] == "gk-1"
    assert second.path.endswith("?key=qk-1")
    # The keys are never stored: not in the audit store, not in the vault.
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"sk-dev-key" not in data
            assert b"tok-1" not in data
            assert b"qk-1" not in data


@pytest.mark.parametrize(
    ("method", "path", "headers", "status", "shape"),
    [
        ("GET", "/v1/fine_tuning/jobs", {}, 404, "openai"),
        ("POST", "/v1/files", {}, 404, "openai"),
        ("GET", "/v1/messages", {}, 405, "anthropic"),
        ("POST", "/v1/messages/batches", {}, 404, "anthropic"),
        ("POST", "/v1beta/models/g:predict", {}, 404, "gemini"),
        ("POST", "/v1/models", {}, 405, "openai"),
        ("POST", "/v1/%6Dessages", {}, 404, "openai"),
        (
            "GET",
            "/v1/responses",
            {
                "upgrade": "websocket",
                "connection": "Upgrade",
                "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
                "sec-websocket-version": "13",
            },
            404,
            "openai",
        ),
    ],
)
def test_unknown_routes_are_refused_and_never_forwarded(  # noqa: PLR0917 - parametrized
    firewall: tuple[str, Upstream, Path],
    client: httpx.Client,
    method: str,
    path: str,
    headers: dict[str, str],
    status: int,
    shape: str,
) -> None:
    """Other routes, methods and upgrades: refused in the provider's shape, nothing forwarded."""
    url, up, _ = firewall
    up.received.clear()
    resp = client.request(
        method,
        url + path,
        headers=headers,
        content=json.dumps({"x": C}) if method == "POST" else None,
    )
    assert resp.status_code == status
    body = resp.json()
    if shape == "anthropic":
        assert body["type"] == "error"
    elif shape == "gemini":
        assert body["error"]["status"] == "NOT_FOUND"
    else:
        assert body["error"]["code"] == "proxy.unknown_route"
    assert body["domestique"]["reasons"] == ["proxy.unknown_route"]
    assert up.received == []


@pytest.mark.parametrize(
    ("raw", "headers", "code"),
    [
        (
            b'{"model": "m", "messages": [{"role": "user", "content": "' + C.encode(),
            {},
            "proxy.truncated_body",
        ),
        (b"{not json " + C.encode(), {}, "proxy.malformed_body"),
        (
            b'{"model": "m", "messages": ' + b"[" * 200 + b"]" * 200 + b"}",
            {},
            "proxy.nesting_too_deep",
        ),
        (b'{"messages": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}", {}, "proxy.nesting_too_deep"),
        (b"\x1f\x8b" + C.encode(), {"content-encoding": "gzip"}, "proxy.malformed_body"),
        (C.encode(), {"content-encoding": "compress"}, "proxy.unsupported_encoding"),
        (
            gzip.compress(b'{"messages": "' + C.encode() + b'"}')[:-12],
            {"content-encoding": "gzip"},
            "proxy.truncated_body",
        ),
        (
            zstandard.ZstdCompressor().compress(b"{" + b" " * 70_000_000 + b"}"),
            {"content-encoding": "zstd"},
            "proxy.decompression_limit",
        ),
    ],
)
def test_unreadable_bodies_never_reach_the_upstream(
    firewall: tuple[str, Upstream, Path],
    client: httpx.Client,
    raw: bytes,
    headers: dict[str, str],
    code: str,
) -> None:
    """Truncated, malformed, deeply nested, unknown-encoded and bomb bodies: blocked, own code."""
    url, up, _ = firewall
    up.received.clear()
    resp = client.post(url + "/v1/messages", content=raw, headers={**HEADERS, **headers})
    assert resp.status_code in (400, 413)
    assert code in resp.json()["domestique"]["reasons"]
    assert up.received == []


def test_oversized_body_is_refused(tmp_path: Path, client: httpx.Client) -> None:
    """A body over the size limit is refused with 413 and never forwarded."""
    from domestique.proxy.app import FirewallApp, ProxyConfig
    from domestique.proxy.body import BodyLimits
    from domestique.proxy.server import build_engine

    with run_upstream() as up:
        config = ProxyConfig(
            upstreams=parse_upstreams([f"anthropic={up.url}"]), limits=BodyLimits(max_body=1000)
        )
        with run_asgi(FirewallApp(config, build_engine(tmp_path))) as url:
            resp = _post(
                client, url, "/v1/messages", {"messages": [{"role": "user", "content": "x" * 5000}]}
            )
        assert resp.status_code == 413
        assert resp.json()["domestique"]["reasons"] == ["proxy.body_too_large"]
        assert up.received == []


def test_customer_record_policy_block_is_explained(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """A secret in a thinking block's signature blocks with its own code, in Anthropic's shape."""
    url, up, _ = firewall
    up.received.clear()
    body = {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hmm", "signature": f"s {C}"}],
            }
        ],
    }
    resp = _post(client, url, "/v1/messages", body)
    assert resp.status_code == 403
    err = resp.json()
    assert err["error"]["type"] == "permission_error"
    assert "proxy.secret_in_signed_part" in err["error"]["message"]
    assert C not in resp.text  # the explanation shows a masked preview only
    assert up.received == []


def test_every_request_is_recorded(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """Allowed, redacted and refused requests each leave a decision record, no raw secret."""
    url, _, home = firewall
    _post(
        client,
        url,
        "/v1/messages",
        {"model": "claude-x", "messages": [{"role": "user", "content": "clean"}]},
    )
    _post(
        client,
        url,
        "/v1/messages",
        {"model": "claude-x", "messages": [{"role": "user", "content": C}]},
    )
    client.get(url + "/v1/files")
    data = b"".join(p.read_bytes() for p in home.rglob("audit*") if p.is_file())
    assert C.encode() not in data
    store = AuditStore.open(home)
    try:
        records = list(store.records())
    finally:
        store.close()
    last = records[-3:]
    assert [r.action.value for r in last] == ["allow", "redact", "block"]
    assert last[1].object["fields_scanned"] == 3
    assert last[1].object["model"] == "claude-x"
    assert last[1].reasons[0].evidence[0].fingerprint.startswith("hmac-sha256:")
    assert last[2].codes == ("proxy.unknown_route",)


def test_gzip_answers_are_decoded_and_restored(tmp_path: Path, client: httpx.Client) -> None:
    """A compressed answer from the upstream is decoded before restoring."""
    with run_upstream() as up:
        up.gzip_answers = True
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url:
            resp = _post(
                client,
                url,
                "/v1/messages",
                {"model": "m", "messages": [{"role": "user", "content": C}]},
            )
    assert resp.status_code == 200
    assert resp.json()["content"][0]["text"] == f"I saw: {C}"


def test_unreachable_upstream_is_a_502_in_the_providers_shape(
    tmp_path: Path, client: httpx.Client
) -> None:
    """A dead upstream answers 502 with proxy.upstream_error; the request was still recorded."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()
    app = build_app(parse_upstreams([f"openai=http://127.0.0.1:{dead}"]), home=tmp_path)
    with run_asgi(app) as url:
        resp = _post(client, url, "/v1/chat/completions", {"model": "m", "messages": []})
    assert resp.status_code == 502
    assert resp.json()["error"]["code"] == "proxy.upstream_error"


def test_previous_response_id_restores_from_the_vault(
    firewall: tuple[str, Upstream, Path], client: httpx.Client
) -> None:
    """A placeholder from an earlier turn is restored via the vault when only the id is sent."""
    url, up, _ = firewall
    first = _post(client, url, "/v1/responses", {"model": "m", "input": C})
    assert C in first.text
    # Second turn: the secret is not resent; the upstream echoes the old placeholder anyway.
    ph = json.loads(up.received[-1].body)["input"]
    up.received.clear()
    resp = _post(
        client,
        url,
        "/v1/responses",
        {"model": "m", "previous_response_id": "resp_1", "input": f"again {ph}"},
    )
    assert C in resp.text
    assert C.encode() not in up.bodies()


def _engine_app(tmp_path: Path, up: Upstream, **changes: Any) -> Any:
    import dataclasses

    from domestique.proxy.app import FirewallApp, ProxyConfig
    from domestique.proxy.server import build_engine

    engine = dataclasses.replace(build_engine(tmp_path), **changes)
    return FirewallApp(ProxyConfig(upstreams=parse_upstreams([f"anthropic={up.url}"])), engine)


def test_a_crashing_scanner_blocks(tmp_path: Path, client: httpx.Client) -> None:
    """An exception inside the core is a block with engine.internal_error, never a forward."""

    class Crash:
        def scan(self, text: str) -> list[Any]:
            raise RuntimeError(text)  # the message would hold the request text: never shown

    with run_upstream() as up:
        with run_asgi(_engine_app(tmp_path, up, scanner=Crash())) as url:
            resp = _post(
                client, url, "/v1/messages", {"messages": [{"role": "user", "content": C}]}
            )
        assert resp.status_code == 500
        assert resp.json()["domestique"]["reasons"] == ["engine.internal_error"]
        assert C not in resp.text
        assert up.received == []


def test_a_failing_audit_store_blocks(tmp_path: Path, client: httpx.Client) -> None:
    """A decision that cannot be recorded is not enforced as allow: the request is blocked."""

    def broken(record: Any) -> Any:
        raise OSError("disk full")

    with run_upstream() as up:
        # group=None: the inline path (DOMESTIQUE_PROXY_AUDIT_BATCH=0).
        with run_asgi(_engine_app(tmp_path, up, recorder=broken, group=None)) as url:
            resp = _post(
                client, url, "/v1/messages", {"messages": [{"role": "user", "content": "hi"}]}
            )
        assert resp.status_code == 500
        assert "audit.write_failed" in resp.json()["domestique"]["reasons"]
        assert up.received == []


def test_a_failing_group_commit_blocks_every_request(tmp_path: Path) -> None:
    """With group commit, concurrent requests whose batch cannot be written are all blocked."""
    import asyncio

    from domestique.audit import mask_or_stop
    from domestique.proxy.audit_batch import GroupRecorder
    from domestique.records import Action

    calls: list[int] = []

    def broken(records: Any) -> Any:
        calls.append(len(records))
        raise OSError("disk full")

    group = GroupRecorder(broken, lambda r: mask_or_stop(r, tmp_path), stop=Action.BLOCK)
    body = {"messages": [{"role": "user", "content": "hi"}]}

    async def many(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(trust_env=False, timeout=30) as c:
            return await asyncio.gather(
                *(c.post(url + "/v1/messages", json=body, headers=HEADERS) for _ in range(12))
            )

    with run_upstream() as up:
        with run_asgi(_engine_app(tmp_path, up, group=group)) as url:
            answers = asyncio.run(many(url))
        assert [r.status_code for r in answers] == [500] * 12
        assert all("audit.write_failed" in r.json()["domestique"]["reasons"] for r in answers)
        assert sum(calls) == 12  # every request's record was in a batch that failed
        assert up.received == []


def test_group_commit_records_concurrent_requests_in_one_chain(tmp_path: Path) -> None:
    """Concurrent requests through the app are all forwarded and recorded in a verified chain."""
    import asyncio

    from domestique.audit import verify

    body = {"messages": [{"role": "user", "content": "hi"}]}

    async def many(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(trust_env=False, timeout=30) as c:
            return await asyncio.gather(
                *(c.post(url + "/v1/messages", json=body, headers=HEADERS) for _ in range(16))
            )

    with run_upstream() as up:
        app = _engine_app(tmp_path, up)
        assert app.engine.group is not None  # group commit is the default
        with run_asgi(app) as url:
            answers = asyncio.run(many(url))
        assert [r.status_code for r in answers] == [200] * 16
        assert len(up.received) == 16
    assert sum(app.engine.group.batches) == 16
    with AuditStore.open(tmp_path, create=False) as store:
        assert store.count() == 16
    assert verify(tmp_path).ok


def test_client_that_leaves_mid_stream_stops_the_upstream(tmp_path: Path) -> None:
    """When the client disconnects during a streamed answer, the upstream stream is closed."""
    import time

    with run_upstream() as up:
        up.event_delay_s = 0.02  # ~100 events: about 2 s of "generation"
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url:
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": C}]}
            with (
                httpx.Client(trust_env=False, timeout=30) as c,
                c.stream("POST", url + "/v1/messages", json=body) as resp,
            ):
                next(resp.iter_raw())  # the first bytes arrived; now the client leaves
            deadline = time.monotonic() + 5
            while not up.aborted and time.monotonic() < deadline:
                time.sleep(0.05)
        assert up.aborted


def test_a_failure_mid_answer_cuts_the_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error after the answer started ends the connection without a clean end of body."""
    from domestique.proxy import app as app_module

    class Exploding(app_module.AnswerStream):
        def feed(self, chunk: bytes) -> bytes:
            raise RuntimeError("restorer failed")

    monkeypatch.setattr(app_module, "AnswerStream", Exploding)
    with run_upstream() as up:
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url, httpx.Client(trust_env=False, timeout=30) as c:
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": C}]}
            with pytest.raises(httpx.RemoteProtocolError):
                c.post(url + "/v1/messages", json=body)


def test_new_detector_data_is_used_without_a_restart(tmp_path: Path, client: httpx.Client) -> None:
    """A scanner rebuilt from new data (``records add``, an edited .env) judges the next request."""
    import dataclasses

    from domestique.proxy.app import FirewallApp, ProxyConfig
    from domestique.proxy.server import build_engine

    value = "hunter2-hunter2-hunter2"

    class Blind:
        def scan(self, text: str) -> list[Any]:
            return []

    class Knows:
        def scan(self, text: str) -> list[Any]:
            from .conftest import CanaryFinding

            return [
                CanaryFinding("secret.generic_secret", m.start(), m.end(), "", "")
                for m in re.finditer(re.escape(value), text)
            ]

    current: list[Any] = [Blind()]
    engine = dataclasses.replace(
        build_engine(tmp_path), scanner=current[0], scanner_source=lambda: current[0]
    )
    body = {"model": "m", "messages": [{"role": "user", "content": f"pw {value} " * 20}]}
    with run_upstream() as up:
        config = ProxyConfig(
            upstreams=parse_upstreams([f"anthropic={up.url}"]), scanner_refresh_s=0.0
        )
        with run_asgi(FirewallApp(config, engine)) as url:
            assert _post(client, url, "/v1/messages", body).status_code == 200
            assert value.encode() in up.received[-1].body
            current[0] = Knows()
            assert _post(client, url, "/v1/messages", body).status_code == 200
            assert value.encode() not in up.received[-1].body


def test_client_that_leaves_while_the_model_is_silent_stops_the_upstream_at_once(
    tmp_path: Path,
) -> None:
    """A disconnect is noticed while no upstream bytes arrive, not at the next upstream chunk."""
    import time

    with run_upstream() as up:
        up.silence_s = 10.0  # the model "thinks" for 10 s after its first event
        app = build_app(parse_upstreams([f"anthropic={up.url}"]), home=tmp_path)
        with run_asgi(app) as url:
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
            with (
                httpx.Client(trust_env=False, timeout=30) as c,
                c.stream("POST", url + "/v1/messages", json=body) as resp,
            ):
                next(resp.iter_raw())
            left = time.monotonic()
            while not up.aborted and time.monotonic() < left + 5:
                time.sleep(0.02)
        assert up.aborted
        assert time.monotonic() - left < 5  # well before the 10 s silence ends


@pytest.mark.parametrize(
    ("path", "secret", "expect"),
    [
        ("/v1/messages", False, b'event: error\ndata: {"type":"error","error":{"type":"api_error"'),
        ("/v1/messages", True, b'event: error\ndata: {"type":"error","error":{"type":"api_error"'),
        ("/v1/chat/completions", False, b'data: {"error":{"message":"domestique: the upstream'),
        ("/v1/chat/completions", True, b'data: {"error":{"message":"domestique: the upstream'),
        ("/v1/responses", True, b'event: error\ndata: {"type":"error","code":"server_error"'),
        (
            "/v1beta/models/gemini-x:streamGenerateContent",
            False,
            b'data: {"error":{"code":502,"message":"domestique: the upstream',
        ),
    ],
)
def test_upstream_that_breaks_mid_stream_ends_with_the_providers_error_event(
    tmp_path: Path, client: httpx.Client, path: str, secret: bool, expect: bytes
) -> None:
    """A stream cut short upstream ends at an event boundary with the provider's error event."""
    with run_upstream() as up:
        up.break_after = 2
        up.one_char = False
        names = ("anthropic", "openai", "gemini")
        app = build_app(parse_upstreams([f"{n}={up.url}" for n in names]), home=tmp_path)
        with run_asgi(app) as url:
            content = f"deploy with {C}" if secret else "hello"
            body = {
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": content}],
            }
            if path.startswith("/v1beta"):
                body = {"contents": [{"role": "user", "parts": [{"text": content}]}]}
            elif path == "/v1/responses":
                body = {"model": "m", "stream": True, "input": content}
            resp = _post(client, url, path, body)
    assert resp.status_code == 200
    raw = resp.content
    assert raw.count(expect) == 1
    assert raw.endswith(b"\n\n")
    assert b"proxy.upstream_error" in raw
    *events, last = [e for e in raw.split(b"\n\n") if e]
    assert expect in last
    for ev in events:  # every event before the error is whole: its JSON parses
        data = [ln[5:].strip() for ln in ev.split(b"\n") if ln.startswith(b"data:")]
        assert all(json.loads(d) is not None for d in data if d != b"[DONE]")


def test_gemini_json_array_stream_is_restored(tmp_path: Path, client: httpx.Client) -> None:
    """streamGenerateContent without alt=sse: the JSON array answer comes back restored."""
    from . import providers

    with run_upstream() as up:
        up.gemini_array = True
        app = build_app(parse_upstreams([f"gemini={up.url}"]), home=tmp_path)
        with run_asgi(app) as url:
            body = {"contents": [{"role": "user", "parts": [{"text": f"use {C}"}]}]}
            resp = _post(client, url, "/v1beta/models/gemini-x:streamGenerateContent", body)
    assert resp.status_code == 200
    assert C.encode() not in up.received[-1].body
    text, args = providers.gemini_array_collect(resp.content)
    assert C in text
    assert C in args
