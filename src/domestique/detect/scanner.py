"""The default scanner (per caller's home, environment and working directory, cached), and
placeholder redaction over finding spans."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from domestique.detect.customer_records import CustomerRecords, records_dir
from domestique.detect.engine import Scanner, TextDetector
from domestique.detect.finding import Finding
from domestique.detect.known_values import KnownValues, dotenv_files, secret_env_values
from domestique.detect.ruleset import builtin_rules
from domestique.keys import Fingerprinter, domestique_home

REDACTED = "[REDACTED]"
# A long-lived daemon serves many (working directory, environment) pairs: keep the most recent.
MAX_CACHED_SCANNERS = 32

_LOCK = threading.RLock()
_RULES: list[Scanner] = []  # the compiled built-in rules, once per process
_KEYS: dict[str, Fingerprinter] = {}  # home -> its fingerprinting key
_RECORDS: dict[str, tuple[tuple[object, ...], TextDetector]] = {}  # home -> (signature, detector)
_CACHE: OrderedDict[tuple[object, ...], Scanner] = OrderedDict()  # LRU, see _scanner_key


class _BrokenSource:
    """Stands in for a detector whose data could not be loaded: every scan reports the error."""

    priority = 0

    def __init__(self, code: str) -> None:
        self.code = code

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        raise RuntimeError(f"{self.code} data could not be loaded")


def _compiled_rules() -> Scanner:
    with _LOCK:
        if not _RULES:
            _RULES.append(Scanner(builtin_rules(), Fingerprinter(os.urandom(32))))
        return _RULES[0]


def _files_signature(paths: Sequence[Path]) -> tuple[object, ...]:
    """What changes when one of ``paths`` is edited, added or removed (no content is read)."""
    out: list[object] = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(p), None))
    return tuple(out)


def _records_paths(home: Path) -> list[Path]:
    directory = records_dir(home)
    try:
        return sorted(directory.glob("*.json")) if directory.is_dir() else []
    except OSError:
        return [directory]  # unreadable: its signature changes when it becomes readable


def _records(home: Path, fingerprinter: Fingerprinter) -> tuple[tuple[object, ...], TextDetector]:
    """The records detector of ``home``, reloaded when a record file changes."""
    sig = _files_signature(_records_paths(home))
    cached = _RECORDS.get(str(home))
    if cached is not None and cached[0] == sig:
        return cached
    detector: TextDetector
    try:
        detector = CustomerRecords.load(fingerprinter, home)
    except Exception:  # noqa: BLE001 - becomes engine.detector_error on every scan
        detector = _BrokenSource("records.customer")
    _RECORDS[str(home)] = (sig, detector)
    return sig, detector


def build_scanner(
    home: Path | None = None,
    cwd: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> Scanner:
    """A new scanner: built-in rules, known values of ``env`` and ``cwd``, records of ``home``.

    ``env`` defaults to this process's environment, ``cwd`` to its working directory. Data that
    cannot be loaded (a damaged record index) does not fail open: that detector then reports
    ``engine.detector_error`` on every scan.
    """
    resolved = (home or domestique_home()).expanduser()
    fingerprinter = Fingerprinter.for_home(resolved)
    _, records = _records(resolved, fingerprinter)
    return _assemble(fingerprinter, env, cwd, records)


def _assemble(
    fingerprinter: Fingerprinter,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    records: TextDetector,
) -> Scanner:
    detectors: list[TextDetector] = []
    try:
        known = KnownValues.from_environment(fingerprinter, env=env, cwd=cwd)
        if known.size:
            detectors.append(known)
    except Exception:  # noqa: BLE001 - becomes engine.detector_error on every scan
        detectors.append(_BrokenSource("secret.known_value"))
    if getattr(records, "size", 1):  # an empty record set costs nothing; a broken one stays
        detectors.append(records)
    return _compiled_rules().derive(fingerprinter, detectors)


def default_scanner(
    home: Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Scanner:
    """The scanner for a caller: compiled rules once per process, plus the caller's own data.

    Known values come from ``env`` (default: this process's environment) and the ``.env`` files
    of ``cwd`` (default: this process's working directory); customer records from ``home``. A
    long-lived daemon passes each hook caller's environment and working directory.

    Cached: the key is the home, the resolved working directory, a keyed HMAC of the secret-
    looking environment values (no raw value is kept in the key) and the modification times of
    the ``.env`` and record files, so an edited ``.env`` or a ``records add`` in another process
    is picked up. At most ``MAX_CACHED_SCANNERS`` are kept (least recently used dropped).
    """
    resolved = (home or domestique_home()).expanduser()
    where = (cwd if cwd is not None else Path.cwd()).resolve()
    environ: Mapping[str, str] = os.environ if env is None else env
    with _LOCK:
        fingerprinter = _KEYS.get(str(resolved))
        if fingerprinter is None:
            fingerprinter = _KEYS[str(resolved)] = Fingerprinter.for_home(resolved)
        records_sig, records = _records(resolved, fingerprinter)
        values = sorted(set(secret_env_values(environ)))
        env_digest = fingerprinter.digest("\x00".join(values)).hex()
        key = (
            str(resolved),
            str(where),
            env_digest,
            _files_signature(dotenv_files(where)),
            records_sig,
        )
        scanner = _CACHE.get(key)
        if scanner is not None:
            _CACHE.move_to_end(key)
            return scanner
        scanner = _assemble(fingerprinter, environ, where, records)
        _CACHE[key] = scanner
        while len(_CACHE) > MAX_CACHED_SCANNERS:
            _CACHE.popitem(last=False)
        return scanner


def clear_cache() -> None:
    """Forget cached scanners, keys and record sets (tests; a ``records`` command's own process)."""
    with _LOCK:
        _CACHE.clear()
        _KEYS.clear()
        _RECORDS.clear()


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
