"""Values that documentation shows as examples: a doctest session, a value under "for example".

A rule with ``example_filter`` does not report a value that the text around it marks as an
example:

* **A doctest session.** The value is on a ``>>>`` line, or on a line of the same block that
  follows one (the session's ``...`` continuation lines and its printed output), up to a blank
  line; or on a ``#>`` line, the printed output that docs write under the call printing it.
  Documentation and docstrings run such sessions as tests: what they print (a hash of
  "password", a TOTP secret, an encoded token) is published with the library.
* **An example marker just above.** "for example", "e.g.", "an example", "sample", "such as",
  "like this" / "looks like this" in the value's line before it or in the five lines above
  (blank lines, fences and braces not counted: ``# Example configuration``, ``# to get a
  string like this run:``, ``For example:``), or a name that says its data is made up
  (``fake_users_db = {``). The word as part of a name or an address (``EXAMPLE_KEY``,
  ``example.com``, ``examples/``) is not a marker.
* **Inside made-up data.** The value is in a literal that such a name opens, however far
  below its first line (``fake_users_db = {`` and the records in it).
* **Shown so elsewhere.** The same value, 16 characters or longer, is shown in one of these
  ways in another place of the same text (a key printed under "for example", then used).

Only the generic rules and the shapes documentation prints most (password and token
assignments, password hashes, JWTs, URLs with a password) take the filter; a provider's key
format (``sk_live_``, ``AKIA``, ``ghp_``) is found wherever it stands, under a marker or in a
session. The check reads at most a few lines around an accepted value, so it costs nothing on
text without findings.
"""

from __future__ import annotations

import re

# A doctest prompt: ">>>" at the start of a line (after indentation or a comment's "#"), then
# a space or the line's end.
_PROMPT_RE = re.compile(r"^[ \t]*(?:#[ \t]*)?>>>(?:[ \t]|$)")
# Printed output written under the call that prints it, as pydantic's and many other docs
# write it (``print(m.model_dump_json())`` then ``#> {"password":"IAmSensitive"}``).
_OUTPUT_RE = re.compile(r"^[ \t]*#>(?:[ \t]|$)")
_BLANK_RE = re.compile(r"^[ \t]*$")
# Words that say what follows is an example; not inside a name or an address. Also a name
# that says its data is made up, being assigned (fake_users_db = {, SAMPLE_CONFIG =).
_MARKER_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9_.\-/@])(?:for[ \t]+(?:example|instance)|e\.g\.|"
    r"(?:an[ \t]+|the[ \t]+following[ \t]+)?examples?|samples?|such[ \t]+as|"
    r"(?:looks?|looking|something)[ \t]+like[ \t]+(?:this|so)|like[ \t]+this)"
    r"(?![A-Za-z0-9_\-/@]|\.[A-Za-z0-9])|"
    r"(?<![A-Za-z0-9])(?:fake|dummy|mock|sample|example)_[A-Za-z0-9_]*[ \t]*(?::[^=\n]*)?"
    r"=[ \t]*[{\[(]"
)
# A line that only opens or closes a block (a fence, a brace, a directive) or is blank: not
# counted among the lines a marker is looked for in.
_FRAME_RE = re.compile(
    r"[ \t]*(?:`{3,}[\w \t-]*|~{3,}[\w \t-]*|[\[\]{}(),]*|\.\.[ \t]+[\w-]+::.*)$"
)
# How far back a session's prompt or a marker is looked for.
_SESSION_LINES = 40
_MARKER_LINES = 5
_MARKER_PHYSICAL_LINES = 10
_MAX_REACH = 4000


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def in_doctest(text: str, start: int) -> bool:
    """True when ``text[start]`` is on a ``>>>`` line or in the lines of its block after one
    (continuations and output, up to a blank line), or on a ``#>`` output line."""
    a = _line_start(text, start)
    end = text.find("\n", start)
    line = text[a : end if end >= 0 else len(text)]
    if _PROMPT_RE.match(line) or _OUTPUT_RE.match(line):
        return True
    floor = max(0, start - _MAX_REACH)
    for _ in range(_SESSION_LINES):
        if a <= floor:
            return False
        b = a - 1  # the newline that ends the line above
        a = _line_start(text, b)
        above = text[a:b]
        if _BLANK_RE.match(above):
            return False
        if _PROMPT_RE.match(above):
            return True
    return False


def under_example_marker(text: str, start: int) -> bool:
    """True when the value's line before it, or one of the five lines above (not counting
    blank lines, fences and braces), says "for example", "e.g.", "sample", "such as", "like
    this", or names made-up data (``fake_users_db = {``)."""
    a = _line_start(text, start)
    floor = max(0, start - _MAX_REACH)
    counted = 0
    for _ in range(_MARKER_PHYSICAL_LINES):
        if a <= floor or counted >= _MARKER_LINES:
            break
        b = a - 1
        a = _line_start(text, b)
        if not _FRAME_RE.match(text, a, b):
            counted += 1
    return _MARKER_RE.search(text, max(a, floor), start) is not None


