"""The request pipeline: bytes in, a forwarding plan or a block out. Pure (sans-I/O).

``inspect_request`` decodes the body, extracts every field, scans them in one pass, asks the
policy per reason code, and either redacts (deterministic placeholders, with the mapping kept
for restoring the answer) or blocks. The body forwarded is always the re-serialised object that
was scanned, never the client's bytes: a parser differential (duplicate keys, odd whitespace,
NaN) cannot smuggle anything past the scan.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote_plus

import orjson

from domestique.keys import Fingerprinter, mask_preview
from domestique.proxy.body import BodyError, BodyLimits, decode_body, parse_json_object
from domestique.proxy.fields import (
    UNMODIFIABLE,
    Extraction,
    FieldKind,
    apply_replacements,
    extract_fields,
    redaction_conflicts,
)
from domestique.proxy.headers import scanned_value
from domestique.proxy.routes import Operation, Provider, Route
from domestique.records import Action, Evidence, Reason, Verdict
from domestique.redact import PLACEHOLDER_PATTERN, PlaceholderMaker, Span, redact_text

MAX_EVIDENCE = 20  # per reason: enough to locate findings, small enough for a record
_SEPARATOR = "\n\n"  # between fields in the one scanned text; no detector matches across it


class FindingLike(Protocol):
    """What the pipeline reads from a detection finding (``domestique.detect.Finding``)."""

    @property
    def code(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def preview(self) -> str: ...


class ScannerLike(Protocol):
    def scan(self, text: str) -> Sequence[FindingLike]: ...


class ProxyPolicy(Protocol):
    """The policy as the proxy asks it: per code, and for the whole request."""

    def action_for(self, code: str) -> Action: ...
    def decide(self, reasons: Sequence[Reason]) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class RequestLine:
    """What goes upstream besides the body: the query string and the headers, as forwarded."""

    query: str = ""  # raw, without "?"
    headers: tuple[tuple[str, str], ...] = ()


# The developer's own key travels in these (per provider) and passes unscanned; Gemini clients
# may put it in the query as ``key=``.
_CREDENTIAL_HEADERS: dict[Provider, frozenset[str]] = {
    Provider.ANTHROPIC: frozenset({"x-api-key", "authorization"}),
    Provider.OPENAI: frozenset({"authorization", "api-key"}),
    Provider.GEMINI: frozenset({"x-goog-api-key", "authorization"}),
}


def _request_line_parts(route: Route, line: RequestLine) -> list[tuple[str, str, str]]:
    """(code if found, where, text) of every query name/value and header name/value that is
    forwarded, but the provider credential (its auth header, Gemini's ``key=``)."""
    parts: list[tuple[str, str, str]] = []
    for item in line.query.split("&") if line.query else ():
        name, _, value = item.partition("=")
        name, value = unquote_plus(name), unquote_plus(value)
        if route.provider is Provider.GEMINI and name == "key":
            continue
        parts.append(("proxy.secret_in_path", f"query.{name}", f"{name}={value}"))
    skip = _CREDENTIAL_HEADERS[route.provider]
    for name, value in line.headers:
        if name.lower() in skip:
            continue
        # Tracing and request ids, by their header's documented format, are not content.
        text = f"{name}: {scanned_value(name, value)}"
        parts.append(("proxy.secret_in_header", f"header.{name.lower()}", text))
    return parts


def request_line_findings(
    route: Route, line: RequestLine, scanner: ScannerLike, policy: ProxyPolicy
) -> list[tuple[str, str, Evidence]]:
    """(code, message, evidence) for every finding in the query string and the forwarded
    headers, the provider credential aside. Neither can be redacted: a finding is
    ``proxy.secret_in_path`` (query) or ``proxy.secret_in_header``; a code the policy allows
    (``infra.*``) is recorded as itself. For routes without a body too (model lists)."""
    items: list[tuple[str, str, Evidence]] = []
    for code, where, text in _request_line_parts(route, line):
        for f in scanner.scan(text):
            ev = Evidence(where, f.preview, f.fingerprint)
            if policy.action_for(f.code) is Action.ALLOW:
                items.append((f.code, f"{f.code} in {where}", ev))
            else:
                items.append((code, f"{f.code} in {where}: it cannot be redacted", ev))
    return items


@dataclass(frozen=True, slots=True)
class Inspection:
    """The outcome for one request. ``body`` is None exactly when the request is blocked."""

    action: Action
    reasons: tuple[Reason, ...]
    body: bytes | None
    mapping: dict[str, str] = field(default_factory=dict)  # placeholder -> original value
    model: str | None = None
    stream: bool = False
    fields_scanned: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    previous_response_id: str | None = None
    would: Action | None = None  # monitor mode: what the policy decided (not enforced)

    @property
    def blocked(self) -> bool:
        return self.body is None


@dataclass(slots=True)
class _Hit:
    code: str
    field_index: int
    start: int  # offsets inside the field's text
    end: int
    fingerprint: str
    preview: str


def _locate(findings: Sequence[FindingLike], starts: list[int], lengths: list[int]) -> list[_Hit]:
    """Map offsets in the joined text back to (field, offsets in the field), clipping spans."""
    hits: list[_Hit] = []
    for f in findings:
        i = bisect.bisect_right(starts, f.start) - 1
        i = max(i, 0)
        # A span that crosses separators is clipped to every field it touches.
        while i < len(starts) and starts[i] < f.end:
            lo = max(f.start, starts[i]) - starts[i]
            hi = min(f.end, starts[i] + lengths[i]) - starts[i]
            if hi > lo:
                hits.append(_Hit(f.code, i, lo, hi, f.fingerprint, f.preview))
            elif f.start == f.end == starts[i]:
                hits.append(_Hit(f.code, i, 0, lengths[i], f.fingerprint, f.preview))
            i += 1
    return hits


MIN_TAIL_AFTER_PLACEHOLDER = 8  # shorter remainders of a placeholder artefact are dropped


def _placeholder_tails(text: str) -> list[tuple[int, int]]:
    """(start of the 8-hex tail, end incl. ``]``) of every placeholder in ``text``."""
    if "[REDACTED:" not in text:
        return []
    return [(m.end() - 9, m.end()) for m in PLACEHOLDER_PATTERN.finditer(text)]


def _outside_placeholders(
    tails: list[tuple[int, int]], start: int, end: int
) -> tuple[int, int] | None:
    """The part of a finding that is not a placeholder's own text; None when nothing is.

    Text that went through the firewall before (a resent history, a model's echo) carries
    placeholders. Their hex tail reads as a generic secret, and a type such as
    ``password_assignment:`` reads as a keyword whose "value" is the tail and whatever
    follows up to the next space. A finding that starts inside a tail is that artefact: what
    lies after the placeholder is kept only when at least ``MIN_TAIL_AFTER_PLACEHOLDER``
    characters long (``…:1a2b3c4d]@h/db`` is dropped, a real value glued on is still
    redacted). Only the hex tail is exempt: a finding starting in a placeholder-shaped
    string's type part is kept whole, so a value cannot hide there.
    """
    for lo, hi in tails:
        if lo <= start < hi:
            if end - hi >= MIN_TAIL_AFTER_PLACEHOLDER:
                return hi, end
            return None
    return start, end


def _group(items: list[tuple[str, str, Evidence]]) -> list[Reason]:
    """One reason per code, evidence in order (capped), message counting what was found."""
    by_code: dict[str, tuple[list[str], list[Evidence]]] = {}
    for code, message, ev in items:
        messages, evidence = by_code.setdefault(code, ([], []))
        messages.append(message)
        if len(evidence) < MAX_EVIDENCE:
            evidence.append(ev)
    reasons = []
    for code, (messages, evidence) in by_code.items():
        n = len(messages)
        head = messages[0]
        message = head if n == 1 else f"{head} (and {n - 1} more)"
        reasons.append(Reason(code, message, tuple(evidence)))
    return reasons


def blocked(code: str, message: str, *, bytes_in: int = 0, model: str | None = None) -> Inspection:
    """A block for a request that could not be scanned (nothing about it may be forwarded)."""
    return Inspection(Action.BLOCK, (Reason(code, message),), None, bytes_in=bytes_in, model=model)


def _dumps(body: dict[str, Any]) -> bytes:
    """The scanned object as compact JSON (what is forwarded).

    orjson first: ~20x faster than the standard library on a 100 KB body (0.02 vs 0.47 ms,
    docs/benchmarks.md). It refuses exactly what it cannot write faithfully: an integer beyond
    64 bits and a string holding a lone surrogate (parsed from a ``\\ud800`` escape). Those
    bodies take the standard-library path, which writes them as before. Non-finite floats,
    which orjson would write as ``null``, never get here: the parser refuses them.
    """
    try:
        return orjson.dumps(body)
    except orjson.JSONEncodeError:
        pass
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate escape (\ud800) parsed into the string: keep it escaped.
        return json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def inspect_request(
    route: Route,
    raw: bytes,
    *,
    content_encoding: str,
    scanner: ScannerLike,
    policy: ProxyPolicy,
    maker: PlaceholderMaker,
    fingerprinter: Fingerprinter,
    limits: BodyLimits | None = None,
    cache: ScanCache | None = None,
    line: RequestLine | None = None,
) -> Inspection:
    """Judge one request body for ``route``. Never forwards what it could not scan.

    A body that cannot be decoded or parsed is blocked with its own reason code whatever the
    policy says (the policy can tighten, not loosen: there is nothing scanned to forward).
    ``line``: the query and headers as forwarded; a finding there cannot be redacted and
    blocks (``proxy.secret_in_path``, ``proxy.secret_in_header``), the provider credential
    aside.
    """
    limits = limits or BodyLimits()
    try:
        data = decode_body(raw, content_encoding, limits)
        body = parse_json_object(data)
        extraction = extract_fields(body, limits.max_depth)
    except BodyError as exc:
        verdict = policy.decide((Reason(exc.code, exc.message),))
        return Inspection(
            Action.BLOCK,
            verdict.reasons or (Reason(exc.code, exc.message),),
            None,
            bytes_in=len(raw),
            model=route.model,
        )
    model = body.get("model") if isinstance(body.get("model"), str) else route.model
    stream = body.get("stream") is True or route.operation is Operation.GEMINI_STREAM
    prev = body.get("previous_response_id")
    previous = (
        prev if isinstance(prev, str) and route.operation is Operation.OPENAI_RESPONSES else None
    )

    if cache is not None:
        cache.bind(scanner)
    hits, reason_items = _scan(extraction, scanner, fingerprinter, cache, policy)
    reason_items.extend(_path_findings(route, scanner, policy))
    reason_items.extend(request_line_findings(route, line or RequestLine(), scanner, policy))
    reasons = _group(reason_items)
    # Asked even with no reasons: an invalid policy stops every request (policy.invalid).
    verdict = policy.decide(reasons)
    common: dict[str, Any] = {
        "model": model,
        "stream": stream,
        "fields_scanned": extraction.scanned,
        "bytes_in": len(raw),
        "previous_response_id": previous,
    }
    if verdict.action.stops:
        return Inspection(Action.BLOCK, verdict.reasons, None, **common)
    return _redacted(extraction, body, hits, verdict, policy, maker, common)


def _redacted(  # noqa: PLR0917 - the second half of inspect_request
    extraction: Extraction,
    body: dict[str, Any],
    hits: list[_Hit],
    verdict: Verdict,
    policy: ProxyPolicy,
    maker: PlaceholderMaker,
    common: dict[str, Any],
) -> Inspection:
    """The request to forward with every finding the policy redacts replaced, or a block when
    a finding cannot be redacted (the policy's per-code answer stops, or two redactions meet
    in one string)."""
    mapping: dict[str, str] = {}
    spans: dict[int, list[Span]] = {}
    actions: dict[str, Action] = {}
    for hit in hits:
        action = actions.get(hit.code)
        if action is None:
            action = actions[hit.code] = policy.action_for(hit.code)
        if action is Action.REDACT:
            spans.setdefault(hit.field_index, []).append(Span(hit.start, hit.end, hit.code))
        elif action.stops:  # decide() and action_for() disagree: the stricter one holds
            return Inspection(Action.BLOCK, verdict.reasons, None, **common)
    conflicts = redaction_conflicts(extraction, list(spans))
    if conflicts:
        # A string and the payload it encodes both need a change: neither can be written
        # without undoing the other, so nothing is forwarded.
        reason = Reason(
            "proxy.unredactable_part",
            f"findings in both the text at {conflicts[0]} and the payload it encodes",
            (Evidence(conflicts[0]),),
        )
        return Inspection(Action.BLOCK, (*verdict.reasons, reason), None, **common)
    new_texts = {
        i: redact_text(extraction.fields[i].text, s, maker, mapping) for i, s in spans.items()
    }
    apply_replacements(extraction, new_texts)
    out = _dumps(body)
    action = Action.REDACT if mapping else verdict.action
    return Inspection(
        action,
        verdict.reasons,
        out,
        mapping,
        bytes_out=len(out),
        would=verdict.would,
        **common,
    )


CachedHit = tuple[str, int, int, str, str]  # code, start, end, fingerprint, preview
# A seam finding in stream offsets, with the last seam of the merged windows that found it:
# seam, code, start, end, fingerprint, preview.
SeamHit = tuple[int, str, int, int, str, str]


class ScanCache:
    """Findings per field text, for text seen in an earlier request. In memory, per process.

    Agents resend the whole conversation every turn, so most of a request (earlier tool
    results, file contents) was scanned before. Entries are keyed by a BLAKE2b digest of the
    text under a random per-process key (the text itself is not kept), bounded LRU, and only
    for texts of at least ``min_chars`` (short ones cost less to scan than to look up). A
    result with an ``engine.*`` finding is never cached, so a failed detector is retried.
    Entries hold findings, not decisions: the policy is asked afresh on every request. They
    belong to one scanner object (rules, known values, customer records): :meth:`bind` with
    any other scanner (a ``.env`` edit or ``records add`` picked up) empties the cache, so an
    answer is never reused across detector data.

    The one scan per request runs over the fields joined, so a field's findings can include
    ones its neighbours enable (a keyword in one field, the value in the next); they never
    cover less than scanning the field alone (bench check, docs/known-escapes.md). A cached
    answer is therefore at least the field's own scan.
    """

    def __init__(
        self, max_entries: int = 20_000, min_chars: int = 256, max_seam_entries: int = 4096
    ) -> None:
        self.max_entries = max_entries
        self.min_chars = min_chars
        self.max_seam_entries = max_seam_entries
        self._key = os.urandom(32)
        self._entries: OrderedDict[bytes, tuple[CachedHit, ...]] = OrderedDict()
        self._seams: OrderedDict[bytes, tuple[SeamHit, ...]] = OrderedDict()
        self._scanner: object | None = None
        self.hits = 0
        self.misses = 0
        self.seam_hits = 0  # requests whose earlier seams the memo answered

    def bind(self, scanner: object) -> None:
        """Use the cache for ``scanner``'s answers; a different scanner starts it empty."""
        if scanner is not self._scanner:
            self._entries.clear()
            self._seams.clear()
            self._scanner = scanner

    def digest(self, text: str) -> bytes:
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, digest_size=16, key=self._key).digest()

    def key_for(self, text: str) -> bytes | None:
        """The key of ``text``'s entry; None for texts too short to be cached."""
        return self.digest(text) if len(text) >= self.min_chars else None

    def get(self, text: str) -> tuple[CachedHit, ...] | None:
        key = self.key_for(text)
        return None if key is None else self.get_key(key)

    def get_key(self, key: bytes) -> tuple[CachedHit, ...] | None:
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found

    def put(self, text: str, hits: tuple[CachedHit, ...]) -> None:
        key = self.key_for(text)
        if key is not None:
            self.put_key(key, hits)

    def put_key(self, key: bytes, hits: tuple[CachedHit, ...]) -> None:
        if any(h[0].startswith("engine.") for h in hits):
            return
        self._entries[key] = hits
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def prefix_key(self, digests: Sequence[bytes]) -> bytes:
        """The key of a conversation prefix: the digests of its seam-stream texts, in order."""
        data = b"seams\0" + b"".join(digests)
        return hashlib.blake2b(data, digest_size=16, key=self._key).digest()

    def seams_get(self, key: bytes) -> tuple[SeamHit, ...] | None:
        found = self._seams.get(key)
        if found is not None:
            self._seams.move_to_end(key)
        return found

    def seams_put(self, key: bytes, hits: tuple[SeamHit, ...]) -> None:
        if any(h[1].startswith("engine.") for h in hits):
            return
        self._seams[key] = hits
        while len(self._seams) > self.max_seam_entries:
            self._seams.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


