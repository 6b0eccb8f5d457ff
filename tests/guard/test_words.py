"""Shell word decoding: ANSI-C strings, backslashes, double quotes, line continuations."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domestique.guard.words import (
    decode_ansi_c,
    join_continuations,
    unescape_double_quoted,
    unescape_unquoted,
)


def test_ansi_c_hex_octal_unicode_and_control() -> None:
    """$'\\x63url' is curl; octal, \\u, \\c and simple escapes decode as bash does."""
    assert decode_ansi_c(r"\x63\x75\x72\x6c") == "curl"
    assert decode_ansi_c(r"\143url") == "curl"
    assert decode_ansi_c(r"\u0063url") == "curl"
    assert decode_ansi_c(r"a\tb\n") == "a\tb\n"
    assert decode_ansi_c(r"\cA") == "\x01"
    assert decode_ansi_c(r"\q") == "\\q"


def test_ansi_c_nul_truncates() -> None:
    """bash stops an ANSI-C string at a NUL byte."""
    assert decode_ansi_c(r"rm\x00 -rf /") == "rm"


def test_unquoted_backslashes_and_continuation() -> None:
    """\\curl is curl; a backslash-newline disappears."""
    assert unescape_unquoted(r"\curl") == "curl"
    assert unescape_unquoted("r\\\nm") == "rm"


def test_double_quoted_keeps_other_backslashes() -> None:
    """Inside double quotes only \\\\ \\" \\$ \\` are escapes."""
    assert unescape_double_quoted(r"a\"b\$c\d") == 'a"b$c\\d'


def test_join_continuations_maps_indices_back() -> None:
    """`rm -r\\<NL>f /` becomes `rm -rf /` and each new index maps to the original one."""
    text = "rm -r\\\nf /"
    joined, index = join_continuations(text)
    assert joined == "rm -rf /"
    assert index is not None
    assert text[index[joined.index("f")]] == "f"


def test_join_continuations_leaves_single_quotes() -> None:
    """Inside single quotes a backslash-newline is literal."""
    text = "echo 'a\\\nb'"
    assert join_continuations(text)[0] == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_decoders_never_raise(s: str) -> None:
    """Any text decodes without an exception."""
    decode_ansi_c(s)
    unescape_unquoted(s)
    unescape_double_quoted(s)
    joined, index = join_continuations(s)
    if index is not None:
        assert len(index) == len(joined) + 1
