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
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from domestique.keys import Fingerprinter, mask_preview
from domestique.proxy.body import BodyError, BodyLimits, decode_body, parse_json_object
from domestique.proxy.fields import Extraction, FieldKind, apply_replacements, extract_fields
from domestique.proxy.routes import Operation, Route
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
) -> Inspection:
    """Judge one request body for ``route``. Never forwards what it could not scan.

    A body that cannot be decoded or parsed is blocked with its own reason code whatever the
    policy says (the policy can tighten, not loosen: there is nothing scanned to forward).
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
    if route.model:
        # The model name in a Gemini path goes upstream too; a path cannot be redacted.
        for f in scanner.scan(route.model):
            if policy.action_for(f.code) is Action.ALLOW:  # infra.*: passes, recorded
                reason_items.append((f.code, f"{f.code} in the request path", _path_ev(f)))
                continue
            reason_items.append(
                (
                    "proxy.secret_in_path",
                    f"{f.code} in the request path: it cannot be redacted",
                    _path_ev(f),
                )
            )
    reasons = _group(reason_items)
    # Asked even with no reasons: an invalid policy stops every request (policy.invalid).
    verdict = policy.decide(reasons)
    common = {
        "model": model,
        "stream": stream,
        "fields_scanned": extraction.scanned,
        "bytes_in": len(raw),
        "previous_response_id": previous,
    }
    if verdict.action.stops:
        return Inspection(Action.BLOCK, verdict.reasons, None, **common)  # type: ignore[arg-type]

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
            return Inspection(Action.BLOCK, verdict.reasons, None, **common)  # type: ignore[arg-type]
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
        **common,  # type: ignore[arg-type]
    )


CachedHit = tuple[str, int, int, str, str]  # code, start, end, fingerprint, preview


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

    def __init__(self, max_entries: int = 20_000, min_chars: int = 256) -> None:
        self.max_entries = max_entries
        self.min_chars = min_chars
        self._key = os.urandom(32)
        self._entries: OrderedDict[bytes, tuple[CachedHit, ...]] = OrderedDict()
        self._scanner: object | None = None
        self.hits = 0
        self.misses = 0

    def bind(self, scanner: object) -> None:
        """Use the cache for ``scanner``'s answers; a different scanner starts it empty."""
        if scanner is not self._scanner:
            self._entries.clear()
            self._scanner = scanner

    def _digest(self, text: str) -> bytes:
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, digest_size=16, key=self._key).digest()

    def get(self, text: str) -> tuple[CachedHit, ...] | None:
        if len(text) < self.min_chars:
            return None
        key = self._digest(text)
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found

    def put(self, text: str, hits: tuple[CachedHit, ...]) -> None:
        if len(text) < self.min_chars or any(h[0].startswith("engine.") for h in hits):
            return
        self._entries[self._digest(text)] = hits
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


def _path_ev(f: FindingLike) -> Evidence:
    return Evidence("path.model", f.preview, f.fingerprint)


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
    pos = 0
    for i, f in enumerate(extraction.fields):
        if f.kind is FieldKind.BINARY:
            items.append(
                (
                    "proxy.binary_unscanned",
                    f"binary part at {f.path} ({len(f.text)} characters) was not scanned",
                    Evidence(f.path, mask_preview(f.text[:64]), fingerprinter.fingerprint(f.text)),
                )
            )
            continue
        cached = cache.get(f.text) if cache is not None else None
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
            cache.put(extraction.fields[i].text, tuple(found))
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
        ev = Evidence(f.path, hit.preview, hit.fingerprint)
        if f.kind is FieldKind.SIGNED and (
            policy is None or policy.action_for(hit.code) is not Action.ALLOW
        ):
            items.append(
                (
                    "proxy.secret_in_signed_part",
                    f"{hit.code} inside a signed part at {f.path}: it cannot be redacted",
                    ev,
                )
            )
            continue
        items.append((hit.code, f"{hit.code} at {f.path}", ev))
        hits.append(hit)
    return hits, items
