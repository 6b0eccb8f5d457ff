"""The fail-closed boundary every I/O shell (CLI, hooks, proxy) wraps around the core.

Any exception inside the core becomes a deny/block :class:`Verdict` with an ``engine.*`` reason
code, and a record that cannot be written turns its decision into deny/block with
``audit.write_failed``. Frameworks' own error handlers are never relied on to fail closed.

Exception *messages* are never copied into reasons: they can quote the judged input (a secret).
A failure of the machine (a full disk, a read-only or locked file: :class:`OSError`,
:mod:`sqlite3` errors) is named by its cause and the file it hit, from the errno or SQLite's
result code, never from the message. Any other exception is a bug in Domestique: the reason names
its type and where it was raised, for the bug report. An audit store failure never names a
code location: it names the store's path and the cause.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

from domestique import frozen_class
from domestique.records import Action, DecisionRecord, Reason, Verdict

# errno values a user can act on, in plain words; the rest use the C library's own text.
_ERRNO_WORDS = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOTDIR: "a path component is not a directory",
    errno.ENOENT: "no such file or directory",
    errno.EIO: "input/output error",
}

# SQLite result codes (primary code, low byte) in plain words.
_SQLITE_WORDS = {
    "SQLITE_FULL": "disk full",
    "SQLITE_READONLY": "the file or its folder is read-only",
    "SQLITE_CANTOPEN": "the file cannot be opened (missing folder or no permission)",
    "SQLITE_PERM": "permission denied",
    "SQLITE_BUSY": "locked by another process",
    "SQLITE_LOCKED": "locked by another connection",
    "SQLITE_IOERR": "input/output error",
    "SQLITE_CORRUPT": "the file is damaged",
    "SQLITE_NOTADB": "the file is not a database",
    "SQLITE_NOMEM": "out of memory",
}


def describe_cause(exc: BaseException) -> str | None:
    """The cause of a machine failure in words, or None when ``exc`` is not one.

    Built from the errno or SQLite's result code only: an exception's message is never quoted.
    """
    if isinstance(exc, OSError) and exc.errno is not None:
        words = _ERRNO_WORDS.get(exc.errno) or os.strerror(exc.errno).lower()
        return f"{words} (errno {exc.errno})"
    # Only a process that loaded sqlite3 can raise its errors (a hook deciding in-process
    # without the audit store has not): it is not imported here for that.
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", None)
        if isinstance(name, str) and name.startswith("SQLITE_"):
            primary = "_".join(name.split("_")[:2])  # SQLITE_READONLY_DBMOVED -> SQLITE_READONLY
            return f"{_SQLITE_WORDS.get(primary, 'database error')} ({name})"
        return f"database error ({type(exc).__name__})"
    if isinstance(exc, MemoryError):
        return "out of memory"
    return None


def error_reason(exc: BaseException, code: str = "engine.internal_error") -> Reason:
    """A reason for ``exc``; never its message (see the module docstring).

    An exception carrying ``store_path`` and ``cause`` (``AuditStoreError``) names both. A
    machine failure names its cause (and the file an :class:`OSError` names). An audit write
    failure never names a code location; any other exception names its type and the innermost
    frame.
    """
    store_path = getattr(exc, "store_path", None)
    cause = getattr(exc, "cause", None)
    if isinstance(store_path, Path) and isinstance(cause, str):
        return Reason(code, f"cannot write the audit store {store_path}: {cause}; failing closed")
    described = describe_cause(exc)
    if described is not None:
        filename = getattr(exc, "filename", None)
        on = f"{filename}: " if isinstance(filename, str) else ""
        what = "cannot write the audit store: " if code == "audit.write_failed" else ""
        return Reason(code, f"{what}{on}{described}; failing closed")
    if code == "audit.write_failed":
        return Reason(code, f"cannot write the audit store: {type(exc).__name__}; failing closed")
    where = ""
    tb = None
    if exc.__traceback__:
        import traceback  # an error path: kept off the hook's import time

        tb = traceback.extract_tb(exc.__traceback__)
    if tb:
        frame = tb[-1]
        where = f" at {Path(frame.filename).name}:{frame.lineno} in {frame.name}"
    return Reason(code=code, message=f"{type(exc).__name__}{where}; failing closed")


def stop_action(component_stops_with: Action) -> Action:
    """deny for the guard and hooks, block for the firewall; anything else is a caller bug."""
    if component_stops_with not in (Action.DENY, Action.BLOCK):
        raise ValueError(
            f"a fail-closed boundary stops with deny or block, not {component_stops_with}"
        )
    return component_stops_with


def fail_closed(
    judge: Callable[[], Verdict],
    *,
    stop: Action = Action.DENY,
    code: str = "engine.internal_error",
) -> Verdict:
    """Run ``judge``; on any exception return ``Verdict(stop, [reason with code])``.

    ``KeyboardInterrupt`` and ``SystemExit`` also deny: an interrupted judgement is not an allow.
    """
    action = stop_action(stop)
    try:
        verdict = judge()
    except BaseException as exc:  # noqa: BLE001 - the boundary exists to catch everything
        return Verdict(action, (error_reason(exc, code),))
    result: object = verdict  # untyped callers can hand back anything
    if not isinstance(result, Verdict):
        return Verdict(action, (Reason(code, "judge returned no verdict; failing closed"),))
    return result


def record_or_deny(
    append: Callable[[DecisionRecord], object],
    record: DecisionRecord,
    *,
    stop: Action = Action.DENY,
) -> DecisionRecord:
    """Append ``record`` with ``append``; if that fails, return it turned into ``stop``.

    The returned record is the decision that must be enforced. When the write failed, the
    returned record carries ``audit.write_failed`` (and is not itself stored: the store failed).
    An ``append`` that returns a :class:`DecisionRecord` (:func:`domestique.audit.
    record_decision`: the record as masked and stored, or turned into ``stop`` when it could not
    be) hands back the decision to enforce; it is taken when its action is ``record``'s own or
    ``stop``, never when it would weaken the decision.
    """
    action = stop_action(stop)
    try:
        stored = append(record)
    except BaseException as exc:  # noqa: BLE001 - an unrecorded decision must not allow
        reason = error_reason(exc, "audit.write_failed")
        return frozen_class.replace(
            record, action=action, reasons=(*record.reasons, reason), would_action=None
        )
    if isinstance(stored, DecisionRecord) and stored.action in (record.action, action):
        return stored
    return record


def decide_and_record(
    judge: Callable[[], Verdict],
    build: Callable[[Verdict], DecisionRecord],
    append: Callable[[DecisionRecord], object],
    *,
    stop: Action = Action.DENY,
    code: str = "engine.internal_error",
) -> DecisionRecord:
    """The one boundary every shell calls: judge, build the record, store it, enforce it.

    - ``judge`` raising (or returning no :class:`Verdict`) becomes ``stop`` with ``code``;
    - ``build`` raising is retried once with a ``stop`` verdict naming the failure, so the
      decision that is stored and enforced is the stop, never the judged allow;
    - ``append`` failing turns the decision into ``stop`` with ``audit.write_failed``.

    The returned record is the decision to enforce. Only a ``build`` that fails on its own stop
    verdict too propagates its exception: the caller then has nothing to record and must answer
    ``stop`` itself (its outermost handler does).
    """
    action = stop_action(stop)
    verdict = fail_closed(judge, stop=action, code=code)
    try:
        record = build(verdict)
    except BaseException as exc:  # noqa: BLE001 - a decision that cannot be built must not allow
        failed = Verdict(action, (*verdict.reasons, error_reason(exc, code)))
        record = build(failed)
        if record.action is not action:
            record = frozen_class.replace(record, action=action, would_action=None)
    return record_or_deny(append, record, stop=action)
