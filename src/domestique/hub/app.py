"""The hub's HTTP service: a small ASGI app over :class:`~domestique.hub.store.HubStore`.

Routes (JSON unless said otherwise):

- ``POST /v1/enroll`` ``{token, host, user, os, version, install_key_fingerprint}`` →
  ``{endpoint_id, credential, org, signing_keys, require_bundle}``
- ``POST /v1/records`` (``Authorization: Bearer CREDENTIAL``, gzip batch, see
  :mod:`domestique.hub.batch`) → ``{acknowledged_seq, stored, duplicates, alerts, head_seq}``
- ``GET /v1/bundle`` (``Authorization``; ``If-None-Match``) → the signed bundle with its
  ``ETag``; 304 when unchanged; 204 when none is published
- ``GET /v1/health`` → ``{"ok": true}``
- ``POST /v1/doctor`` (``Authorization``) ``{"hosts": [doctor's JSON per agent host]}`` →
  ``{"stored": N}``: which agent hosts have the guard installed and fail-closed
- everything else: the web report (:mod:`domestique.hub.web`), behind an admin session

The app holds no state between requests: everything is in the database, so several processes
can serve one fleet. Every refusal (bad credential, revoked endpoint, malformed, oversized or
bomb upload, a batch for another endpoint) answers with ``{"error": CODE, "message"}`` and is
recorded in the store. An unexpected failure answers 500 and stores nothing; a database outage
answers 503: the endpoint keeps its records and tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

from domestique.hub.batch import MAX_BYTES, Refusal, parse_batch
from domestique.hub.store import EndpointInfo, HubDatabaseError, HubStore

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_ENROLL_BYTES = 64 * 1024


class HubApp:
    """The ASGI application. ``store`` is shared by every request (it is thread-safe)."""

    def __init__(self, store: HubStore, *, public_origin: str | None = None) -> None:
        from domestique.hub.web._app import WebReport

        self.store = store
        self.web = WebReport(store, public_origin=public_origin)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client") or ("", 0)
        remote = f"{client[0]}:{client[1]}"
        method, path = scope["method"], scope["path"]
        credential: str | None = None
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            credential = auth[7:].strip()
        if not path.startswith("/v1/"):
            await self._web(scope, receive, send, headers)
            return
        try:
            if method == "GET" and path == "/v1/health":
                await _json(send, 200, {"ok": True})
            elif method == "POST" and path == "/v1/enroll":
                body = await _body(receive, MAX_ENROLL_BYTES)
                await self._enroll(send, body)
            elif method == "POST" and path == "/v1/records":
                endpoint_id = await asyncio.to_thread(self.store.authenticate, credential)
                body = await _body(receive, MAX_BYTES)
                encoding = headers.get("content-encoding", "")
                batch = await asyncio.to_thread(parse_batch, body, encoding)
                result = await asyncio.to_thread(self.store.ingest, endpoint_id, batch)
                await _json(send, 200, result.to_json())
            elif method == "POST" and path == "/v1/doctor":
                endpoint_id = await asyncio.to_thread(self.store.authenticate, credential)
                body = await _body(receive, MAX_ENROLL_BYTES)
                hosts = _doctor_hosts(body)
                stored = await asyncio.to_thread(self.web.q.store_doctor, endpoint_id, hosts)
                await _json(send, 200, {"stored": stored})
            elif method == "GET" and path == "/v1/bundle":
                endpoint_id = await asyncio.to_thread(self.store.authenticate, credential)
                await self._bundle(send, endpoint_id, headers)
            else:
                await _json(
                    send, 404, {"error": "not_found", "message": f"no route {method} {path}"}
                )
        except Refusal as refusal:
            claimed = None
            if credential:
                claimed = await asyncio.to_thread(self._claimed, credential)
            await asyncio.to_thread(
                self.store.record_refusal,
                refusal.code,
                refusal.message,
                endpoint_id=claimed,
                remote=remote,
            )
            extra = {"WWW-Authenticate": "Bearer"} if refusal.status == 401 else {}
            await _json(
                send,
                refusal.status,
                {"error": refusal.code, "message": refusal.message},
                extra,
            )
        except HubDatabaseError:
            await _json(
                send,
                503,
                {"error": "unavailable", "message": "hub database unavailable; try again"},
                {"Retry-After": "5"},
            )
        except Exception as exc:  # noqa: BLE001 - answer 500, store nothing, never a traceback
            await _json(
                send,
                500,
                {"error": "engine.internal_error", "message": type(exc).__name__},
            )

    async def _web(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        from domestique.hub.web._app import MAX_FORM_BYTES, SECURITY_HEADERS

        try:
            body = await _body(receive, MAX_FORM_BYTES) if scope["method"] == "POST" else None
            answer = await self.web.handle(scope, headers, body)
            status, content, ctype, extra = answer.status, answer.body, answer.ctype, answer.headers
        except Refusal as refusal:
            status, content, ctype, extra = (
                refusal.status,
                refusal.message.encode(),
                "text/plain",
                {},
            )
        except HubDatabaseError:
            status, content, ctype = 503, b"hub database unavailable; try again", "text/plain"
            extra = {"Retry-After": "5"}
        except Exception as exc:  # noqa: BLE001 - answer 500, never a traceback
            status, content, ctype, extra = 500, type(exc).__name__.encode(), "text/plain", {}
        await _raw(send, status, content, ctype, {**SECURITY_HEADERS, **extra})

    def _claimed(self, credential: str) -> str | None:
        try:
            return self.store.endpoint_id_claimed(credential)
        except HubDatabaseError:
            return None

    async def _enroll(self, send: Send, body: bytes) -> None:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise Refusal(400, "hub.batch.malformed", "enrolment is not JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("token"), str):
            raise Refusal(400, "hub.batch.malformed", "enrolment needs a token")
        info = EndpointInfo.from_json(data)
        token = str(data["token"])[:200]

        def work() -> dict[str, Any]:
            endpoint_id, credential = self.store.enroll(token, info)
            return {
                "endpoint_id": endpoint_id,
                "credential": credential,
                "org": self.store.org_id(),
                "signing_keys": self.store.signing_keys(),
                "require_bundle": self.store.require_bundle(),
                # The organisation's fingerprint key: evidence fingerprints under it match
                # across every endpoint (the web report's "one leaked value").
                "fingerprint_key": self.store.org_fingerprint_key().hex(),
            }

        await _json(send, 200, await asyncio.to_thread(work))

    async def _bundle(self, send: Send, endpoint_id: str, headers: dict[str, str]) -> None:
        held = headers.get("x-domestique-bundle-revision")
        revision = int(held) if held and held.isdigit() and len(held) < 12 else None
        await asyncio.to_thread(self.store.note_bundle, endpoint_id, revision)
        latest = await asyncio.to_thread(self.store.latest_bundle)
        require = "yes" if await asyncio.to_thread(self.store.require_bundle) else "no"
        extra = {"X-Domestique-Require-Bundle": require}
        if latest is None:
            await _raw(send, 204, b"", "application/json", extra)
            return
        _, digest, envelope = latest
        etag = f'"{digest}"'
        extra["ETag"] = etag
        if headers.get("if-none-match") == etag:
            await _raw(send, 304, b"", "application/json", extra)
            return
        await _raw(send, 200, envelope.encode("utf-8"), "application/json", extra)


def _doctor_hosts(body: bytes) -> list[dict[str, Any]]:
    """The ``hosts`` of a doctor upload, checked; Refusal for anything else."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise Refusal(400, "hub.batch.malformed", "doctor upload is not JSON") from None
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, list) or len(hosts) > 32:
        raise Refusal(400, "hub.batch.malformed", "doctor upload needs up to 32 hosts")
    for h in hosts:
        if not isinstance(h, dict) or not isinstance(h.get("host"), str):
            raise Refusal(400, "hub.batch.malformed", "each doctor host needs a name")
    return hosts


async def _body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Refusal(400, "hub.batch.malformed", "client went away mid-upload")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refusal(413, "hub.batch.too_large", f"request body larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _json(
    send: Send, status: int, value: object, extra: dict[str, str] | None = None
) -> None:
    await _raw(send, status, orjson.dumps(value), "application/json", extra)


async def _raw(
    send: Send, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
) -> None:
    headers = [
        (b"content-type", ctype.encode("latin-1")),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"cache-control", b"no-store"),
    ]
    headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