def _path_ev(f: FindingLike) -> Evidence:
    return Evidence("path.model", f.preview, f.fingerprint)


def _path_findings(
    route: Route, scanner: ScannerLike, policy: ProxyPolicy
) -> list[tuple[str, str, Evidence]]:
    """The model name in a Gemini path goes upstream too; a path cannot be redacted."""
    items: list[tuple[str, str, Evidence]] = []
    for f in scanner.scan(route.model) if route.model else ():
        if policy.action_for(f.code) is Action.ALLOW:  # infra.*: passes, recorded
            items.append((f.code, f"{f.code} in the request path", _path_ev(f)))
        else:
            message = f"{f.code} in the request path: it cannot be redacted"
            items.append(("proxy.secret_in_path", message, _path_ev(f)))
    return items


def _scan(
    extraction: Extraction,
    scanner: ScannerLike,
    fingerprinter: Fingerprinter,
    cache: ScanCache | None = None,
    policy: ProxyPolicy | None = None,
) -> tuple[list[_Hit], list[tuple[str, str, Evidence]]]:
    """One scan over every text field not in the cache, joined; reasons for everything.

    A finding the policy allows (``infra.*`` by default) inside a signed part is recorded as
    itself: it needs no redaction, so the part's signature is no reason to block.
    """
    texts: list[str] = []
    starts: list[int] = []
    lengths: list[int] = []
    index_of: list[int] = []
    items: list[tuple[str, str, Evidence]] = []
    located: list[_Hit] = []
    digests: dict[int, bytes] = {}  # field index -> its cache key (texts long enough)
    pos = 0
    for i, f in enumerate(extraction.fields):
        if f.kind is FieldKind.BINARY:
            ev = Evidence(f.path, mask_preview(f.text[:64]), fingerprinter.fingerprint(f.text))
            if f.problem is not None:  # a document that could not be read: its own code
                items.append((f.problem[0], f"{f.problem[1]} at {f.path}", ev))
                continue
            why = f"binary part at {f.path} ({len(f.text)} characters) was not scanned"
            items.append(("proxy.binary_unscanned", why, ev))
            continue
        key = cache.key_for(f.text) if cache is not None else None
        if key is not None:
            digests[i] = key
            cached = cache.get_key(key)  # type: ignore[union-attr]
            if cached is not None:
                located.extend(_Hit(c, i, a, b, fp, pv) for c, a, b, fp, pv in cached)
                continue
        texts.append(f.text)
        starts.append(pos)
        lengths.append(len(f.text))
        index_of.append(i)
        pos += len(f.text) + len(_SEPARATOR)
    joined = _SEPARATOR.join(texts)
    findings = scanner.scan(joined) if joined else []
    fresh = _locate(findings, starts, lengths)
    for hit in fresh:
        hit.field_index = index_of[hit.field_index]
    if cache is not None:
        per_field: dict[int, list[CachedHit]] = {i: [] for i in index_of}
        for hit in fresh:
            per_field[hit.field_index].append(
                (hit.code, hit.start, hit.end, hit.fingerprint, hit.preview)
            )
        for i, found in per_field.items():
            if i in digests:
                cache.put_key(digests[i], tuple(found))
    located.extend(_seam_hits(extraction, scanner, cache, digests))
    hits: list[_Hit] = []
    tails: dict[int, list[tuple[int, int]]] = {}
    for hit in sorted([*located, *fresh], key=lambda h: (h.field_index, h.start)):
        f = extraction.fields[hit.field_index]
        field_tails = tails.get(hit.field_index)
        if field_tails is None:
            field_tails = tails[hit.field_index] = _placeholder_tails(f.text)
        if field_tails:
            kept = _outside_placeholders(field_tails, hit.start, hit.end)
            if kept is None:
                continue
            hit.start, hit.end = kept
        if f.in_tools and is_service_address(hit.code, f.text[hit.start : hit.end]):
            continue  # the agent's own tool text naming a vendor's no-reply address
        ev = Evidence(f.path, hit.preview, hit.fingerprint)
        if f.kind in UNMODIFIABLE and (
            policy is None or policy.action_for(hit.code) is not Action.ALLOW
        ):
            code, why = _UNMODIFIABLE_CODES[f.kind]
            items.append((code, f"{hit.code} {why} at {f.path}", ev))
            continue
        items.append((hit.code, f"{hit.code} at {f.path}", ev))
        hits.append(hit)
    return hits, items


