"""Detection: text in, findings out. Secrets, personal data, known values, customer records.

Public surface::

    Finding            what was found: code, span, keyed fingerprint, masked preview
    Scanner            ``scan(text) -> list[Finding]``; never raises
    default_scanner()  the per-process scanner: built-in rules, the developer's own secret
                       values (environment and .env files) and the registered customer records
    redact_text()      replace every finding's span with a placeholder naming its code
"""

from __future__ import annotations

from domestique.detect.engine import Scanner
from domestique.detect.finding import Finding
from domestique.detect.scanner import default_scanner, redact_text

__all__ = ["Finding", "Scanner", "default_scanner", "redact_text"]
