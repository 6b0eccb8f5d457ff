"""The finding: what the detection engine reports, and nothing of the raw value beyond it."""

from __future__ import annotations

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