SEAM_WINDOW = 160  # characters each side of a seam that the seam scan reads
# Values that name a structure, not content: skipped when laying conversation text end to end.
_STRUCTURAL_KEYS = frozenset(
    {
        "type",
        "role",
        "id",
        "model",
        "name",
        "status",
        "object",
        "tool_use_id",
        "tool_call_id",
        "call_id",
        "item_id",
        "media_type",
        "mime_type",
        "mimeType",
        "format",
        "detail",
        "filename",
    }
)


@dataclass(slots=True)
class _Piece:
    """A run of a field's text laid into the seam stream (placeholders left out)."""

    stream: int  # start in the stream
    field_index: int
    offset: int  # start in the field's text
    length: int


@dataclass(slots=True)
class _Layout:
    """Conversation text end to end, as offsets (the text itself is never joined): every
    text value in order, structural values and keys left out, placeholder-shaped strings cut
    out; the stream offsets of every seam (a field boundary or a cut placeholder); and, per
    field laid in, where its text ends in the stream."""

    pieces: list[_Piece]
    seams: list[int]
    fields: list[int]  # field indices laid in, in order
    ends: list[int]  # stream offset where each of those fields ends
    starts: list[int]  # stream offset of each piece (for bisect)

    def text(self, extraction: Extraction, lo: int, hi: int) -> str:
        """The stream's characters ``lo``..``hi``, read from the fields they lie in."""
        out: list[str] = []
        k = max(bisect.bisect_right(self.starts, lo) - 1, 0)
        while k < len(self.pieces) and self.pieces[k].stream < hi:
            p = self.pieces[k]
            a = max(lo, p.stream) - p.stream + p.offset
            b = min(hi, p.stream + p.length) - p.stream + p.offset
            if b > a:
                out.append(extraction.fields[p.field_index].text[a:b])
            k += 1
        return "".join(out)


