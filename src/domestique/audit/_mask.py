"""The last gate before the audit log: raw secrets in a record's free text are masked.

DESIGN: "Raw secret values are never written to the audit log." Components mask what they
judge, but a record also carries text nobody judged: the command lines of the process
ancestry (``claude -p "my token is …"``), a command the guard allowed without scanning
(``ls AKIA…``), file paths and tool names. Before a record is appended, every such string that
holds a token-like run is scanned by the detection engine and each finding is replaced by its
masked preview. Strings without such a run (the common case) cost one regex and never load the
engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from domestique import frozen_class
from domestique.records import DecisionRecord, JSONValue

# A run of token characters, long enough to be a token, with a letter and a digit in it.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+=\-]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Keys of ``object`` that hold text taken from the judged input (guard and hooks). The proxy's
# own fields (route, model, sizes) are not input text and are left alone.
MASKED_OBJECT_KEYS = frozenset(
    {"command", "unfolded", "cwd", "paths", "path", "tool", "event", "urls", "url", "file"}
)


# Short secrets a token run misses: URL user-info with a password, ``-pPASSWORD``, and any
# text that names a credential (``password=…``, ``--token …``, ``Authorization:``).
_CREDENTIAL_HINT = re.compile(
    r"://[^/\s:@]*:[^@\s]+@|(?:^|\s)-p\S{4,}|pass|pwd|secret|token|auth|api[_-]?key|credential",
    re.IGNORECASE,
)


def may_hold_secret(text: str) -> bool:
    """True when ``text`` could hold a secret: a token-like run (UUIDs are not) or a hint."""
    if _CREDENTIAL_HINT.search(text):
        return True
    return any(
        any(c.isdigit() for c in run) and any(c.isalpha() for c in run) and not _UUID.fullmatch(run)
        for run in _TOKEN_RUN.findall(text)
    )


def _masker(home: Path | None) -> Callable[[str], str]:
    from domestique.detect import default_scanner

    scanner = default_scanner(home)

    def mask(text: str) -> str:
        findings = sorted(scanner.scan(text), key=lambda f: f.start, reverse=True)
        last = len(text) + 1
        for f in findings:
            if f.end > last:
                continue
            text = text[: f.start] + (f.preview or "…") + text[f.end :]
            last = f.start
        return text

    return mask


def _strings(value: JSONValue) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _apply(value: JSONValue, mask: Callable[[str], str]) -> JSONValue:
    if isinstance(value, str):
        return mask(value) if may_hold_secret(value) else value
    if isinstance(value, list):
        return [_apply(v, mask) for v in value]
    if isinstance(value, dict):
        return {k: _apply(v, mask) for k, v in value.items()}
    return value


def with_org_fingerprints(record: DecisionRecord) -> DecisionRecord:
    """``record`` with ``org_fingerprint`` set on evidence whose value this process
    fingerprinted under an enrolled install key; ``record`` itself when there is none."""
    from domestique.keys import org_fingerprint_of

    if not any(
        e.fingerprint and not e.org_fingerprint and org_fingerprint_of(e.fingerprint)
        for r in record.reasons
        for e in r.evidence
    ):
        return record
    reasons = tuple(
        frozen_class.replace(
            r,
            evidence=tuple(
                frozen_class.replace(e, org_fingerprint=org_fingerprint_of(e.fingerprint))
                if e.fingerprint and not e.org_fingerprint and org_fingerprint_of(e.fingerprint)
                else e
                for e in r.evidence
            ),
        )
        for r in record.reasons
    )
    return frozen_class.replace(record, reasons=reasons)


def mask_record(record: DecisionRecord, home: Path | None = None) -> DecisionRecord:
    """``record`` with raw secrets masked in its ancestry, input-derived object fields, reason
    messages and evidence previews (defence in depth: components mask what they judged).
    Returns ``record`` itself when nothing could hold a secret.

    On an enrolled endpoint each evidence fingerprint also gets its organisation fingerprint
    (:func:`domestique.keys.org_fingerprint_of`), for the hub's "one leaked value"."""
    record = with_org_fingerprints(record)
    texts = [a.cmdline for a in record.subject.ancestry if a.cmdline]
    texts += list(record.subject.markers)  # e.g. the client's user-agent, as the client sent it
    texts += [r.message for r in record.reasons]
    texts += [e.preview for r in record.reasons for e in r.evidence if e.preview]
    texts += [s for k, v in record.object.items() if k in MASKED_OBJECT_KEYS for s in _strings(v)]
    if not any(may_hold_secret(t) for t in texts):
        return record
    mask = _masker(home)

    def text(value: str) -> str:
        return mask(value) if may_hold_secret(value) else value

    ancestry = tuple(
        frozen_class.replace(a, cmdline=text(a.cmdline)) if a.cmdline else a
        for a in record.subject.ancestry
    )
    reasons = tuple(
        frozen_class.replace(
            r,
            message=text(r.message),
            evidence=tuple(
                frozen_class.replace(e, preview=text(e.preview)) if e.preview else e
                for e in r.evidence
            ),
        )
        for r in record.reasons
    )
    obj = {k: (_apply(v, mask) if k in MASKED_OBJECT_KEYS else v) for k, v in record.object.items()}
    markers = tuple(text(m) for m in record.subject.markers)
    subject = frozen_class.replace(record.subject, ancestry=ancestry, markers=markers)
    return frozen_class.replace(record, subject=subject, reasons=reasons, object=obj)
