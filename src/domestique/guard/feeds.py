"""What a feeding step gives the command it feeds: xargs items from programs and files, the
positional words after ``sh -c CODE``, makefile recipes read from standard input.

Pure helpers of the unfold stage (no tree-sitter).
"""

from __future__ import annotations

import re

from domestique.guard.model import Invocation, Word, program_name
from domestique.guard.names import CODE_FLAGS, INTERPRETERS, SHELLS

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


def runs_stdin_code(runs: list[Word], replace: str = "") -> bool:
    """Does xargs make its items the code? ``sh -c`` / ``python3 -c`` / ``node -e`` with no
    code after the flag (xargs appends each item), or with ``-I``'s string as the code."""
    name = program_name(runs[0].text)
    lang = "shell" if name in SHELLS else INTERPRETERS.get(name)
    if lang is None or len(runs) < 2:
        return False
    flags = ("-c",) if lang == "shell" else CODE_FLAGS.get(lang, ())
    for k, w in enumerate(runs[1:], start=1):
        t = w.text
        if lang == "shell":
            is_flag = t.startswith("-") and not t.startswith("--") and t.endswith("c")
        else:
            is_flag = t in flags
        if is_flag:
            code = runs[k + 1].text if k + 1 < len(runs) else None
            return code is None or (bool(replace) and code.strip() == replace)
    return False


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