def _seam_layout(extraction: Extraction) -> _Layout:
    pieces: list[_Piece] = []
    seams: list[int] = []
    fields: list[int] = []
    ends: list[int] = []
    pos = 0
    text_kind, structural = FieldKind.TEXT, _STRUCTURAL_KEYS
    for i, f in enumerate(extraction.fields):
        text = f.text
        if f.kind is not text_kind or f.is_key or f.number or not text or f.key in structural:
            continue
        if fields:
            seams.append(pos)
        fields.append(i)
        if "[REDACTED:" not in text:  # the common case: one piece, no cut
            pieces.append(_Piece(pos, i, 0, len(text)))
            pos += len(text)
            ends.append(pos)
            continue
        start = 0
        cuts = [(m.start(), m.end()) for m in PLACEHOLDER_PATTERN.finditer(text)]
        for lo, hi in [*cuts, (len(text), len(text))]:
            if lo > start:
                pieces.append(_Piece(pos, i, start, lo - start))
                pos += lo - start
            if hi > lo:
                seams.append(pos)
            start = hi
        ends.append(pos)
    return _Layout(pieces, seams, fields, ends, [p.stream for p in pieces])


SEAM_MEMO_DEPTH = 3  # conversation prefixes remembered per request: all but the last 0..2 texts


