"""Detection: text in, findings out. Secrets, personal data, known values, customer records.

Public surface::

    Finding            what was found: code, span, keyed fingerprint, masked preview
    Scanner            ``scan(text) -> list[Finding]``; never raises
    default_scanner()  the scanner for a caller: built-in rules (compiled once per process),
                       the caller's own secret values (``env`` and the .env files of ``cwd``,
                       by default this process's) and the registered customer records; cached
    redact_text()      replace every finding's span with a placeholder naming its code

The names are imported on first use: ``domestique.detect.codes`` (which the reason-code
registry reads) must not pull in RE2 and the automaton, so a process that only needs the codes
(a policy load, ``domestique check -- git status``) stays fast.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing

if TYPE_CHECKING:
    from domestique.detect.engine import Scanner
    from domestique.detect.finding import Finding, redact_text
    from domestique.detect.sources import default_scanner

__all__ = ["Finding", "Scanner", "default_scanner", "redact_text"]

_HOMES = {
    "Scanner": "domestique.detect.engine",
    "Finding": "domestique.detect.finding",
    "default_scanner": "domestique.detect.sources",
    "redact_text": "domestique.detect.finding",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'domestique.detect' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
