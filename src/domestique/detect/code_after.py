"""What follows a candidate value that makes it code rather than a literal (issue 17, round 8).

Used by the engine's code-reference filter (:mod:`.confirm`): a pure function of the text and
the value's span.
"""

from __future__ import annotations

import re

# What follows a value that makes it code: a call or a subscript of an unquoted name
# (_X509Supplier(...), _XRegExp$exec2[0]), a union of types after a class name
# (Ed25519PrivateKey | Ed448PrivateKey); after a quoted item of a "name", "item" pair, the
# next item of a list or a key of a dict ("password1", "password2"; "autofocus": True).
_CALLED_RE = re.compile(r"[(\[]")
_UNION_NEXT_RE = re.compile(r"[ \t]*\|[ \t]*[A-Za-z_]")
_TYPE_NAME_RE = re.compile(r"[A-Z_][A-Za-z0-9_]*$")  # matched at the value (no ^)
_PAIR_HEAD_RE = re.compile(r"^[\"'][^\"'\r\n]*[\"'][ \t]*,[ \t]*$")
_LIST_NEXT_RE = re.compile(r"[ \t]*(?::|,[ \t]*[\"'])")


def read_as_code(text: str, ms: int, s: int, e: int) -> bool:
    """True when the text right after the value ``text[s:e]`` (of a match starting at ``ms``)
    makes it code rather than a literal: a call, a subscript or a type union after an unquoted
    name; a list of names or a dict's next key after a quoted item of a ``"name", "item"``
    pair (a list of three or more names is no name and its value)."""
    quote = text[s - 1] if s > 0 else ""
    if quote not in ('"', "'", "`"):
        if e < len(text) and _CALLED_RE.match(text, e):
            return True
        return bool(_TYPE_NAME_RE.match(text, s, e) and _UNION_NEXT_RE.match(text, e))
    if not (text.startswith(quote, e) and _PAIR_HEAD_RE.match(text[ms : s - 1])):
        return False
    return _LIST_NEXT_RE.match(text, e + 1) is not None
