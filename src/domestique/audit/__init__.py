"""The tamper-evident audit log: append decision records, verify the chain, read them back.

``record_decision(record)`` is what every component calls after deciding: it appends the record
or, when that fails, returns the decision turned into deny/block with ``audit.write_failed``
(an unrecorded decision never allows). See :mod:`domestique.audit._store` for the chain and the
checkpoint, :mod:`domestique.audit._verify` for what tampering is and is not detected.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from domestique.boundary import record_or_deny
from domestique.keys import domestique_home
from domestique.records import Action, DecisionRecord

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing

if TYPE_CHECKING:  # imported on first use: a hook that spools its record never needs them
    from domestique.audit._store import (
        DB_NAME,
        GENESIS_HASH,
        HEAD_NAME,
        AuditStore,
        AuditStoreError,
        Checkpoint,
        StoredRow,
        chain_hash,
    )
    from domestique.audit._verify import VerifyResult, verify

_STORE_NAMES = frozenset(
    (
        "DB_NAME",
        "GENESIS_HASH",
        "HEAD_NAME",
        "AuditStore",
        "AuditStoreError",
        "Checkpoint",
        "StoredRow",
        "chain_hash",
    )
)

__all__ = [
    "DB_NAME",
    "GENESIS_HASH",
    "HEAD_NAME",
    "AuditStore",
    "AuditStoreError",
    "Checkpoint",
    "StoredRow",
    "VerifyResult",
    "chain_hash",
    "mask_or_stop",
    "record_decision",
    "store_for",
    "verify",
]


def __getattr__(name: str) -> object:
    if name in ("verify", "VerifyResult"):
        from domestique.audit import _verify

        return getattr(_verify, name)
    if name in _STORE_NAMES:  # sqlite3, hashlib, json: loaded when the store is used
        from domestique.audit import _store

        return getattr(_store, name)
    raise AttributeError(f"module 'domestique.audit' has no attribute {name!r}")


_STORES: dict[tuple[str, int], AuditStore] = {}
_STORES_LOCK = threading.Lock()


def store_for(home: Path | None = None) -> AuditStore:
    """The process's open store for ``home`` (opened once per process; reopened after fork)."""
    from domestique.audit._store import AuditStore

    resolved = home if home is not None else domestique_home()
    key = (str(resolved), os.getpid())
    store = _STORES.get(key)
    if store is None:
        with _STORES_LOCK:
            store = _STORES.get(key)
            if store is None:
                store = AuditStore.open(resolved)
                _STORES[key] = store
    return store


def mask_or_stop(
    record: DecisionRecord, home: Path | None = None, *, stop: Action = Action.DENY
) -> tuple[DecisionRecord, bool]:
    """``(record masked, True)`` to store; on a masking error ``(record stopped, False)``.

    The stopped record carries ``stop`` and ``audit.write_failed`` and must not be stored: a
    raw secret cannot be ruled out. Every writer calls this before appending (the proxy's
    group commit too).
    """
    from domestique.audit._mask import mask_record

    try:
        # The last gate: no raw secret from the ancestry, the command or a path is stored.
        return mask_record(record, home), True
    except Exception as exc:  # noqa: BLE001 - cannot rule out a raw secret: store nothing, stop
        import dataclasses

        from domestique.boundary import error_reason, stop_action

        reason = error_reason(exc, "audit.write_failed")
        stopped = dataclasses.replace(
            record, action=stop_action(stop), reasons=(*record.reasons, reason), would_action=None
        )
        return stopped, False


def record_decision(
    record: DecisionRecord,
    *,
    home: Path | None = None,
    stop: Action = Action.DENY,
    spool: bool = False,
) -> DecisionRecord:
    """Append ``record``; on any failure return it turned into ``stop`` + audit.write_failed.

    The returned record is the decision to enforce. ``stop`` is deny for the guard and hooks,
    block for the firewall. ``spool``: write the masked record to the spool
    (:mod:`domestique.audit.spool`) for the store to chain later, without opening the store
    (a hook deciding in-process); when that fails, append to the store as usual.
    """
    record, ok = mask_or_stop(record, home, stop=stop)
    if not ok:
        return record
    if spool:
        from domestique.audit.spool import spool_line
        from domestique.records import to_canonical_json

        try:
            spool_line(
                home if home is not None else domestique_home(),
                record.id,
                to_canonical_json(record),
            )
            return record
        except Exception:  # noqa: BLE001, S110 - unwritable or full: the store takes it below
            pass

    def append(r: DecisionRecord) -> int:
        return store_for(home).append(r)

    return record_or_deny(append, record, stop=stop)
