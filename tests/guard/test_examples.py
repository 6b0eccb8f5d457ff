"""Every guard reason code has examples that must fire and examples that must stay quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from domestique.detect import Finding
from domestique.guard import analyze_command
from domestique.guard.codes import REASON_CODES
from domestique.guard.examples import EXAMPLES
from domestique.keys import Fingerprinter, mask_preview


class _TokenScanner:
    """A scanner twin that finds GitHub tokens (the detection engine is tested elsewhere)."""

    def scan(self, text: str) -> list[Finding]:
        out = []
        start = text.find("ghp_")
        if start >= 0:
            value = text[start : start + 40]
            fp = Fingerprinter(b"k" * 32).fingerprint(value)
            out.append(Finding("secret.github_token", start, start + 40, fp, mask_preview(value)))
        return out


CASES = [
    (code, kind, command)
    for code, sides in EXAMPLES.items()
    for kind in ("fires", "quiet")
    for command in sides[kind]
]


def test_every_code_has_both_kinds_of_example() -> None:
    """A guard code without must-fire and must-stay-quiet examples is unfinished."""
    for rc in REASON_CODES:
        sides = EXAMPLES.get(rc.code)
        assert sides is not None, rc.code
        assert sides["fires"], rc.code
        assert sides["quiet"], rc.code
    assert set(EXAMPLES) == {rc.code for rc in REASON_CODES}


@pytest.mark.parametrize(
    ("code", "kind", "command"), CASES, ids=[f"{c}:{k}:{i}" for i, (c, k, _) in enumerate(CASES)]
)
def test_example(code: str, kind: str, command: str, project: Path) -> None:
    """The example fires its code, or (quiet) the code stays silent."""
    codes = {r.code for r in analyze_command(command, cwd=str(project), scanner=_TokenScanner())}
    if kind == "fires":
        assert code in codes, (command, codes)
    else:
        assert code not in codes, (command, codes)
