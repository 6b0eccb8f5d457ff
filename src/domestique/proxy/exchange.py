"""What the firewall decides about one exchange, with no I/O: the request's plan, the answer's.

Pure. The shell (:mod:`domestique.proxy.app`) reads the request, hands the facts here, and
does what the plan says:

* :func:`read_head` — the method, path, query and headers of an ASGI scope, as judged and
  as forwarded;
* :func:`plan_route` — a classified route, a connectivity :class:`~domestique.proxy.routes.Probe`,
  or a :class:`Block` (a refused route);
* :func:`body_block` — a :class:`Block` for a body that is incomplete, too large, or sent to a
  route that takes none;
* :func:`plan_request` — the judged request (an :class:`Inspection`) with the vault's mapping
  of the previous turn merged in, and what a vault failure means by policy: a
  :class:`Forward` (whose verdict may still stop it);
* :func:`plan_response` — which restorer the answer goes through: :class:`Whole`,
  :class:`JsonArray` (Gemini's streamed JSON array), :class:`SSE` or :class:`Passthrough`.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from domestique.keys import mask_preview
from domestique.proxy.pipeline import Inspection, RequestLine
from domestique.proxy.routes import Operation, Probe, Provider, Refusal, Route, classify
from domestique.records import Action, JSONValue, Reason, Verdict

# Not forwarded upstream: hop-by-hop headers, and what the proxy itself re-computes. The client's
# Accept-Encoding is dropped so the answer comes in an encoding the restorer can read.
DROP_REQUEST = frozenset(
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
_AGENTS = (
    ("claude-cli", "claude-code"),
    ("claude-code", "claude-code"),
    ("codex", "codex"),
    ("geminicli", "gemini"),
    ("gemini-cli", "gemini"),
    ("aider", "aider"),
    ("litellm", "aider"),
)


def identify_agent(user_agent: str) -> str | None:
    ua = user_agent.lower()
    for marker, name in _AGENTS:
        if marker in ua:
            return name
    return None


@dataclass(frozen=True, slots=True)
class Head:
    """The request line and headers of one ASGI scope."""

    method: str
    path: str  # raw, without the query
    query: str  # raw, without "?"
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    raw_headers: tuple[tuple[str, str], ...]  # as sent, in order

    @property
    def forwarded(self) -> tuple[tuple[str, str], ...]:
        """The headers that go upstream (hop-by-hop and re-computed ones dropped)."""
        return tuple((k, v) for k, v in self.raw_headers if k.lower() not in DROP_REQUEST)

    def line(self) -> RequestLine:
        """The query and headers as forwarded, for the scan."""
        return RequestLine(self.query, self.forwarded)


def read_head(scope: Mapping[str, Any]) -> Head:
    raw_headers = tuple(
        (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", ())
    )
    headers: dict[str, str] = {}
    for k, v in raw_headers:
        key = k.lower()
        headers[key] = f"{headers[key]}, {v}" if key in headers else v
    raw_path = scope.get("raw_path") or scope.get("path", "").encode()
    return Head(
        method=scope.get("method", ""),
        path=raw_path.decode("latin-1").split("?", 1)[0],
        query=scope.get("query_string", b"").decode("latin-1"),
        headers=headers,
        raw_headers=raw_headers,
    )


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """Who sent what where: everything a record says about a request besides the verdict."""

    provider: Provider
    path: str
    route: Route | None
    headers: Mapping[str, str]
    t0: int  # time.perf_counter_ns() when the request arrived
    agent: str | None = None  # None: read from the User-Agent


@dataclass(frozen=True, slots=True)
class Block:
    """Stopped before judging (a refused route, an unreadable body): record it, answer it."""

    reasons: tuple[Reason, ...]
    status: int
    obj: Mapping[str, JSONValue] = field(default_factory=dict)
    answer: bool = True  # False: the client already left
    provider: Provider | None = None  # a refused route's provider, as classified


@dataclass(frozen=True, slots=True)
class Forward:
    """A judged request: record ``verdict``, then forward unless the stored record stops."""

    verdict: Verdict
    inspection: Inspection
    mapping: dict[str, str]  # placeholder -> original, the previous turn's merged in
    obj: dict[str, JSONValue]

    @property
    def forwards(self) -> bool:
        return not self.verdict.action.stops and self.inspection.body is not None


def plan_route(head: Head) -> Route | Probe | Block:
    decision = classify(head.method, head.path, head.headers, head.query)
    if isinstance(decision, Refusal):
        reasons = (Reason(decision.code, decision.message),)
        return Block(reasons, decision.status, provider=decision.provider)
    return decision


def body_block(route: Route, body: bytes, problem: str | None) -> Block | None:
    """A block for a body that cannot be judged; None when it can."""
    if problem is None and body and not route.carries_content:
        problem = "proxy.malformed_body"  # a route that takes no body was sent one
    if problem is None:
        return None
    from domestique.proxy.envelopes import status_for

    return Block(
        (Reason(problem, "request body incomplete or over the size limit"),),
        status_for([problem]),
        {"bytes_in": len(body)},
        answer=problem != "proxy.truncated_body",  # a client that left gets no answer
    )


class PolicyLike(Protocol):
    def action_for(self, code: str) -> Action: ...


def needs_vault(inspection: Inspection) -> str | None:
    """The response id whose mapping the vault should give back, if any."""
    return None if inspection.blocked else inspection.previous_response_id


def plan_request(
    route: Route,
    inspection: Inspection,
    policy: PolicyLike,
    upstream_host: str,
    *,
    earlier: Mapping[str, str] | None = None,
    vault_failure: Reason | None = None,
) -> Forward:
    """The decision to record for a judged request.

    ``earlier``: the mapping of the previous response (OpenAI ``previous_response_id``) from
    the vault; this turn's placeholders win. ``vault_failure``: the vault could not be read;
    the request then stops when the policy says ``proxy.vault_unavailable`` stops (restoring
    an answer that quotes an earlier placeholder is impossible), and goes on otherwise with
    the failure recorded.
    """
    mapping = {**earlier, **inspection.mapping} if earlier else dict(inspection.mapping)
    action, reasons, would = inspection.action, inspection.reasons, inspection.would
    if vault_failure is not None:
        reasons = (*reasons, vault_failure)
        if policy.action_for("proxy.vault_unavailable").stops:
            action, would = Action.BLOCK, None
    return Forward(
        Verdict(action, reasons, would), inspection, mapping, _object(inspection, upstream_host)
    )


def _object(ins: Inspection, upstream_host: str) -> dict[str, JSONValue]:
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


# -- the answer --------------------------------------------------------------------------------
# Not relayed to the client: hop-by-hop headers and what the proxy re-computes.
DROP_RESPONSE = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}
)


@dataclass(frozen=True, slots=True)
class Whole:
    """A whole answer: read it, restore it (when there is a mapping), send it with its length."""

    restore: bool


@dataclass(frozen=True, slots=True)
class JsonArray:
    """Gemini ``streamGenerateContent`` without ``alt=sse``: one JSON array, streamed."""


@dataclass(frozen=True, slots=True)
class SSE:
    """A server-sent event stream with placeholders to restore."""


@dataclass(frozen=True, slots=True)
class Passthrough:
    """A stream with nothing to restore: relayed event by event (framed, never split)."""


@dataclass(frozen=True, slots=True)
class ResponsePlan:
    restorer: Whole | JsonArray | SSE | Passthrough
    headers: list[tuple[bytes, bytes]]  # what the client gets
    keep: bool  # remember the mapping under the response id (Responses' previous_response_id)
    judge_end: bool  # a 2xx stream: only the provider's terminal event means complete

    @property
    def streamed(self) -> bool:
        return not isinstance(self.restorer, Whole)

    @property
    def json_array(self) -> bool:
        return isinstance(self.restorer, JsonArray)


def plan_response(
    status: int,
    headers: Mapping[str, str] | Any,
    route: Route,
    mapping: Mapping[str, str],
    record: tuple[str, str],
) -> ResponsePlan:
    """How to relay an upstream answer with ``status`` and ``headers`` for ``route``.

    ``record``: (action, record id) of the decision, sent as ``x-domestique-*`` headers.
    """
    out: list[tuple[bytes, bytes]] = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in headers.items()
        if k.lower() not in DROP_RESPONSE
    ]
    out.append((b"x-domestique-action", record[0].encode()))
    out.append((b"x-domestique-record", record[1].encode()))
    ctype = _get(headers, "content-type")
    restorer: Whole | JsonArray | SSE | Passthrough
    if "text/event-stream" in ctype:
        restorer = SSE() if mapping else Passthrough()
    elif route.operation is Operation.GEMINI_STREAM and status == 200 and "json" in ctype:
        restorer = JsonArray()
    else:
        restorer = Whole(restore=bool(mapping))
    return ResponsePlan(
        restorer,
        out,
        keep=route.operation is Operation.OPENAI_RESPONSES and bool(mapping),
        judge_end=200 <= status < 300,
    )


def _get(headers: Mapping[str, str] | MutableMapping[str, str] | Any, name: str) -> str:
    value = headers.get(name)
    if value is None:
        value = headers.get(name.title(), "")
    return str(value or "")