# A value repeated elsewhere in the same text: only values this long are looked for again (a
# short one repeats by chance), and at most this many other places are read.
_REPEAT_MIN_LEN = 16
_REPEAT_MAX_PLACES = 8


# A name that says its data is made up, opening a literal: ``fake_users_db = {``.
_MADE_UP_OPEN_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:fake|dummy|mock|sample|example)_[A-Za-z0-9_]*[ \t]*(?::[^=\n]*)?"
    r"=[ \t]*[{\[(]"
)
_OPENERS = "{[("
_CLOSERS = "}])"


def inside_made_up_literal(text: str, start: int) -> bool:
    """True when ``text[start]`` is inside a literal (braces, brackets, parentheses still
    open at the value) that a name saying its data is made up opens, within the 4,000
    characters above (``fake_users_db = {`` and a user record twenty lines below it)."""
    floor = max(0, start - _MAX_REACH)
    for m in _MADE_UP_OPEN_RE.finditer(text, floor, start):
        depth = 1
        for ch in text[m.end() : start]:
            if ch in _OPENERS:
                depth += 1
            elif ch in _CLOSERS:
                depth -= 1
                if depth == 0:
                    break
        if depth > 0:
            return True
    return False


# A code block's opening: a reStructuredText paragraph ending in "::" or a code directive
# (``.. code-block:: python``), a Markdown fence with a language (a closing fence has none).
_RST_OPENER_RE = re.compile(r"(?:::[ \t]*|^[ \t]*\.\.[ \t]+(?:code-block|code|sourcecode)::.*)$")
_FENCE_OPENER_RE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*[A-Za-z][\w+\-]*[ \t]*$")
_BLOCK_LINES = 80
_INTRO_LINES = 6


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def in_introduced_block(text: str, start: int) -> bool:
    """True when ``text[start]`` is in a code block (reStructuredText's indented literal block
    after ``::`` or a code directive, a Markdown fence with a language) whose introducing
    paragraph says it is an example ("This example is for PostgreSQL::", "Let's consider
    another sample configuration. Here are the settings::")."""
    a = _line_start(text, start)
    end = text.find("\n", start)
    indent = _indent(text[a : end if end >= 0 else len(text)])  # the block's least, so far
    floor = max(0, start - _MAX_REACH)
    for _ in range(_BLOCK_LINES):
        if a <= floor:
            return False
        b = a - 1
        a = _line_start(text, b)
        line = text[a:b]
        if _FENCE_OPENER_RE.match(line):
            return _intro_says_example(text, a, floor)
        if _BLANK_RE.match(line):
            continue
        here = _indent(line)
        if here < indent and _RST_OPENER_RE.search(line):
            if line.lstrip().startswith(".."):
                return _intro_says_example(text, a, floor)
            return _intro_says_example(text, b + 1, floor)
        if here == 0:
            return False  # back at the text's margin without an opener: no block
        indent = min(indent, here)
    return False


def _intro_says_example(text: str, at: int, floor: int) -> bool:
    """True when the paragraph that ends before ``at`` (blank lines above ``at`` skipped, at
    most six lines) holds an example marker."""
    b = at - 1
    while b > floor:  # skip the blank lines between the paragraph and the block
        a = _line_start(text, b)
        if not _BLANK_RE.match(text[a:b]):
            break
        b = a - 1
    lo = b
    for _ in range(_INTRO_LINES):
        if lo <= floor:
            break
        a = _line_start(text, lo)
        if _BLANK_RE.match(text[a:lo]):
            break
        lo = a - 1
    lo = max(lo, floor)
    return b > lo and _MARKER_RE.search(text, lo, b) is not None


def _shown_at(text: str, start: int) -> bool:
    return (
        in_doctest(text, start)
        or under_example_marker(text, start)
        or inside_made_up_literal(text, start)
        or in_introduced_block(text, start)
    )


def shown_as_example(text: str, start: int, end: int | None = None) -> bool:
    """True when the value at ``start`` is in a doctest session or under an example marker,
    or (given its ``end``) when the same value, at least 16 characters long, is shown so in
    another place of the same text: documentation prints a generated key once under "for
    example" and then uses it in the sections after (Flask's ``SECRET_KEY`` in
    ``app.config.update(...)``). A value the text never marks as an example still counts,
    however often it repeats."""
    if _shown_at(text, start):
        return True
    if end is None or end - start < _REPEAT_MIN_LEN:
        return False
    value = text[start:end]
    i = text.find(value)
    places = 0
    while i >= 0 and places < _REPEAT_MAX_PLACES:
        if i != start:
            places += 1
            if _shown_at(text, i):
                return True
        i = text.find(value, i + 1)
    return False
