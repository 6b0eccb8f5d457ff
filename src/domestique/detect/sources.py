"""The I/O of detection: everything that reads the process, the disk or the records store.

* the default scanner per caller (home, environment, working directory), cached
  (:func:`default_scanner`), with the stat signatures that tell when its data changed;
* known values: the secret-looking environment variables and the ``.env`` files of the working
  tree (:func:`known_values`, :func:`dotenv_files`, :func:`dotenv_values`);
* customer records: the record index files under ``$DOMESTIQUE_HOME/records`` (:func:`add_records`,
  :func:`list_records`, :func:`remove_records`, :func:`load_records`).

The detectors themselves (:mod:`~domestique.detect.known_values`,
:mod:`~domestique.detect.customer_records`, the engine) are pure: data in, spans out.
"""

from __future__ import annotations

import csv
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from domestique.detect.customer_records import (
    SET_NAME_RE,
    CustomerRecords,
    RecordsError,
    RecordSetInfo,
    build_index,
)
from domestique.detect.engine import Scanner, TextDetector
from domestique.detect.known_values import (
    KnownValues,
    dotenv_files,
    dotenv_values,
    secret_env_values,
)
from domestique.detect.rule_cache import cached_builtin_rules
from domestique.keys import Fingerprinter, domestique_home, ensure_private_dir

# A long-lived daemon serves many (working directory, environment) pairs: keep the most recent.
MAX_CACHED_SCANNERS = 32

_LOCK = threading.RLock()
_RULES: list[Scanner] = []  # the compiled built-in rules, once per process
_KEYS: dict[str, Fingerprinter] = {}  # home -> its fingerprinting key
# The last environment asked about and its sorted secret-looking values: a daemon's callers
# repeat their environment, and the regexes over every variable cost more than comparing.
_ENV_VALUES: list[tuple[dict[str, str], list[str]]] = []
_RECORDS: dict[str, tuple[tuple[object, ...], TextDetector]] = {}  # home -> (signature, detector)
_CACHE: OrderedDict[tuple[object, ...], Scanner] = OrderedDict()  # LRU, see _scanner_key


class _BrokenSource:
    """Stands in for a detector whose data could not be loaded: every scan reports the error."""

    priority = 0

    def __init__(self, code: str) -> None:
        self.code = code

    def find(self, text: str) -> Iterator[tuple[int, int, str]]:
        raise RuntimeError(f"{self.code} data could not be loaded")


# -- known values: the environment and the .env files of the working tree


def known_values(
    fingerprinter: Fingerprinter,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> KnownValues:
    """The developer's known values: secret-looking env vars plus ``.env`` files of ``cwd``."""
    environ = os.environ if env is None else env
    values = secret_env_values(environ)
    values += dotenv_values(cwd if cwd is not None else Path.cwd())
    return KnownValues(fingerprinter, values)


# -- customer records: the index files under $DOMESTIQUE_HOME/records


def records_dir(home: Path | None = None) -> Path:
    return (home or domestique_home()) / "records"


def add_records(
    csv_path: Path,
    columns: Sequence[str],
    fingerprinter: Fingerprinter,
    *,
    name: str | None = None,
    home: Path | None = None,
) -> RecordSetInfo:
    """Index the chosen ``columns`` of ``csv_path`` and store the index (fingerprints only)."""
    set_name = name or csv_path.stem
    if not SET_NAME_RE.match(set_name):
        raise RecordsError(f"record set name {set_name!r}: use letters, digits, '.', '_', '-'")
    if len(columns) < 1:
        raise RecordsError("give at least one column")
    with csv_path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise RecordsError(f"{csv_path}: empty CSV")
        lookup = {h.strip().casefold(): i for i, h in enumerate(header)}
        missing = [c for c in columns if c.strip().casefold() not in lookup]
        if missing:
            raise RecordsError(f"{csv_path}: no column(s) {', '.join(missing)} in the header")
        idx = [lookup[c.strip().casefold()] for c in columns]
        rows = [[row[i] if i < len(row) else "" for i in idx] for row in reader]
    index = build_index(rows, fingerprinter)
    added = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc = {
        "version": 1,
        "name": set_name,
        "columns": list(columns),
        "rows": len(rows),
        "max_words": index.max_words,
        "shapes": list(index.shapes),
        "added": added,
        "cells": index.cells,
    }
    directory = ensure_private_dir(records_dir(home))
    target = directory / f"{set_name}.json"
    tmp = directory / f".{set_name}.json.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"), sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    cell_count = sum(map(len, index.cells.values()))
    return RecordSetInfo(set_name, tuple(columns), len(rows), cell_count, added)


def _load(path: Path) -> dict[str, object]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordsError(f"{path.name}: unreadable record index ({type(exc).__name__})") from None
    if (
        not isinstance(doc, dict)
        or doc.get("version") != 1
        or not isinstance(doc.get("cells"), dict)
    ):
        raise RecordsError(f"{path.name}: not a version 1 record index")
    return doc


def list_records(home: Path | None = None) -> list[RecordSetInfo]:
    out = []
    directory = records_dir(home)
    if not directory.is_dir():
        return []
    for path in sorted(directory.glob("*.json")):
        doc = _load(path)
        cells = doc["cells"]
        assert isinstance(cells, dict)
        out.append(
            RecordSetInfo(
                str(doc.get("name", path.stem)),
                tuple(str(c) for c in doc.get("columns", []) or []),  # type: ignore[attr-defined]
                int(doc.get("rows", 0)),  # type: ignore[call-overload]
                sum(len(v) for v in cells.values()),
                str(doc.get("added", "")),
            )
        )
    return out


def remove_records(name: str, home: Path | None = None) -> bool:
    """Delete the record set ``name``; False when there is none by that name."""
    if not SET_NAME_RE.match(name):
        return False
    path = records_dir(home) / f"{name}.json"
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def load_records(fingerprinter: Fingerprinter, home: Path | None = None) -> CustomerRecords:
    """Every record set under ``home``; raises :class:`RecordsError` on a damaged index."""
    directory = records_dir(home)
    paths = sorted(directory.glob("*.json")) if directory.is_dir() else []
    return CustomerRecords(fingerprinter, [_load(p) for p in paths])


# -- the default scanner


def _compiled_rules() -> Scanner:
    with _LOCK:
        if not _RULES:
            _RULES.append(Scanner(cached_builtin_rules(), Fingerprinter(os.urandom(32))))
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
        detector = load_records(fingerprinter, home)
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
        known = known_values(fingerprinter, env=env, cwd=cwd)
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
        values = _env_values(environ)
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


def _env_values(environ: Mapping[str, str]) -> list[str]:
    """``sorted(set(secret_env_values(environ)))``, kept for the last environment (under _LOCK)."""
    copy = dict(environ)
    if _ENV_VALUES and _ENV_VALUES[0][0] == copy:
        return _ENV_VALUES[0][1]
    values = sorted(set(secret_env_values(copy)))
    _ENV_VALUES[:] = [(copy, values)]
    return values


def clear_cache() -> None:
    """Forget cached scanners, keys and record sets (tests; a ``records`` command's own process)."""
    with _LOCK:
        _CACHE.clear()
        _ENV_VALUES.clear()
        _KEYS.clear()
        _RECORDS.clear()
