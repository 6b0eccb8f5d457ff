"""The built-in rules, read through a cache of their parsed TOML tables.

Parsing the shipped rule files with ``tomllib`` costs 15-60 ms, which was most of what a
``domestique check`` spent masking its audit record and a large part of ``domestique scan``'s
start-up. The cache file (``$DOMESTIQUE_HOME/cache/rules.bin``) holds what ``tomllib`` returned
for each file (strings, numbers, booleans, lists and tables, as JSON: reading it runs no code,
unlike a pickle) under a key: a SHA-256 over every rule file's name and bytes, the package
version, the interpreter's version and this format's. Any edit to a rule file changes the key,
so a stale cache is never read.

On load every table still goes through :func:`~domestique.detect.ruleset.parse_rule` and the
duplicate-id check, exactly as when read from TOML: the cache can save the parse, it cannot
change, drop or add a rule. It is written atomically (a private temporary file renamed over
it) and checked on load: format, key, the shape of the data, and an HMAC of the payload under a
key derived from the per-install key (as the policy cache is), so a cache file edited by anyone
who cannot read that key (say, to empty a rule's keywords) is not read.

Fails safe: a missing, truncated, corrupt, foreign or stale cache is ignored and rebuilt from
the TOML files; a cache directory that cannot be created or written is skipped. The worst case is
the TOML parse the cache exists to save; a rule file that does not parse raises
:class:`~domestique.detect.ruleset.RuleError` as it does without the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import sys
from pathlib import Path
from typing import Any

from domestique import __version__
from domestique.detect.ruleset import (
    RULE_FILES_PACKAGE,
    Rule,
    RuleError,
    parse_rule,
    rule_tables,
    unique_rules,
)

CACHE_NAME = "rules.bin"
FORMAT = 1
MAGIC = b"domestique-rules\n"
_DIGEST = 32  # bytes of a SHA-256 (the key) and of an HMAC-SHA256 (the payload's)
_MAC_LABEL = b"domestique rule cache v1"
# (source file name, its [[rules]] tables) per rule file, in file order.
Tables = list[tuple[str, list[Any]]]


def cache_path(home: Path) -> Path:
    return home / "cache" / CACHE_NAME


def rule_files() -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of every shipped ``.toml`` rule file, sorted by name."""
    directory = Path(__file__).with_name("rules")
    if directory.is_dir():  # an installed or editable package: plain files, no importlib cost
        names = sorted(n for n in os.listdir(directory) if n.endswith(".toml"))
        return [(n, (directory / n).read_bytes()) for n in names]
    from importlib import resources  # a zipped package

    files = [f for f in resources.files(RULE_FILES_PACKAGE).iterdir() if f.name.endswith(".toml")]
    return [(f.name, f.read_bytes()) for f in sorted(files, key=lambda f: f.name)]


def cache_key(files: list[tuple[str, bytes]]) -> bytes:
    """What the cache is valid for: the rule files' names and contents, the package, the
    interpreter (``tomllib`` comes with it) and this cache's format."""
    h = hashlib.sha256()
    h.update(f"{FORMAT}\0{__version__}\0{sys.implementation.name}\0{sys.version}\0".encode())
    for name, data in files:
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.digest()


def _parse_files(files: list[tuple[str, bytes]]) -> Tables:
    return [(name, rule_tables(data.decode("utf-8"), name)) for name, data in files]


def _rules(tables: Tables) -> tuple[Rule, ...]:
    rules = [parse_rule(t, name, compile_patterns=False) for name, ts in tables for t in ts]
    return unique_rules(rules)


def mac_key(home: Path) -> bytes:
    """The cache's HMAC key: derived from the install key under ``home`` (raises OSError
    when there is none to be had)."""
    from domestique.keys import install_key

    return hmac.new(install_key(home), _MAC_LABEL, hashlib.sha256).digest()


def _mac(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, payload, hashlib.sha256).digest()


def read_cache(path: Path, key: bytes, secret: bytes) -> Tables | None:
    """The tables stored at ``path`` for ``key``, their HMAC under ``secret`` checked; None when
    the file is missing, unreadable, damaged, written for another key or install, or not of the
    expected shape."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 2 * _DIGEST
    if len(blob) <= head or not blob.startswith(MAGIC):
        return None
    stored_key = blob[len(MAGIC) : len(MAGIC) + _DIGEST]
    digest = blob[len(MAGIC) + _DIGEST : head]
    payload = blob[head:]
    if stored_key != key or not hmac.compare_digest(digest, _mac(secret, payload)):
        return None
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        return None
    if not isinstance(data, list) or not all(
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], list)
        and all(isinstance(t, dict) for t in item[1])
        for item in data
    ):
        return None
    return [(name, tables) for name, tables in data]


def write_cache(path: Path, key: bytes, secret: bytes, tables: Tables) -> bool:
    """Store ``tables`` for ``key`` at ``path`` atomically, with their HMAC under ``secret``;
    False when it could not be."""
    try:
        payload = json.dumps(tables, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError):  # a TOML value JSON cannot hold (a date): no cache
        return False
    blob = MAGIC + key + _mac(secret, payload) + payload
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        from domestique.keys import ensure_private_dir

        ensure_private_dir(path.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)  # readers see the old file or the whole new one
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True


def cached_builtin_rules(home: Path | None = None) -> tuple[Rule, ...]:
    """The shipped rules (what :func:`~domestique.detect.ruleset.builtin_rules` returns), their
    TOML tables read from the cache under ``home`` (default: ``DOMESTIQUE_HOME``) when it is
    valid for the rule files as they are, else parsed and the cache rewritten.

    A cached table that no longer passes the rule checks (they changed since it was written)
    is not trusted: the files are parsed again, and their error, if any, is raised."""
    files = rule_files()
    key = cache_key(files)
    where: tuple[Path, bytes] | None
    try:
        if home is None:
            from domestique.keys import domestique_home

            home = domestique_home()
        where = cache_path(home), mac_key(home)
    except (OSError, RuntimeError):  # no home or no install key: parse, cache nothing
        where = None
    tables = read_cache(where[0], key, where[1]) if where is not None else None
    if tables is not None:
        try:
            return _rules(tables)
        except (RuleError, TypeError, ValueError, AttributeError):
            pass  # parsed again below: the files decide
    tables = _parse_files(files)
    rules = _rules(tables)
    if where is not None:
        write_cache(where[0], key, where[1], tables)
    return rules
