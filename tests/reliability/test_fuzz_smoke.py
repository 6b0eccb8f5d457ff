"""A short run of every fuzzing harness (``fuzz/``): the seed corpus and saved findings are
replayed, then generated inputs for a fraction of a second each, the same ones on every run
(derandomized: the suite never fails at random; ``./dev fuzz SECONDS`` runs them for longer,
with fresh inputs); the invariants are in each harness's docstring."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz._harness import run, seeds  # the repository root is on the path (pytest pythonpath)
from fuzz.run import TARGETS, target

SECONDS = 0.4


@pytest.mark.parametrize("name", TARGETS)
def test_harness_holds_its_invariants(name: str) -> None:
    outcome = run(target(name), SECONDS, save=False, derandomize=True)
    assert outcome.finding is None, outcome.finding
    assert outcome.executions > len(seeds(name)), "no generated input ran"


@pytest.mark.parametrize("name", TARGETS)
def test_every_target_has_a_seed_corpus(name: str) -> None:
    assert seeds(name), f"fuzz/corpus/{name}/ is empty"


def test_a_broken_invariant_is_reported(tmp_path: Path) -> None:
    """The loop itself: a harness whose invariant fails is a finding, with the input shrunk."""
    from fuzz._harness import Target
    from hypothesis import strategies as st

    def check(value: bytes) -> None:
        assert b"\x07" not in value

    outcome = run(Target("none", lambda _: st.binary(), check), 5, save=False)
    assert outcome.finding is not None
    assert "AssertionError" in outcome.finding


def test_dev_fuzz_exits_non_zero_on_usage_error() -> None:
    from fuzz.run import main

    assert main([]) == 2
    assert main(["1", "no-such-target"]) == 2
