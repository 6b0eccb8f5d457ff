"""What a feeding step gives the command it feeds: xargs items from programs and files, the
positional words after ``sh -c CODE``, makefile recipes read from standard input.

Pure helpers of the unfold stage (no tree-sitter).
"""

from __future__ import annotations

import re

from domestique.guard.model import Invocation, Word, program_name
from domestique.guard.names import INTERPRETERS, SHELLS

RM_NAMES = frozenset({"rm", "shred", "srm", "wipe", "unlink"})


# Code that names the home folder or the root: a value an interpreter prints from it may be one.
_HOME_IN_CODE = re.compile(
    r"""["']~/?["']|["']/["']|expanduser|Path\.home|homedir|Dir\.home|ENV\{["']?HOME|"""
    r"""environ\s*(\[|\.get\()\s*["']HOME|getenv\(\s*["']HOME|process\.env\.HOME|\$HOME\b"""
)


# Makefile recipes: tab-indented lines, and what follows `target: prerequisites ;`.
RECIPE = re.compile(r"(?m)^\t+(.+)$|^[^\t#=\n][^:=\n]*::?[^;=\n]*;(.+)$")
_POSITIONAL = re.compile(r"\$(?:\{([0-9])\}|([0-9])|([@*])|\{([@*])\})")
_PLAIN_ARG = re.compile(r"^[\w./~@%+=:,-]*$")


def positional(code: Word, given: list[Word]) -> Word:
    """``sh -c 'rm -rf "$0"' ~``: the words after the code are ``$0``, ``$1`` …; plain literal
    ones are put in place (``~`` as ``$HOME``, which a quoted reference still expands to)."""
    if not given or not code.literal or "$" not in code.text:
        return code
    if not all(w.literal and _PLAIN_ARG.match(w.text) for w in given[:10]):
        return code
    texts = ["$HOME" + w.text[1:] if w.text[:2] in ("~", "~/") else w.text for w in given]

    def value(m: re.Match[str]) -> str:
        digit = m.group(1) or m.group(2)
        if digit is not None:
            k = int(digit)
            return texts[k] if k < len(texts) else ""
        return " ".join(texts[1:])

    return Word(_POSITIONAL.sub(value, code.text), True, code.span, code.subs, code.procsub)


def runs_stdin_code(runs: list[Word]) -> bool:
    """``sh -c`` with no code after it: xargs appends each item as the code."""
    if program_name(runs[0].text) not in SHELLS or len(runs) < 2:
        return False
    last = runs[-1].text
    return last.startswith("-") and not last.startswith("--") and last.endswith("c")


def recursive_delete(runs: list[Word]) -> bool:
    if program_name(runs[0].text) not in RM_NAMES:
        return False
    return any(
        w.text == "--recursive"
        or (w.text.startswith("-") and not w.text.startswith("--") and "r" in w.text.lower())
        for w in runs[1:]
    )


def names_home(inv: Invocation) -> bool:
    if inv.name not in INTERPRETERS:
        return False
    return bool(_HOME_IN_CODE.search(" ".join(w.text for w in inv.words[1:])))
