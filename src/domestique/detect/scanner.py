"""The per-process default scanner, and placeholder redaction over finding spans."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from domestique.detect.customer_records import CustomerRecords
from domestique.detect.engine import Scanner, TextDetector
from domestique.detect.finding import Finding
from domestique.detect.known_values import KnownValues
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter, domestique_home

REDACTED = "[REDACTED]"
_CACHE: dict[tuple[str, str], Scanner] = {}
_LOCK = threading.Lock()


class _BrokenSource:
    """Stands in for a detector whose data could not be loaded: every scan reports the error."""

    priority = 0

    def __init__(self, code: str) -> None:
        self.code = code

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        raise RuntimeError(f"{self.code} data could not be loaded")


def build_scanner(home: Path | None = None, cwd: Path | None = None) -> Scanner:
    """A new scanner: built-in rules, known values of the environment and ``cwd``, records.

    Data that cannot be loaded (a damaged record index) does not fail open: that detector then
    reports ``engine.detector_error`` on every scan.
    """
    fingerprinter = Fingerprinter.for_home(home)
    detectors: list[TextDetector] = []
    try:
        known = KnownValues.from_environment(fingerprinter, cwd=cwd)
        if known.size:
            detectors.append(known)
    except Exception:  # noqa: BLE001 - becomes engine.detector_error on every scan
        detectors.append(_BrokenSource("secret.known_value"))
    try:
        records = CustomerRecords.load(fingerprinter, home)
        if records.size:
            detectors.append(records)
    except Exception:  # noqa: BLE001 - becomes engine.detector_error on every scan
        detectors.append(_BrokenSource("records.customer"))
    return Scanner(builtin_rules(), fingerprinter, detectors)


def default_scanner(home: Path | None = None) -> Scanner:
    """The scanner for this process, compiled once per (home, working directory) and cached."""
    resolved = (home or domestique_home()).expanduser()
    key = (str(resolved), os.getcwd())
    scanner = _CACHE.get(key)
    if scanner is None:
        with _LOCK:
            scanner = _CACHE.get(key)
            if scanner is None:
                scanner = build_scanner(resolved, Path(key[1]))
                _CACHE[key] = scanner
    return scanner


def clear_cache() -> None:
    """Forget cached scanners (after ``records add``/``remove`` in the same process)."""
    with _LOCK:
        _CACHE.clear()


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
