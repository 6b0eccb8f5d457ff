"""The finding: what the detection engine reports, and nothing of the raw value beyond it; and
:func:`redact_text`, the placeholder redaction over finding spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from domestique.records import Evidence


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing in the scanned text that must not leave.

    ``start``/``end`` are character offsets (Python ``str`` indices) into the text that was
    scanned, also when the detector saw the value through an evasion (escapes, zero-width
    characters, base64). ``fingerprint`` is the keyed HMAC of the value, ``preview`` its mask.
    """

    code: str
    start: int
    end: int
    fingerprint: str
    preview: str

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "start": self.start,
            "end": self.end,
            "fingerprint": self.fingerprint,
            "preview": self.preview,
        }

    def evidence(self, where: str) -> Evidence:
        """Evidence for a decision record: ``where`` plus this finding's preview and fingerprint."""
        return Evidence(where=where, preview=self.preview, fingerprint=self.fingerprint)


REDACTED = "[REDACTED]"


def redact_text(text: str, findings: Sequence[Finding]) -> str:
    """``text`` with each finding's span replaced by ``[REDACTED]``.

    Overlapping spans are redacted once, as their union. The placeholder names no code: a code
    such as ``secret.password_assignment`` would itself read like a keyword to the next scan.
    """
    spans = sorted((f.start, f.end) for f in findings if f.end > f.start)
    out: list[str] = []
    pos = 0
    for start, end in spans:
        if end <= pos:
            continue
        out.append(text[pos : max(start, pos)])
        out.append(REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)
