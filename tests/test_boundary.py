"""The fail-closed boundary: exceptions deny with an engine code; failed writes deny."""

from __future__ import annotations

import dataclasses

import pytest

from _helpers.records import make_record
from domestique.boundary import decide_and_record, error_reason, fail_closed, record_or_deny
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


def _build_from(verdict: Verdict) -> DecisionRecord:
    return dataclasses.replace(
        make_record(action=verdict.action), reasons=verdict.reasons, would_action=verdict.would
    )


def test_decide_and_record_stores_and_returns_the_judged_decision() -> None:
    """The happy path: the judged verdict is built, stored once and returned."""
    stored: list[DecisionRecord] = []
    verdict = Verdict(Action.REDACT, (Reason("secret.github_token", "masked"),))
    out = decide_and_record(lambda: verdict, _build_from, stored.append)
    assert out.action is Action.REDACT
    assert out.codes == ("secret.github_token",)
    assert stored == [out]


def test_decide_and_record_judge_crash_is_stored_as_stop() -> None:
    """A crashing judge is recorded and enforced as the stop, with the engine code."""
    stored: list[DecisionRecord] = []
    out = decide_and_record(_crash, _build_from, stored.append, stop=Action.BLOCK)
    assert out.action is Action.BLOCK
    assert out.codes == ("engine.internal_error",)
    assert stored == [out]
    assert SECRET not in out.reasons[0].message


def test_decide_and_record_build_crash_never_allows() -> None:
    """A record that cannot be built for an allow is rebuilt as the stop and stored."""
    stored: list[DecisionRecord] = []
    calls: list[Action] = []

    def build(verdict: Verdict) -> DecisionRecord:
        calls.append(verdict.action)
        if verdict.action is Action.ALLOW:
            raise KeyError(SECRET)
        return _build_from(verdict)

    out = decide_and_record(lambda: Verdict(Action.ALLOW), build, stored.append)
    assert calls == [Action.ALLOW, Action.DENY]
    assert out.action is Action.DENY
    assert out.codes == ("engine.internal_error",)
    assert "KeyError" in out.reasons[0].message
    assert SECRET not in out.reasons[0].message
    assert stored == [out]


def test_decide_and_record_build_that_ignores_the_stop_is_overridden() -> None:
    """Even a builder that writes its own action cannot turn the stop back into an allow."""

    def build(verdict: Verdict) -> DecisionRecord:
        if verdict.codes == ():
            raise ValueError("first build fails")
        return make_record(action=Action.ALLOW, codes=verdict.codes)

    out = decide_and_record(lambda: Verdict(Action.ALLOW), build, lambda _r: None)
    assert out.action is Action.DENY


def test_decide_and_record_failed_append_stops() -> None:
    """A store that refuses the record turns the decision into the stop."""

    def append(_: DecisionRecord) -> None:
        raise OSError(28, "No space left on device")

    out = decide_and_record(lambda: Verdict(Action.ALLOW), _build_from, append)
    assert out.action is Action.DENY
    assert out.codes[-1] == "audit.write_failed"
    assert "disk full" in out.reasons[-1].message


def test_decide_and_record_monitor_mode_failure_is_enforced() -> None:
    """A monitor-mode verdict whose record cannot be built is enforced as the stop."""

    def build(verdict: Verdict) -> DecisionRecord:
        if verdict.would is not None:
            raise RuntimeError("boom")
        return _build_from(verdict)

    monitored = Verdict(Action.ALLOW, (Reason("cmd.pipe_to_shell", "x"),), would=Action.DENY)
    out = decide_and_record(lambda: monitored, build, lambda _r: None)
    assert out.action is Action.DENY
    assert out.enforced


def test_an_append_that_returns_the_stored_record_hands_back_that_decision() -> None:
    """``append`` may return the record as stored (masked) or turned into a stop: that is the
    decision enforced; a returned record that would weaken the decision is ignored."""
    record = make_record(action=Action.ALLOW)
    stopped = dataclasses.replace(record, action=Action.DENY, reasons=(Reason("audit.x", "m"),))
    assert record_or_deny(lambda r: stopped, record) is stopped
    masked = dataclasses.replace(record, object={"command": "masked"})
    assert decide_and_record(lambda: Verdict(Action.ALLOW), lambda v: record, lambda r: masked) is (
        masked
    )
    denied = make_record(action=Action.DENY)
    assert record_or_deny(lambda r: record, denied) is denied  # an allow never replaces a deny
