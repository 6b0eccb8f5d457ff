"""The fuzzing loop shared by every target: Hypothesis, run for a time budget.

A target is an input strategy and an invariant (``check``). A run first replays the seed
corpus (``fuzz/corpus/<target>/``: one raw input per file), then draws from the strategy, which
mixes grammar-shaped inputs with byte-level mutations of the seeds, in batches until the time is
up. A broken invariant or any exception is a *finding*: Hypothesis shrinks it, the smallest
failing input is saved as ``fuzz/corpus/<target>/crash-<sha>`` (replayed on every later run,
so it stays a regression input) and the run reports it.

Hypothesis rather than atheris: the inputs here are grammars (JSON, SSE, shell, TOML, hook
payloads), which Hypothesis generates and shrinks directly, it is already a dev dependency, and
it runs inside pytest; see docs/dependencies.md.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass
class Target:
    """``check(value)`` raises on a broken invariant; ``from_bytes``/``to_bytes`` map corpus
    files to inputs and back."""

    name: str
    strategy: Callable[[list[bytes]], st.SearchStrategy[Any]]
    check: Callable[[Any], None]
    from_bytes: Callable[[bytes], Any] = field(default=lambda b: b)
    to_bytes: Callable[[Any], bytes] = field(default=bytes)


@dataclass
class Outcome:
    name: str
    executions: int
    seconds: float
    finding: str | None = None
    saved: Path | None = None


def seeds(name: str) -> list[bytes]:
    folder = CORPUS / name
    if not folder.is_dir():
        return []
    return [p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()]


@st.composite
def mutated(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """A seed with a few byte-level edits: flips, inserts, deletions, truncation, splices."""
    data = bytearray(draw(st.sampled_from(corpus)) if corpus else b"")
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.integers(0, 4))
        at = draw(st.integers(0, len(data)))
        if op == 0 and data and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == 1:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == 2:
            del data[at : at + draw(st.integers(1, 16))]
        elif op == 3:
            del data[at:]
        elif corpus:
            other = draw(st.sampled_from(corpus))
            cut = draw(st.integers(0, len(other)))
            data[at:] = other[cut:]
    return bytes(data)


def run(target: Target, seconds: float, *, save: bool = True, derandomize: bool = False) -> Outcome:
    """Run ``target`` for about ``seconds``; the outcome names the first finding, if any.

    ``derandomize``: the same generated inputs on every run (the suite's smoke, so a finding
    turns up in a ``./dev fuzz`` run to be fixed, never as a random failure of the suite).
    """
    corpus = seeds(target.name)
    count = 0
    last: list[Any] = []
    start = time.monotonic()

    def one(value: Any) -> None:
        nonlocal count
        count += 1
        try:
            target.check(value)
        except BaseException:
            last[:] = [value]
            raise

    try:
        for raw in corpus:
            one(target.from_bytes(raw))
        strategy = target.strategy(corpus)

        @settings(
            max_examples=20,  # small batches: the time budget is kept closely
            deadline=None,
            derandomize=derandomize,
            database=None,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        @given(strategy)
        def prop(value: Any) -> None:
            one(value)

        end = start + seconds
        prop()  # at least one batch, however long the corpus took
        while time.monotonic() < end:
            prop()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = "".join(traceback.format_exception(exc, limit=-6))
        path = None
        if save and last:
            data = target.to_bytes(last[0])
            path = CORPUS / target.name / f"crash-{hashlib.sha256(data).hexdigest()[:16]}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return Outcome(target.name, count, time.monotonic() - start, text, path)
    return Outcome(target.name, count, time.monotonic() - start)