def _seam_hits(
    extraction: Extraction,
    scanner: ScannerLike,
    cache: ScanCache | None,
    digests: dict[int, bytes] | None = None,
) -> list[_Hit]:
    """Findings that only exist across a seam: a secret split over adjacent fields or
    messages, or around a placeholder-shaped string. Each part is redacted where it lies.

    Only windows of ``SEAM_WINDOW`` characters each side of a seam are scanned, overlapping
    windows merged (one scan call, the merged windows joined like fields, each cached like a
    field), and only findings that reach across a seam with text on both sides are kept: the
    main scan judged each field whole.

    Incremental for conversation history: the seams of a prefix of the conversation seen in
    an earlier request (the same texts in the same order, keyed by their digests) are
    answered by the cache's seam memo, so only seams whose window reaches into text after
    that prefix are laid out and looked at again.
    """
    layout = _seam_layout(extraction)
    if not layout.seams:
        return []
    found: list[SeamHit] = []
    settled = -1  # windows answered by the memo: those of clusters ending before this
    keys: list[tuple[int, bytes]] = []  # (prefix end offset, memo key) to remember
    if cache is not None:
        known = digests or {}
        ds = [known.get(i) or cache.digest(extraction.fields[i].text) for i in layout.fields]
        for k in range(len(ds) - 1, max(len(ds) - 1 - SEAM_MEMO_DEPTH, -1), -1):
            key = cache.prefix_key(ds[: k + 1])
            got = cache.seams_get(key)
            if got is not None:
                found.extend(got)
                settled = layout.ends[k]
                cache.seam_hits += 1
                break
            keys.append((layout.ends[k], key))
    clusters = [c for c in _clusters(layout) if not _settled(c[2], settled)]
    found.extend(_cluster_hits(extraction, layout, clusters, scanner, cache))
    if cache is not None:
        for end, key in keys:
            cache.seams_put(key, tuple(h for h in found if _settled(h[0], end)))
    return _seam_pieces(layout, found)


