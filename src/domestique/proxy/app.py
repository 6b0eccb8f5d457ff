"""The firewall's I/O shell: a raw ASGI app that judges, forwards and restores.

Thin on purpose: route classification, body decoding, field extraction, redaction and
restoring are the pure modules beside this one. This module reads the request, calls
:func:`~domestique.proxy.pipeline.inspect_request`, records the decision, forwards the clean
body to the *configured* upstream for the provider (never a host the client names) with the
developer's own headers and key, and relays the answer through the restorer.

Every step runs inside an explicit deny-on-exception boundary (``_boundary``): an exception
before the answer starts becomes a block in the provider's error envelope with an ``engine.*``
code, recorded; after the answer has started, the stream is cut rather than finished as if
complete. The framework's own error handler is never relied on.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
import yarl
from multidict import CIMultiDict

from domestique import __version__
from domestique.boundary import error_reason
from domestique.keys import Fingerprinter, mask_preview
from domestique.proxy.answer import (
    AnswerStream,
    JsonArrayStream,
    response_id_of,
    restore_body,
    stream_error_event,
)
from domestique.proxy.audit_batch import GroupRecorder
from domestique.proxy.body import BodyLimits
from domestique.proxy.envelopes import error_body, status_for
from domestique.proxy.pipeline import (
    Inspection,
    ProxyPolicy,
    RequestLine,
    ScanCache,
    ScannerLike,
    inspect_request,
)
from domestique.proxy.routes import (
    Operation,
    Probe,
    Provider,
    Refusal,
    Route,
    classify,
    guess_provider,
)
from domestique.proxy.sse import EventFramer
from domestique.proxy.stream_end import StreamEnd
from domestique.proxy.vault import PlaceholderVault
from domestique.records import (
    Action,
    Component,
    DecisionRecord,
    JSONValue,
    PolicyRef,
    Reason,
    Subject,
    current_user_and_host,
    new_record_id,
    utc_now_iso,
)
from domestique.redact import PlaceholderMaker

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_UPSTREAMS: dict[Provider, str] = {
    Provider.ANTHROPIC: "https://api.anthropic.com",
    Provider.OPENAI: "https://api.openai.com",
    Provider.GEMINI: "https://generativelanguage.googleapis.com",
}
# Not forwarded upstream: hop-by-hop headers, and what the proxy itself re-computes. The client's
# Accept-Encoding is dropped so the answer comes in an encoding the restorer can read.
_DROP_REQUEST = frozenset(
    {
        "host",
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "accept-encoding",
    }
)
_DROP_RESPONSE = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)
_AGENTS = (
    ("claude-cli", "claude-code"),
    ("claude-code", "claude-code"),
    ("codex", "codex"),
    ("geminicli", "gemini"),
    ("gemini-cli", "gemini"),
    ("aider", "aider"),
    ("litellm", "aider"),
)


class PolicyLike(Protocol):
    """What the shell needs of ``domestique.policy.EffectivePolicy``."""

    @property
    def ref(self) -> PolicyRef: ...
    def action_for(self, code: str, ctx: Any) -> Action: ...
    def decide(self, reasons: Any, ctx: Any) -> Any: ...


Recorder = Callable[[DecisionRecord], DecisionRecord]


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    upstreams: Mapping[Provider, str] = field(default_factory=lambda: dict(DEFAULT_UPSTREAMS))
    limits: BodyLimits = field(default_factory=BodyLimits)
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 600.0  # a long answer can pause between events
    scan_cache: bool = True  # reuse findings for text already scanned (resent history)
    scanner_refresh_s: float = 1.0  # how often to look for new detector data (records, .env)


@dataclass(slots=True)
class Engine:
    """The judging parts the shell is given (built once per process by the CLI)."""

    scanner: ScannerLike
    policy: PolicyLike
    context_for: Callable[[str | None, str], Any]  # (agent, upstream host) -> DecisionContext
    install_key: bytes
    recorder: Recorder
    vault: PlaceholderVault | None = None
    # The current scanner (``default_scanner``: rebuilt when a ``.env`` or record file
    # changes). Asked at most every ``scanner_refresh_s``: one look costs ~0.35 ms of stats.
    scanner_source: Callable[[], ScannerLike] | None = None
    # Group commit (``DOMESTIQUE_PROXY_AUDIT_BATCH``, on by default): when set, records go
    # through it instead of ``recorder``; see :mod:`domestique.proxy.audit_batch`.
    group: GroupRecorder | None = None


class _BoundPolicy:
    """The policy with this request's context bound (the pipeline's ``ProxyPolicy``)."""

    __slots__ = ("_ctx", "_policy")

    def __init__(self, policy: PolicyLike, ctx: Any) -> None:
        self._policy = policy
        self._ctx = ctx

    def action_for(self, code: str) -> Action:
        return self._policy.action_for(code, self._ctx)

    def decide(self, reasons: Any) -> Any:
        return self._policy.decide(reasons, self._ctx)


def identify_agent(user_agent: str) -> str | None:
    ua = user_agent.lower()
    for marker, name in _AGENTS:
        if marker in ua:
            return name
    return None


class FirewallApp:
    """The ASGI application. One per process; stateless across requests except the vault."""

    def __init__(
        self,
        config: ProxyConfig,
        engine: Engine,
        client: aiohttp.ClientSession | None = None,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.engine = engine
        self._client = client
        self._log = log  # one line per request (``domestique proxy``'s stderr); None: quiet
        self._maker = PlaceholderMaker(engine.install_key)
        self._scan_cache = ScanCache() if config.scan_cache else None
        self._fingerprinter = Fingerprinter(engine.install_key)
        user, host = current_user_and_host()
        self._user, self._host = user, host
        self._hosts = {p: urlsplit(u).hostname or "" for p, u in config.upstreams.items()}
        self._active = 0
        self._scanner_checked = time.monotonic()

    # -- ASGI entry ---------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            await self._boundary(scope, receive, send)
        elif kind == "websocket":
            await self._refuse_websocket(scope, receive, send)

    async def _refuse_websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a WebSocket at once (404 when the server can send one) so clients fall back.

        Codex tries ``ws://…/v1/responses`` first and falls back to HTTP + SSE on 404.
        """
        t0 = time.perf_counter_ns()
        headers = _lower_headers(scope)
        path = (scope.get("raw_path") or scope.get("path", "").encode()).decode("latin-1")
        path = path.split("?", 1)[0]
        provider = guess_provider(path, headers)
        reason = Reason("proxy.unknown_route", "WebSocket is not supported here; use HTTP")
        message = await receive()
        record = await self._record(
            action=Action.BLOCK,
            reasons=(reason,),
            provider=provider,
            path=path,
            route=None,
            headers=headers,
            t0=t0,
            obj={"websocket": True},
        )
        if message.get("type") != "websocket.connect":
            return
        if "websocket.http.response" in scope.get("extensions", {}):
            body = error_body(provider, 404, (reason,), record_id=record.id)
            await send(
                {
                    "type": "websocket.http.response.start",
                    "status": 404,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._ensure_client()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _ensure_client(self) -> aiohttp.ClientSession:
        """The pooled upstream client (aiohttp: measured 7-20x less CPU per request than httpx).

        No cookie jar (answers must not leak state between developers' requests), no proxy
        from the environment, no redirects: the upstream is exactly what ``--upstream`` says.
        """
        if self._client is None or self._client.closed:
            connector = aiohttp.TCPConnector(limit=256, limit_per_host=0, ttl_dns_cache=300)
            self._client = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
                auto_decompress=True,
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    sock_connect=self.config.connect_timeout_s,
                    sock_read=self.config.read_timeout_s,
                ),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self.engine.group is not None:
            self.engine.group.close()  # waits for a commit in flight

    # -- the boundary ---------------------------------------------------------------------------
    async def _boundary(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._active += 1  # requests in hand (group commit writes inline when alone)
        try:
            await self._guarded(scope, receive, send)
        finally:
            self._active -= 1

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        trace = _Trace()

        async def tracked_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                trace.status = message.get("status")
            await send(message)

        t0 = time.perf_counter_ns()
        try:
            await self._http(scope, receive, tracked_send, t0, trace)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the boundary: every error blocks
            started = trace.status is not None
            if started:
                # Mid-answer: the status is sent; cutting the stream is the only honest end.
                # Returning without the final body message makes the server close the
                # connection; re-raising would print a traceback whose messages could quote
                # a URL (``?key=``) or content.
                return
            reasons: tuple[Reason, ...] = (error_reason(exc),)
            headers = _lower_headers(scope)
            path = (scope.get("raw_path") or b"").decode("latin-1").split("?", 1)[0]
            provider = guess_provider(path, headers)
            record_id: str | None = None
            try:
                record = await self._record(
                    action=Action.BLOCK,
                    reasons=reasons,
                    provider=provider,
                    path=path,
                    route=None,
                    headers=headers,
                    t0=t0,
                    obj={},
                    trace=trace,
                )
                reasons, record_id = record.reasons, record.id
            except Exception as again:  # noqa: BLE001 - the store itself failed: still block
                reasons = (*reasons, error_reason(again, "audit.write_failed"))
            await _respond(tracked_send, provider, 500, reasons, record_id)
        finally:
            if self._log is not None:
                with contextlib.suppress(Exception):  # a closed stderr never fails a request
                    self._log(trace.line(t0))

    # -- one request --------------------------------------------------------------------------
    async def _http(
        self, scope: Scope, receive: Receive, send: Send, t0: int, trace: _Trace
    ) -> None:
        headers = _lower_headers(scope)
        raw_path = scope.get("raw_path") or scope["path"].encode()
        path = raw_path.decode("latin-1").split("?", 1)[0]
        query = scope.get("query_string", b"").decode("latin-1")
        decision = classify(scope["method"], path, headers, query)
        if isinstance(decision, Probe):
            await self._probe(send, decision, path, headers, t0, trace)
            return
        if isinstance(decision, Refusal):
            await self._block(
                send,
                Reason(decision.code, decision.message),
                provider=decision.provider,
                status=decision.status,
                path=path,
                route=None,
                headers=headers,
                t0=t0,
                obj={},
                trace=trace,
            )
            return
        route = decision
        body, problem = await _read_body(receive, self.config.limits.max_body)
        if problem is None and body and not route.carries_content:
            problem = "proxy.malformed_body"  # a route that takes no body was sent one
        if problem is not None:
            await self._block(
                send,
                Reason(problem, "request body incomplete or over the size limit"),
                provider=route.provider,
                status=status_for([problem]),
                path=path,
                route=route,
                headers=headers,
                t0=t0,
                obj={"bytes_in": len(body)},
                answer=problem != "proxy.truncated_body",  # a client that left gets no answer
                trace=trace,
            )
            return
        agent = identify_agent(headers.get("user-agent", ""))
        upstream_host = self._hosts.get(route.provider, "")
        policy = _BoundPolicy(self.engine.policy, self.engine.context_for(agent, upstream_host))
        line = RequestLine(
            scope.get("query_string", b"").decode("latin-1"),
            tuple((k, v) for k, v in _raw_headers(scope) if k.lower() not in _DROP_REQUEST),
        )
        if route.carries_content:
            inspection = self._inspect(route, body, headers, policy, line)
        else:
            # No body: judged as an empty one, so the same pipeline asks the policy (an
            # invalid policy still stops everything) and scans the model named in the path,
            # the query and the headers.
            judged = self._inspect(route, b"{}", headers, policy, line)
            inspection = dataclasses.replace(
                judged, body=None if judged.blocked else b"", bytes_in=0, bytes_out=0
            )
        mapping = dict(inspection.mapping)
        extra_reasons: tuple[Reason, ...] = ()
        if (
            inspection.previous_response_id
            and self.engine.vault is not None
            and not inspection.blocked
        ):
            try:
                earlier = await asyncio.get_running_loop().run_in_executor(
                    None, self.engine.vault.get, inspection.previous_response_id
                )
            except OSError as exc:
                extra_reasons = (error_reason(exc, "proxy.vault_unavailable"),)
            else:
                mapping = {**earlier, **mapping}
        action = inspection.action
        all_reasons = inspection.reasons + extra_reasons
        if extra_reasons:
            action = Action.BLOCK if policy.action_for("proxy.vault_unavailable").stops else action
        obj = _object(route, inspection, upstream_host)
        record = await self._record(
            action=action,
            reasons=all_reasons,
            provider=route.provider,
            path=path,
            route=route,
            headers=headers,
            t0=t0,
            obj=obj,
            agent=agent,
            trace=trace,
            would=None if action is not inspection.action else inspection.would,
        )
        if record.action.stops or inspection.body is None:
            await _respond(
                send, route.provider, status_for(record.codes), record.reasons, record.id
            )
            return
        await self._forward(
            scope=scope,
            receive=receive,
            send=send,
            route=route,
            inspection=inspection,
            mapping=mapping,
            record=record,
            trace=trace,
        )

    async def _probe(  # noqa: PLR0917 - internal, called once
        self,
        send: Send,
        probe: Probe,
        path: str,
        headers: Mapping[str, str],
        t0: int,
        trace: _Trace,
    ) -> None:
        """Answer a connectivity probe (Claude Code's start-up ``HEAD /``) here: 200, no body.

        Nothing is forwarded and nothing was judged, so it is recorded as ``allow`` with
        ``forwarded: false`` (the log still shows every request the firewall answered).
        """
        await self._record(
            action=Action.ALLOW,
            reasons=(),
            provider=probe.provider,
            path=path,
            route=None,
            headers=headers,
            t0=t0,
            obj={"route": "probe", "method": probe.method, "forwarded": False},
            trace=trace,
        )
        body = b'{"domestique":"firewall"}'
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        body = b"" if probe.method == "HEAD" else body  # HEAD: the headers GET would have
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _block(
        self,
        send: Send,
        reason: Reason,
        *,
        provider: Provider,
        status: int,
        path: str,
        route: Route | None,
        headers: Mapping[str, str],
        t0: int,
        obj: Mapping[str, JSONValue],
        answer: bool = True,
        trace: _Trace | None = None,
    ) -> None:
        """Record a request stopped before judging (refused route, unreadable body); answer it."""
        record = await self._record(
            action=Action.BLOCK,
            reasons=(reason,),
            provider=provider,
            path=path,
            route=route,
            headers=headers,
            t0=t0,
            obj=obj,
            trace=trace,
        )
        if answer:
            await _respond(send, provider, status, record.reasons, record.id)

    def _inspect(
        self,
        route: Route,
        body: bytes,
        headers: Mapping[str, str],
        policy: ProxyPolicy,
        line: RequestLine | None = None,
    ) -> Inspection:
        try:
            return inspect_request(
                route,
                body,
                content_encoding=headers.get("content-encoding", ""),
                scanner=self._current_scanner(),
                policy=policy,
                maker=self._maker,
                fingerprinter=self._fingerprinter,
                limits=self.config.limits,
                cache=self._scan_cache,
                line=line,
            )
        except Exception as exc:  # noqa: BLE001 - inner boundary: a crash in the core blocks
            return Inspection(Action.BLOCK, (error_reason(exc),), None, bytes_in=len(body))

    def _current_scanner(self) -> ScannerLike:
        """The engine's scanner, swapped for a newer one when its detector data changed.

        A failure to look raises into the caller's boundary: the request blocks with an
        ``engine.*`` code rather than being judged by data known to be stale.
        """
        source = self.engine.scanner_source
        now = time.monotonic()
        if source is not None and now - self._scanner_checked >= self.config.scanner_refresh_s:
            self.engine.scanner = source()
            self._scanner_checked = now
        return self.engine.scanner

    async def _forward(
        self,
        *,
        scope: Scope,
        receive: Receive,
        send: Send,
        route: Route,
        inspection: Inspection,
        mapping: dict[str, str],
        record: DecisionRecord,
        trace: _Trace,
    ) -> None:
        assert inspection.body is not None
        client = self._ensure_client()
        base = self.config.upstreams[route.provider].rstrip("/")
        query = scope.get("query_string", b"").decode("latin-1")
        url = yarl.URL(base + route.path + (f"?{query}" if query else ""), encoded=True)
        out_headers = CIMultiDict(
            (k, v) for k, v in _raw_headers(scope) if k.lower() not in _DROP_REQUEST
        )
        try:
            response = await client.request(
                route.method,
                url,
                data=inspection.body if route.carries_content else None,
                headers=out_headers,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = Reason("proxy.upstream_error", f"upstream unreachable: {type(exc).__name__}")
            failed = await self._upstream_failed(record, reason, trace)
            await _respond(
                send, route.provider, 502, failed.reasons, failed.id, verb="could not forward"
            )
            return
        try:
            broke = await self._relay(receive, send, route, response, mapping, record)
        finally:
            response.release()
        if broke is not None:
            reason = Reason("proxy.upstream_error", f"the upstream stream broke off ({broke})")
            await self._upstream_failed(record, reason, trace)

    async def _upstream_failed(
        self, decision: DecisionRecord, reason: Reason, trace: _Trace
    ) -> DecisionRecord:
        """Record what the client got when the upstream failed after the decision to forward.

        The decision record was written before anything left (the log never trails what was
        sent); the audit log is append-only, so the outcome is a second record: ``block`` with
        ``proxy.upstream_error``, naming the decision it follows. An audit failure here changes
        nothing the client gets (it already gets an error), so it is not raised.
        """
        obj: dict[str, JSONValue] = {
            key: decision.object[key]
            for key in ("provider", "route", "model", "upstream_host", "stream")
            if key in decision.object
        }
        obj["follows"] = decision.id
        record = dataclasses.replace(
            decision,
            id=new_record_id(),
            time=utc_now_iso(),
            action=Action.BLOCK,
            reasons=(reason,),
            object=obj,
        )
        stored = await self._store(record)
        trace.record = stored
        return stored

    async def _relay(  # noqa: PLR0917 - internal, called once
        self,
        receive: Receive,
        send: Send,
        route: Route,
        response: aiohttp.ClientResponse,
        mapping: dict[str, str],
        record: DecisionRecord,
    ) -> str | None:
        """Relay the upstream's answer; the name of the error if it broke off mid-answer."""
        resp_headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.items()
            if k.lower() not in _DROP_RESPONSE
        ]
        resp_headers.append((b"x-domestique-action", record.action.value.encode()))
        resp_headers.append((b"x-domestique-record", record.id.encode()))
        ctype = response.headers.get("content-type", "")
        streaming = "text/event-stream" in ctype
        # Gemini streamGenerateContent without ``alt=sse`` streams one JSON array.
        array = (
            not streaming
            and route.operation is Operation.GEMINI_STREAM
            and response.status == 200
            and "json" in ctype
        )
        keep = route.operation is Operation.OPENAI_RESPONSES and bool(mapping)
        if not streaming and not array:
            # A whole answer: read it, restore it, send it in one piece with its length.
            data = await response.read()
            restored = restore_body(data, mapping) if mapping else data
            resp_headers.append((b"content-length", str(len(restored)).encode()))
            start = {"type": "http.response.start", "status": response.status}
            await send({**start, "headers": resp_headers})
            await send({"type": "http.response.body", "body": restored, "more_body": False})
            if keep:
                await self._remember(response_id_of(data), mapping)
            return None
        await send(
            {"type": "http.response.start", "status": response.status, "headers": resp_headers}
        )
        restorer: AnswerStream | JsonArrayStream | None = None
        if array:
            restorer = JsonArrayStream(AnswerStream(route.operation, route.provider, mapping))
        elif mapping:
            restorer = AnswerStream(route.operation, route.provider, mapping)
        framer = EventFramer() if restorer is None else None
        # A close-delimited stream the upstream hangs up on ends like a finished one: only the
        # provider's terminal event tells the two apart (an error answer is not judged).
        ending = StreamEnd(route.operation, array=array) if 200 <= response.status < 300 else None
        # A client that goes away (the developer pressed Esc) stops the upstream stream at
        # once, even while the model is silent (thinking), rather than letting it generate,
        # and bill, an answer nobody reads: closing the response wakes the pending read.
        gone = asyncio.create_task(_wait_disconnect(receive))

        def stop_upstream(_: object) -> None:
            response.close()

        gone.add_done_callback(stop_upstream)
        broke: str | None = None
        try:
            async for chunk in response.content.iter_any():
                if ending is not None:
                    ending.feed(chunk)
                if restorer is not None:
                    out = restorer.feed(chunk)
                else:
                    assert framer is not None
                    out = framer.feed(chunk)
                if out:
                    await send({"type": "http.response.body", "body": out, "more_body": True})
        except (aiohttp.ClientError, TimeoutError) as exc:
            broke = type(exc).__name__
        finally:
            # Not on a normal end: closing would drop the pooled upstream connection.
            gone.remove_done_callback(stop_upstream)
            gone.cancel()
        if gone.done() and not gone.cancelled():
            return None  # the client left: nothing more to send
        if broke is None and ending is not None and not ending.complete:
            broke = "no terminal event"
        if broke is not None:
            # The upstream broke off mid-answer: end with the provider's own error event, so
            # the client reports an incomplete answer instead of taking it as complete.
            message = (
                f"domestique: the upstream stream broke off ({broke}); the answer is incomplete "
                "[proxy.upstream_error]"
            )
            if restorer is not None:
                tail = restorer.abort(message)
            else:
                assert framer is not None
                framer.abort()
                tail = stream_error_event(route.provider, route.operation, message).encode()
        else:
            tail = restorer.close() if restorer is not None else framer.close() if framer else b""
        await send({"type": "http.response.body", "body": tail, "more_body": False})
        if broke is not None:
            return broke
        if keep and isinstance(restorer, AnswerStream):
            await self._remember(restorer.response_id, mapping)
        return None

    async def _remember(self, response_id: str | None, mapping: dict[str, str]) -> None:
        vault = self.engine.vault
        if vault is None or not response_id:
            return
        with contextlib.suppress(OSError):  # restoring later is best effort; nothing leaks
            await asyncio.get_running_loop().run_in_executor(None, vault.put, response_id, mapping)

    # -- records ------------------------------------------------------------------------------
    def _masked(self, text: str) -> str:
        """``text`` (a refused path) with every finding replaced by its masked preview.

        A refused request was never scanned, yet its path goes into the record and onto the
        terminal: a key pasted into a URL must not.
        """
        findings = sorted(self._current_scanner().scan(text), key=lambda f: f.start)
        out, last = [], 0
        for f in findings:
            if f.start < last:
                continue
            out.append(text[last : f.start])
            out.append(f.preview or "…")
            last = f.end
        out.append(text[last:])
        return "".join(out)

    async def _record(
        self,
        *,
        action: Action,
        reasons: tuple[Reason, ...],
        provider: Provider,
        path: str,
        route: Route | None,
        headers: Mapping[str, str],
        t0: int,
        obj: Mapping[str, JSONValue],
        agent: str | None = None,
        trace: _Trace | None = None,
        would: Action | None = None,
    ) -> DecisionRecord:
        base: dict[str, JSONValue] = {
            "provider": provider.value,
            "route": route.operation.value if route else self._masked(path[:200]),
            "upstream_host": self._hosts.get(provider, ""),
        }
        base.update(obj)
        ua = headers.get("user-agent", "")
        record = DecisionRecord(
            component=Component.PROXY,
            action=action,
            reasons=reasons,
            subject=Subject(
                user=self._user,
                host=self._host,
                agent=agent or identify_agent(ua),
                markers=(f"user-agent:{ua.split(' ', 1)[0][:60]}",) if ua else (),
            ),
            object=base,
            policy=self.engine.policy.ref,
            engine={"domestique": __version__, "proxy": "1"},
            latency_us=(time.perf_counter_ns() - t0) // 1000,
            would_action=would,
        )
        stored = await self._store(record)
        if trace is not None:
            trace.record = stored
        return stored

    async def _store(self, record: DecisionRecord) -> DecisionRecord:
        """Append ``record``; the stored (masked) record, or it turned into a block."""
        if self.engine.group is not None:
            # Group commit: this request waits for the transaction holding its record.
            return await self.engine.group.record(record, alone=self._active <= 1)
        # Inline, on the event loop: one transaction per request.
        return self.engine.recorder(record)


def _object(route: Route, ins: Inspection, upstream_host: str) -> dict[str, JSONValue]:
    fingerprints = list(
        dict.fromkeys(ev.fingerprint for r in ins.reasons for ev in r.evidence if ev.fingerprint)
    )[:50]
    return {
        "model": _model_for_record(ins),
        "upstream_host": upstream_host,
        "stream": ins.stream,
        "bytes_in": ins.bytes_in,
        "bytes_out": ins.bytes_out,
        "fields_scanned": ins.fields_scanned,
        "findings": fingerprints,
        "redacted": len(ins.mapping),
    }


def _model_for_record(ins: Inspection) -> str | None:
    """The model name for the record, masked when the scan found something in it.

    The pipeline scans the body's ``model`` field like any other and the model named in a
    Gemini path (``path.model``); a finding there means the name itself is (or holds) a
    secret, and the record is not the place to keep it.
    """
    model = ins.model
    if model is None:
        return None
    if any(ev.where in ("model", "path.model") for r in ins.reasons for ev in r.evidence):
        return mask_preview(model)
    return model


@dataclass(slots=True)
class _Trace:
    """What one request did, for its line on the terminal (never content, never a secret)."""

    record: DecisionRecord | None = None
    status: int | None = None

    def line(self, t0: int) -> str:
        total_ms = (time.perf_counter_ns() - t0) / 1e6
        rec = self.record
        if rec is None:
            return f"{utc_now_iso()} - status={self.status} total={total_ms:.1f}ms\n"
        obj = rec.object
        codes = ",".join(dict.fromkeys(r.code for r in rec.reasons)) or "-"
        model = obj.get("model")
        fields = obj.get("fields_scanned")
        return (
            f"{rec.time} {obj.get('route', '-')} model={model if model else '-'} "
            f"{rec.action.value} codes={codes} fields={fields if fields is not None else '-'} "
            f"judge={rec.latency_us / 1000:.1f}ms total={total_ms:.1f}ms "
            f"status={self.status if self.status is not None else '-'}\n"
        )


def _raw_headers(scope: Scope) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", ())]


def _lower_headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in _raw_headers(scope):
        key = k.lower()
        out[key] = f"{out[key]}, {v}" if key in out else v
    return out


async def _wait_disconnect(receive: Receive) -> None:
    """Return when the client disconnects (the request body has been read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, str | None]:
    """The whole body, or what arrived plus a problem code (too large, client gone)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(parts), "proxy.truncated_body"
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"".join(parts), "proxy.body_too_large"
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts), None


async def _respond(
    send: Send,
    provider: Provider,
    status: int,
    reasons: tuple[Reason, ...] | Any,
    record_id: str | None,
    *,
    verb: str = "blocked",
) -> None:
    body = error_body(provider, status, tuple(reasons), record_id=record_id, verb=verb)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-domestique-action", b"block"),
    ]
    if record_id:
        headers.append((b"x-domestique-record", record_id.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
