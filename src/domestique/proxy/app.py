"""The firewall's I/O shell: a raw ASGI app that judges, forwards and restores.

Thin on purpose. What to do with a request and its answer is decided by pure modules: route
classification (:mod:`~domestique.proxy.routes`), the judging pipeline
(:mod:`~domestique.proxy.pipeline`), the request and answer plans
(:mod:`~domestique.proxy.exchange`) and the restorers (:mod:`~domestique.proxy.answer`). This
module reads the request, records the decision (:mod:`~domestique.proxy.recording`, through
:func:`domestique.boundary.decide_and_record`), forwards the clean body to the *configured*
upstream for the provider (never a host the client names) with the developer's own headers and
key, and relays the answer through the restorer (:mod:`~domestique.proxy.upstream`).

Every step runs inside an explicit deny-on-exception boundary (``_guarded``): an exception
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

from domestique.boundary import error_reason
from domestique.keys import Fingerprinter
from domestique.proxy import exchange, upstream
from domestique.proxy.answer import AnswerStream, JsonArrayStream, response_id_of, restore_body
from domestique.proxy.audit_batch import GroupRecorder
from domestique.proxy.body import BodyLimits
from domestique.proxy.envelopes import WRITE_FAILED, error_body, status_for
from domestique.proxy.exchange import Block, Forward, Head, RequestFacts, identify_agent
from domestique.proxy.pipeline import (
    Inspection,
    ProxyPolicy,
    ScanCache,
    ScannerLike,
    inspect_request,
)
from domestique.proxy.recording import Recorder, Recording
from domestique.proxy.routes import Probe, Provider, Route, guess_provider
from domestique.proxy.vault import PlaceholderVault
from domestique.records import (
    Action,
    DecisionRecord,
    JSONValue,
    PolicyRef,
    Reason,
    Verdict,
    current_user_and_host,
    utc_now_iso,
)
from domestique.redact import PlaceholderMaker

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

__all__ = ["DEFAULT_UPSTREAMS", "Engine", "FirewallApp", "ProxyConfig", "identify_agent"]

DEFAULT_UPSTREAMS: dict[Provider, str] = {
    Provider.ANTHROPIC: "https://api.anthropic.com",
    Provider.OPENAI: "https://api.openai.com",
    Provider.GEMINI: "https://generativelanguage.googleapis.com",
}


class PolicyLike(Protocol):
    """What the shell needs of ``domestique.policy.EffectivePolicy``."""

    @property
    def ref(self) -> PolicyRef: ...
    def action_for(self, code: str, ctx: Any) -> Action: ...
    def decide(self, reasons: Any, ctx: Any) -> Any: ...


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
        self._hosts = {p: urlsplit(u).hostname or "" for p, u in config.upstreams.items()}
        self._active = 0
        self._scanner_checked = time.monotonic()
        self._records = Recording(
            policy_ref=lambda: self.engine.policy.ref,
            recorder=engine.recorder,
            group=engine.group,
            hosts=self._hosts,
            user_host=current_user_and_host(),
            mask_path=self._masked,
            active=lambda: self._active,
        )

    # -- ASGI entry ---------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "http":
            self._active += 1  # requests in hand (group commit writes inline when alone)
            try:
                await self._guarded(scope, receive, send)
            finally:
                self._active -= 1
        elif kind == "websocket":
            await self._refuse_websocket(scope, receive, send)

    async def _refuse_websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a WebSocket at once (404 when the server can send one) so clients fall back.

        Codex tries ``ws://…/v1/responses`` first and falls back to HTTP + SSE on 404.
        """
        facts = self._facts(exchange.read_head(scope), time.perf_counter_ns())
        reason = Reason("proxy.unknown_route", "WebSocket is not supported here; use HTTP")
        message = await receive()
        record = await self._records.decide(
            facts, lambda: Verdict(Action.BLOCK, (reason,)), {"websocket": True}
        )
        if message.get("type") != "websocket.connect":
            return
        if "websocket.http.response" in scope.get("extensions", {}):
            body = error_body(facts.provider, 404, (reason,), record_id=record.id)
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
        if self._client is None or self._client.closed:
            self._client = upstream.new_session(
                self.config.connect_timeout_s, self.config.read_timeout_s
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self.engine.group is not None:
            self.engine.group.close()  # waits for a commit in flight

    # -- the boundary ---------------------------------------------------------------------------
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
            if trace.status is not None:
                # Mid-answer: the status is sent; cutting the stream is the only honest end.
                # Returning without the final body message makes the server close the
                # connection; re-raising would print a traceback whose messages could quote
                # a URL (``?key=``) or content.
                return
            await self._failed(scope, tracked_send, t0, trace, error_reason(exc))
        finally:
            if self._log is not None:
                with contextlib.suppress(Exception):  # a closed stderr never fails a request
                    self._log(trace.line(t0))

    async def _failed(
        self, scope: Scope, send: Send, t0: int, trace: _Trace, reason: Reason
    ) -> None:
        """Record and answer an exception raised before the answer started (500)."""
        reasons: tuple[Reason, ...] = (reason,)
        head = exchange.read_head(scope)
        facts = self._facts(head, t0)
        record_id: str | None = None
        try:
            record = await self._records.decide(facts, lambda: Verdict(Action.BLOCK, reasons))
            trace.record = record
            reasons, record_id = record.reasons, record.id
        except Exception as again:  # noqa: BLE001 - the store itself failed: still block
            reasons = (*reasons, error_reason(again, "audit.write_failed"))
        await _respond(send, facts.provider, 500, reasons, record_id)

    def _facts(self, head: Head, t0: int, route: Route | None = None) -> RequestFacts:
        provider = route.provider if route else guess_provider(head.path, head.headers)
        agent = identify_agent(head.headers.get("user-agent", ""))
        return RequestFacts(provider, head.path, route, head.headers, t0, agent)

    # -- one request --------------------------------------------------------------------------
    async def _http(
        self, scope: Scope, receive: Receive, send: Send, t0: int, trace: _Trace
    ) -> None:
        head = exchange.read_head(scope)
        planned = exchange.plan_route(head)
        if isinstance(planned, Probe):
            await self._probe(send, planned, self._facts(head, t0), trace)
            return
        if isinstance(planned, Block):
            await self._block(send, planned, self._facts(head, t0), trace)
            return
        route = planned
        facts = self._facts(head, t0, route)
        body, problem = await upstream.read_body(receive, self.config.limits.max_body)
        stopped = exchange.body_block(route, body, problem)
        if stopped is not None:
            await self._block(send, stopped, facts, trace)
            return
        upstream_host = self._hosts.get(route.provider, "")
        ctx = self.engine.context_for(facts.agent, upstream_host)
        policy = _BoundPolicy(self.engine.policy, ctx)
        inspection = self._judge(route, body, head, policy)
        earlier, failure = await self._earlier(inspection)
        plans: list[Forward] = []

        def judge() -> Verdict:
            plan = exchange.plan_request(
                route, inspection, policy, upstream_host, earlier=earlier, vault_failure=failure
            )
            plans.append(plan)
            return plan.verdict

        record = await self._records.decide(facts, judge, lambda: plans[-1].obj if plans else {})
        trace.record = record
        if record.action.stops or not plans or not plans[-1].forwards:
            status = status_for(record.codes)
            await _respond(send, route.provider, status, record.reasons, record.id)
            return
        await self._forward(scope, receive, send, route, plans[-1], record, trace)

    def _judge(self, route: Route, body: bytes, head: Head, policy: ProxyPolicy) -> Inspection:
        """The pipeline's judgement of the request; a route without a body is judged as an
        empty one, so the same pipeline asks the policy (an invalid policy still stops
        everything) and scans the model named in the path, the query and the headers."""
        if route.carries_content:
            return self._inspect(route, body, head, policy)
        judged = self._inspect(route, b"{}", head, policy)
        return dataclasses.replace(
            judged, body=None if judged.blocked else b"", bytes_in=0, bytes_out=0
        )

    async def _earlier(
        self, inspection: Inspection
    ) -> tuple[Mapping[str, str] | None, Reason | None]:
        """The vault's mapping for the previous response, or why it could not be read."""
        response_id = exchange.needs_vault(inspection)
        vault = self.engine.vault
        if not response_id or vault is None:
            return None, None
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, vault.get, response_id), None
        except OSError as exc:
            return None, error_reason(exc, "proxy.vault_unavailable")

    async def _probe(self, send: Send, probe: Probe, facts: RequestFacts, trace: _Trace) -> None:
        """Answer a connectivity probe (Claude Code's start-up ``HEAD /``) here: 200, no body.

        Nothing is forwarded and nothing was judged, so it is recorded as ``allow`` with
        ``forwarded: false`` (the log still shows every request the firewall answered).
        """
        facts = dataclasses.replace(facts, provider=probe.provider)
        obj: dict[str, JSONValue] = {"route": "probe", "method": probe.method, "forwarded": False}
        trace.record = await self._records.decide(facts, lambda: Verdict(Action.ALLOW), obj)
        body = b'{"domestique":"firewall"}'
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b"" if probe.method == "HEAD" else body  # HEAD: the headers GET would have
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _block(self, send: Send, block: Block, facts: RequestFacts, trace: _Trace) -> None:
        """Record a request stopped before judging (refused route, unreadable body); answer it."""
        if block.provider is not None:
            facts = dataclasses.replace(facts, provider=block.provider)
        record = await self._records.decide(
            facts, lambda: Verdict(Action.BLOCK, block.reasons), block.obj
        )
        trace.record = record
        if block.answer:
            status = status_for(record.codes) if WRITE_FAILED in record.codes else block.status
            await _respond(send, facts.provider, status, record.reasons, record.id)

    def _inspect(self, route: Route, body: bytes, head: Head, policy: ProxyPolicy) -> Inspection:
        try:
            return inspect_request(
                route,
                body,
                content_encoding=head.headers.get("content-encoding", ""),
                scanner=self._current_scanner(),
                policy=policy,
                maker=self._maker,
                fingerprinter=self._fingerprinter,
                limits=self.config.limits,
                cache=self._scan_cache,
                line=head.line(),
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

    # -- forwarding ---------------------------------------------------------------------------
    async def _forward(  # noqa: PLR0917 - internal, called once
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        route: Route,
        plan: Forward,
        record: DecisionRecord,
        trace: _Trace,
    ) -> None:
        assert plan.inspection.body is not None
        head = exchange.read_head(scope)
        try:
            response = await upstream.send_request(
                self._ensure_client(),
                self.config.upstreams[route.provider],
                route,
                head.query,
                head.forwarded,
                plan.inspection.body,
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            reason = Reason("proxy.upstream_error", f"upstream unreachable: {type(exc).__name__}")
            failed = await self._records.upstream_failed(record, reason)
            trace.record = failed
            await _respond(
                send, route.provider, 502, failed.reasons, failed.id, verb="could not forward"
            )
            return
        try:
            broke = await self._relay(receive, send, route, response, plan.mapping, record)
        finally:
            response.release()
        if broke is not None:
            reason = Reason("proxy.upstream_error", f"the upstream stream broke off ({broke})")
            trace.record = await self._records.upstream_failed(record, reason)

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
        plan = exchange.plan_response(
            response.status, response.headers, route, mapping, (record.action.value, record.id)
        )
        if isinstance(plan.restorer, exchange.Whole):
            restore: Callable[[bytes], bytes] = (
                (lambda data: restore_body(data, mapping)) if plan.restorer.restore else _same
            )
            data = await upstream.relay_whole(send, response, plan, restore)
            if plan.keep:
                await self._remember(response_id_of(data), mapping)
            return None
        restorer: AnswerStream | JsonArrayStream | None = None
        if isinstance(plan.restorer, exchange.JsonArray):
            restorer = JsonArrayStream(AnswerStream(route.operation, route.provider, mapping))
        elif isinstance(plan.restorer, exchange.SSE):
            restorer = AnswerStream(route.operation, route.provider, mapping)
        relayed = await upstream.relay_stream(receive, send, route, response, plan, restorer)
        if relayed.broke is not None or relayed.client_left:
            return relayed.broke
        if plan.keep and isinstance(restorer, AnswerStream):
            await self._remember(restorer.response_id, mapping)
        return None

    async def _remember(self, response_id: str | None, mapping: dict[str, str]) -> None:
        vault = self.engine.vault
        if vault is None or not response_id:
            return
        with contextlib.suppress(OSError):  # restoring later is best effort; nothing leaks
            await asyncio.get_running_loop().run_in_executor(None, vault.put, response_id, mapping)

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


def _same(data: bytes) -> bytes:
    return data


async def _respond(
    send: Send,
    provider: Provider,
    status: int,
    reasons: tuple[Reason, ...] | Any,
    record_id: str | None,
    *,
    verb: str = "blocked",
) -> None:
    body = error_body(provider, status, reasons, record_id=record_id, verb=verb)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-domestique-action", b"block"),
    ]
    if record_id:
        headers.append((b"x-domestique-record", record_id.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