def _settled(last_seam: int, prefix_end: int) -> bool:
    """True when the cluster whose last seam is ``last_seam`` lies in a conversation prefix
    ending at ``prefix_end``, and no seam after the prefix could have joined it: its windows
    and their findings are the same whatever follows the prefix."""
    return last_seam + 2 * SEAM_WINDOW <= prefix_end


def _clusters(layout: _Layout) -> list[tuple[int, int, int]]:
    """(start, end, last seam) of each run of overlapping seam windows (``SEAM_WINDOW`` each
    side of a seam), merged: each stretch of stream text is scanned once."""
    total = layout.ends[-1]
    out: list[tuple[int, int, int]] = []
    for x in dict.fromkeys(layout.seams):
        lo, hi = max(0, x - SEAM_WINDOW), min(total, x + SEAM_WINDOW)
        if out and lo < out[-1][1]:
            out[-1] = (out[-1][0], hi, x)
        else:
            out.append((lo, hi, x))
    return out


def _cluster_hits(
    extraction: Extraction,
    layout: _Layout,
    clusters: list[tuple[int, int, int]],
    scanner: ScannerLike,
    cache: ScanCache | None,
) -> list[SeamHit]:
    """Findings across seams in ``clusters``: their text scanned (one call, cached per text),
    kept when they reach across a seam with text on both sides."""
    texts = [layout.text(extraction, lo, hi) for lo, hi, _ in clusters]
    found: list[SeamHit] = []
    pending: list[int] = []
    for w, text in enumerate(texts):
        cached = cache.get(text) if cache is not None else None
        if cached is None:
            pending.append(w)
            continue
        lo, _, tag = clusters[w]
        found.extend((tag, c, lo + a, lo + b, fp, pv) for c, a, b, fp, pv in cached)
    if pending:
        joined = _SEPARATOR.join(texts[w] for w in pending)
        starts, pos = [], 0
        for w in pending:
            starts.append(pos)
            pos += len(texts[w]) + len(_SEPARATOR)
        per_window: dict[int, list[CachedHit]] = {w: [] for w in pending}
        for hit in _locate(scanner.scan(joined), starts, [len(texts[w]) for w in pending]):
            w = pending[hit.field_index]
            per_window[w].append((hit.code, hit.start, hit.end, hit.fingerprint, hit.preview))
        for w, got in per_window.items():
            if cache is not None:
                cache.put(texts[w], tuple(got))
            lo, _, tag = clusters[w]
            found.extend((tag, c, lo + a, lo + b, fp, pv) for c, a, b, fp, pv in got)
    out: list[SeamHit] = []
    for seam_hit in found:
        at = bisect.bisect_right(layout.seams, seam_hit[2])
        if at < len(layout.seams) and seam_hit[2] < layout.seams[at] < seam_hit[3]:
            out.append(seam_hit)  # else inside one run: the main scan saw it
    return out


