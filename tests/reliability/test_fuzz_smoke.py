"""A short run of every fuzzing harness (``fuzz/``): the seed corpus and saved findings are
replayed, then generated inputs for a fraction of a second each, the same ones on every run
(derandomized: the suite never fails at random; ``./dev fuzz SECONDS`` runs them for longer,
with fresh inputs); the invariants are in each harness's docstring."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz._harness import run, seeds  # noqa: E402 - the repository root is put on the path first
from fuzz.run import TARGETS, target  # noqa: E402

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
