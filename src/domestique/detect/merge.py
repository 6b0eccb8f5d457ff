"""After the rules ran: placeholders masked, glued values found again, overlapping hits merged.

* The firewall's own placeholders (``[REDACTED:github_token:1a2b3c4d]``) are masked before a
  scan and no finding may touch them (:func:`placeholder_spans`).
* A value glued to a finding (``<email>AKIA…``) has no boundary the first time; the
  neighbourhood of each finding is scanned again with the findings masked out
  (:func:`rescan_masked`), as after redaction.
* Hits that misread a URL-like match are dropped (:func:`drop_misreadings`), and overlapping
  hits merge into one finding, named by the most specific rule (highest priority, then
  longest) (:func:`merge`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import re2

from domestique.detect.confirm import Claim
from domestique.detect.finding import Finding
from domestique.detect.re2opts import RE2_OPTIONS
from domestique.keys import Fingerprinter, mask_preview

MASK_CHAR = "\x00"  # stands in for a found value on a re-scan: a boundary, never a secret
MASK_ROUNDS = 2
RESCAN_MARGIN = 512


# The firewall's placeholder for a redacted value, ``[REDACTED:<type>:<8 hex>]``, where the type
# is a finding's code without its family (``secret.github_token`` -> ``github_token``; the same
# rule as domestique.redact's placeholder_type). Its shape holds no secret: the type must be
# the type of one of this scanner's own codes, and 8 hex digits (32 bits of a keyed hash) are
# no credential. Text of that shape is not scanned: it is masked (a boundary, as a redacted
# value is) and no finding may touch it.
PLACEHOLDER_RE = re2.compile(r"\[REDACTED:([a-z0-9_]+):[0-9a-f]{8}\]", RE2_OPTIONS)
_TYPE_CLEAN = re2.compile(r"[^a-z0-9_]+")


def placeholder_type(code: str) -> str:
    """The placeholder type of a code: ``secret.github_token`` -> ``github_token``."""
    rest = code.split(".", 1)[1] if "." in code else code
    return _TYPE_CLEAN.sub("_", rest.lower()).strip("_")[:40] or "value"


def placeholder_spans(text: str, types: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of the pieces of ``text`` shaped as a placeholder of one of ``types``, in order."""
    if "[REDACTED:" not in text:
        return []
    return [m.span() for m in PLACEHOLDER_RE.finditer(text) if m.group(1) in types]


def mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    pieces: list[str] = []
    pos = 0
    for s, e in spans:
        pieces += (text[pos:s], MASK_CHAR * (e - s))
        pos = e
    pieces.append(text[pos:])
    return "".join(pieces)


def overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s < end and start < e for s, e in spans)


@dataclass(frozen=True, slots=True)
class Hit:
    code: str
    priority: int
    start: int
    end: int
    value: str


def drop_misreadings(
    out: list[tuple[str, int, int, int, str]], claims: list[Claim]
) -> list[tuple[str, int, int, int, str]]:
    """``out`` without the lower-priority hits that misread a claims_match rule's match.

    In ``postgres://admin:Tr0ub4dor@db.internal`` the e-mail rule reads ``Tr0ub4dor@db.internal``:
    the password and the host as one address. Merged, it would stretch the password's finding
    over the host. A hit is dropped when a higher-priority claim's whole match holds it and it
    runs from inside the claim's value out over one edge; a hit wholly inside the value, wholly
    outside it (an e-mail address as the user name), or around all of it (``token = '<the
    whole URL>'``, another reading of the value) is kept.
    """
    if not claims:
        return out
    kept = []
    for hit in out:
        _, prio, s, e, _ = hit
        if not any(
            prio < cp and ms <= s and e <= me and (vs <= s < ve < e or s < vs < e <= ve)
            for cp, ms, me, vs, ve in claims
        ):
            kept.append(hit)
    return kept


def rescan_masked(
    text: str,
    hits: list[Hit],
    failed: set[str],
    collect: Callable[[str], tuple[list[Hit], set[str]]],
) -> list[Hit]:
    """Scan again around findings with them masked out, until nothing new (2 rounds at most).

    A value glued to a finding (``<email>AKIA…``) has no boundary the first time; once the
    finding is masked it has one, exactly as after redaction. Only the neighbourhood of each
    finding is scanned again, so text with few findings pays little.
    """
    for _ in range(MASK_ROUNDS):
        if not hits:
            return hits
        covered = sorted((h.start, h.end) for h in hits)
        regions: list[list[int]] = []
        for start, end in covered:
            a, b = max(0, start - RESCAN_MARGIN), min(len(text), end + RESCAN_MARGIN)
            if regions and a <= regions[-1][1]:
                regions[-1][1] = max(regions[-1][1], b)
            else:
                regions.append([a, b])
        new: list[Hit] = []
        for a, b in regions:
            pieces: list[str] = []
            pos = a
            for start, end in covered:
                if end <= pos or start >= b:
                    continue
                s = max(start, pos)
                e = min(end, b)
                pieces += (text[pos:s], MASK_CHAR * (e - s))
                pos = e
            pieces.append(text[pos:b])
            again, more_failed = collect("".join(pieces))
            failed |= more_failed
            for h in again:
                hs, he = h.start + a, h.end + a
                if MASK_CHAR in h.value or any(s <= hs and he <= e for s, e in covered):
                    continue
                new.append(Hit(h.code, h.priority, hs, he, h.value))
        if not new:
            return hits
        hits = hits + new
    return hits


def merge(hits: list[Hit], fingerprinter: Fingerprinter) -> list[Finding]:
    """One finding per cluster of overlapping hits, sorted by start."""
    hits = sorted((h for h in hits if h.end > h.start), key=lambda h: (h.start, -h.end))
    findings: list[Finding] = []
    cluster: list[Hit] = []
    cluster_end = -1

    def flush() -> None:
        if not cluster:
            return
        best = max(cluster, key=lambda h: (h.priority, h.end - h.start))
        start = min(h.start for h in cluster)
        findings.append(
            Finding(
                best.code,
                start,
                cluster_end,
                fingerprinter.fingerprint(best.value),
                mask_preview(best.value),
            )
        )
        cluster.clear()

    for h in hits:
        if cluster and h.start >= cluster_end:
            flush()
        cluster.append(h)
        cluster_end = max(cluster_end, h.end) if len(cluster) > 1 else h.end
    flush()
    return findings
