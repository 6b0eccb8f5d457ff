"""bench/reviewed_commands.toml: the hand review the command eval reads must stay well-formed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REVIEWED = Path(__file__).resolve().parents[2] / "bench" / "reviewed_commands.toml"
DANGEROUS = {"dcg-deny", "gtfobins-shell", "gtfobins-reverse-shell", "gtfobins-bind-shell",
             "slp-malicious", "atomic-deny"}  # fmt: skip
BENIGN = {"dcg-allow", "tldr-dev", "nl2bash-dev"}


def test_every_entry_has_a_verdict_that_fits_its_set() -> None:
    """Dangerous-set misses are `miss-accepted`; benign denies one of the three benign verdicts;
    each entry is keyed by a 16-hex sha (never corpus text), listed once, with class and reason."""
    entries = tomllib.loads(REVIEWED.read_text())["entry"]
    assert entries
    seen: set[tuple[str, str]] = set()
    for e in entries:
        assert set(e) == {"set", "sha", "verdict", "class", "reason"}, e
        assert re.fullmatch(r"[0-9a-f]{16}", e["sha"]), e
        assert (e["set"], e["sha"]) not in seen, e
        seen.add((e["set"], e["sha"]))
        if e["set"] in DANGEROUS:
            assert e["verdict"] == "miss-accepted", e
        else:
            assert e["set"] in BENIGN, e
            assert e["verdict"] in ("dangerous-as-written", "unjudgeable", "false-block"), e
        assert e["class"].strip(), e
        assert e["reason"].strip(), e
