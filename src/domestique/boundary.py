"""The fail-closed boundary every I/O shell (CLI, hooks, proxy) wraps around the core.

Any exception inside the core becomes a deny/block :class:`Verdict` with an ``engine.*`` reason
code, and a record that cannot be written turns its decision into deny/block with
``audit.write_failed``. Frameworks' own error handlers are never relied on to fail closed.

Exception *messages* are never copied into reasons: they can quote the judged input (a secret).
The reason names the exception type and where it was raised, nothing more.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable
from pathlib import Path

from domestique.records import Action, DecisionRecord, Reason, Verdict


def error_reason(exc: BaseException, code: str = "engine.internal_error") -> Reason:
    """A reason for ``exc`` that names its type and the innermost frame, never its message."""
    where = ""
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else None
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
    """
    action = stop_action(stop)
    try:
        append(record)
    except BaseException as exc:  # noqa: BLE001 - an unrecorded decision must not allow
        reason = error_reason(exc, "audit.write_failed")
        return dataclasses.replace(
            record, action=action, reasons=(*record.reasons, reason), would_action=None
        )
    return record
