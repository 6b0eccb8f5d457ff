"""The fail-closed boundary: exceptions deny with an engine code; failed writes deny."""

from __future__ import annotations

import pytest
from foundation_helpers import make_record

from domestique.boundary import error_reason, fail_closed, record_or_deny
from domestique.records import Action, DecisionRecord, Reason, Verdict

SECRET = "ghp_Zq8mR2vT6yK1pL4nX9wB3cF7hJ0dS5aE2gU1"


def _crash() -> Verdict:
    raise ValueError(f"could not parse {SECRET}")


def test_exception_becomes_deny_without_its_message() -> None:
    """A crash denies with engine.internal_error naming the type, never the message."""
    verdict = fail_closed(_crash)
    assert verdict.action is Action.DENY
    assert verdict.codes == ("engine.internal_error",)
    message = verdict.reasons[0].message
    assert "ValueError" in message
    assert "_crash" in message
    assert SECRET not in message
    assert "could not parse" not in message


def test_component_code_and_block() -> None:
    """The firewall stops with block; a caller may name its own engine code."""
    verdict = fail_closed(_crash, stop=Action.BLOCK, code="engine.detector_error")
    assert verdict == Verdict(Action.BLOCK, (verdict.reasons[0],))
    assert verdict.codes == ("engine.detector_error",)


def test_interrupt_and_bad_return_deny() -> None:
    """KeyboardInterrupt and a judge that returns no Verdict both deny."""

    def interrupted() -> Verdict:
        raise KeyboardInterrupt

    assert fail_closed(interrupted).action is Action.DENY
    assert fail_closed(lambda: None).action is Action.DENY  # type: ignore[arg-type,return-value]


def test_good_verdict_passes_through() -> None:
    """A judge that returns a verdict is not touched."""
    verdict = Verdict(Action.ALLOW, ())
    assert fail_closed(lambda: verdict) is verdict


def test_boundary_refuses_non_stopping_actions() -> None:
    """A boundary that would 'fail' to allow is a programming error."""
    with pytest.raises(ValueError, match="deny or block"):
        fail_closed(_crash, stop=Action.ALLOW)


def test_failing_append_turns_record_into_stop() -> None:
    """A failed audit write adds audit.write_failed and stops; the secret never leaks."""
    record = make_record(action=Action.ALLOW)

    def append(_: DecisionRecord) -> None:
        raise OSError(f"disk full while writing {SECRET}")

    out = record_or_deny(append, record)
    assert out.action is Action.DENY
    assert out.codes[-1] == "audit.write_failed"
    assert SECRET not in out.reasons[-1].message
    assert out.id == record.id
    blocked = record_or_deny(append, record, stop=Action.BLOCK)
    assert blocked.action is Action.BLOCK


def test_successful_append_returns_the_record() -> None:
    """When the write succeeds the decision is unchanged."""
    record = make_record(action=Action.REDACT)
    stored: list[DecisionRecord] = []
    assert record_or_deny(stored.append, record) is record
    assert stored == [record]


def test_error_reason_without_traceback() -> None:
    """An exception never raised (no traceback) still yields a reason."""
    reason = error_reason(RuntimeError(SECRET))
    assert reason == Reason("engine.internal_error", "RuntimeError; failing closed")