def _seam_pieces(layout: _Layout, found: list[SeamHit]) -> list[_Hit]:
    """Each seam finding as hits on the fields its parts lie in."""
    out: list[_Hit] = []
    pieces, piece_starts = layout.pieces, layout.starts
    for code, start, end, fp, pv in dict.fromkeys(h[1:] for h in found):  # windows overlap
        k = max(bisect.bisect_right(piece_starts, start) - 1, 0)
        while k < len(pieces) and pieces[k].stream < end:
            piece = pieces[k]
            lo = max(start, piece.stream) - piece.stream + piece.offset
            hi = min(end, piece.stream + piece.length) - piece.stream + piece.offset
            if hi > lo:
                out.append(_Hit(code, piece.field_index, lo, hi, fp, pv))
            k += 1
    return out


# A finding in a part that is passed unmodified: the code that stands for it, and why.
_UNMODIFIABLE_CODES: dict[FieldKind, tuple[str, str]] = {
    FieldKind.SIGNED: ("proxy.secret_in_signed_part", "inside a signature or ciphertext"),
    FieldKind.MODEL: ("proxy.secret_in_model_output", "inside the model's own signed output"),
    FieldKind.CREDENTIAL: ("proxy.credential_by_design", "in a credential the API takes"),
    FieldKind.DOCUMENT: ("proxy.secret_in_document", "in the text of a PDF (not redactable)"),
}
_SERVICE_LOCAL = re.compile(
    r"(?i)(?:no-?reply|do-?not-?reply|notifications?|notify|mailer-daemon|postmaster|bounces?"
    r"|support|security|help|feedback|abuse|privacy|legal|info|hello|team|bot|actions?)"
    r"(?:[+._-][A-Za-z0-9._-]*)?"
)


def is_service_address(code: str, value: str) -> bool:
    """True for a vendor's no-reply or role address (``noreply@…``, ``support@…``,
    ``…@users.noreply.github.com``): not a person's data. Only e-mail findings qualify."""
    if code != "pii.email" or "@" not in value:
        return False
    local, _, domain = value.strip("<>").rpartition("@")
    return _SERVICE_LOCAL.fullmatch(local) is not None or ".noreply." in f".{domain.lower()}"
