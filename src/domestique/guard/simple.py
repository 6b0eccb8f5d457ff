"""The parser-free reading of plain command lines (words, pipes and lists, no expansions).

Used by the fast path and by the unfold stage: a line it reads gives the same words and spans
the tree-sitter walk would, without loading the parser.
"""

from __future__ import annotations

import re

from domestique.guard.model import Word
from domestique.guard.words import (
    unescape_double_quoted,
)

# Not in a command word: assignments, globs, tilde, `{}`, escapes and quotes.
_FIRST_WORD_BAD = frozenset("=*?~{\\'\"$")


_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
     "in", "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]", "export",
     "declare", "typeset", "local", "readonly", "unset", "unsetenv"}
)  # fmt: skip


def simple_words(command: str) -> list[Word] | None:
    """The words of ``command`` when it is one plain simple command, else None."""
    commands = simple_commands(command)
    if commands is None or len(commands) != 1:
        return None
    return commands[0][0]


def simple_commands(command: str) -> list[tuple[list[Word], bool]] | None:
    """``command`` as plain simple commands joined by ``|``, ``&&``, ``||`` or ``;``, else None.

    Each item is (words, piped from the previous command). Plain means: words of plain
    characters, backslash escapes, single- and double-quoted printable ASCII and at most one
    ``$NAME``/``${NAME}`` (kept as written; the word is then not literal), ``{}`` and ``!``,
    separated by spaces; no command word is an assignment, a variable, a reserved word or a
    glob. Such a line parses to exactly these commands and words (the test suite checks that
    the parser agrees); anything else (redirections, substitutions, other expansions, braces,
    subshells, background jobs, comments, tabs, newlines, a trailing operator) returns None and
    goes to the parser.
    """
    if _PLAIN_LINE.fullmatch(command) is None:
        return None
    commands: list[tuple[list[Word], bool]] = []
    words: list[Word] = []
    piped = False
    pos = 0
    find = command.find
    # On a plain line, findall returns its words and operators in order with only spaces
    # between them, so each one starts at its first occurrence after the previous one. With no
    # quote or escape, those are the space-separated chunks unless an operator is glued on.
    # (Substring tests: a C search each, cheaper than a set test over every character.)
    tokens = (
        command.split()
        if "'" not in command
        and '"' not in command
        and "\\" not in command
        and (
            ("|" not in command and "&" not in command and ";" not in command)
            or _GLUED_OPERATOR.search(command) is None
        )
        else _WORDS_AND_OPERATORS(command)
    )
    for lexeme in tokens:
        start = find(lexeme, pos)
        pos = start + len(lexeme)
        first = lexeme[0]
        if first in "&|;":  # an operator
            if not words:
                return None
            commands.append((words, piped))
            words = []
            piped = lexeme == "|"
            continue
        if first in "{!\\" and len(lexeme) <= 2:  # `{}`, `!` or `\X`, standing alone
            if not words:
                return None
            words.append(Word(lexeme[-1] if first == "\\" else lexeme, True, (start, pos)))
            continue
        if not words and (lexeme in _RESERVED or not _FIRST_WORD_BAD.isdisjoint(lexeme)):
            return None
        if "$" not in lexeme and "'" not in lexeme and '"' not in lexeme and "\\" not in lexeme:
            words.append(Word(lexeme, True, (start, pos)))
            continue
        literal = True
        if "$" in lexeme and "\\" in lexeme:
            return None  # which `$` is quoted depends on the escapes: the parser decides
        if "$" in lexeme and "$" in _NOT_SINGLE_QUOTED.sub(r"\1", lexeme):
            # A variable keeps its source text and makes the word not literal, as on the
            # parser path (nothing is assigned on a plain line). Only one variable, bare or in
            # one double-quoted part, with no other quotes: tree-sitter-bash splits some richer
            # words (`a"b"$x~`, `?$_$A$B`), and those go to the parser.
            if _ONE_VARIABLE.fullmatch(lexeme) is None:
                return None
            literal = False
        if "\\" in lexeme:
            words.append(Word(_PIECES.sub(_dequote, lexeme), literal, (start, pos)))
        elif "'" in lexeme or '"' in lexeme:
            q = lexeme[0]
            if q in "'\"" and lexeme[-1] == q and lexeme.count(q) == 2:
                text = lexeme[1:-1]  # one quoted part, the whole word: what _QUOTED.sub gives
            else:
                text = _QUOTED.sub(_unquote, lexeme)
            words.append(Word(text, literal, (start, pos)))
        else:
            words.append(Word(lexeme, literal, (start, pos)))
    if not words:
        return None
    commands.append((words, piped))
    return commands


def _unquote(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def _dequote(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1)
    if m.group(2) is not None:
        return unescape_double_quoted(m.group(2))
    return m.group(3)


# The pieces of a word with backslashes: '…', "…" (escapes inside), \X.
_PIECES = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"|\\(.)")


# Tokens of a plain line. Words: characters never special outside quotes (globs and ``~`` are
# kept as written, as the parser path keeps them), single-quoted printable ASCII (nothing is
# special there: ``'{print $1}'``, ``'\n'``), double-quoted printable ASCII without backslash or
# ` and ``$NAME``/``${NAME}`` variables; ``{}``, ``!`` and ``\;`` only as whole words (glued to
# other text the parser splits them). The alternatives never overlap, so matching is linear.
_Q = "[ #%&()*+,\\-./0-9:;<=>?@A-Z\\[\\]^_a-z{|}~]"


_SQW = "'[ -&(-~]*'"  # single-quoted: printable ASCII but the single quote


# $NAME or ${NAME} (not $IFS: the parser path splits words on it)
_VAR = r"\$(?:(?!IFS(?!\w))[A-Za-z_][A-Za-z0-9_]*+(?!\w)|\{(?!IFS\})[A-Za-z_][A-Za-z0-9_]*\})"


_ESC = r"\\[!-~]"  # a backslash escape of a printable ASCII character


_DQW = '"(?:' + _Q + "|[!']|" + _VAR + "|" + _ESC + ')*"'  # double-quoted


_TOKEN_ALTERNATIVES = (  # spaces apart
    r"(?:&&|\|\||\|(?![&|])|;(?![;&]))"
    r"|(?:(?:\{\}|!|\\[;+()!])(?=[ |;]|&&|\Z))"
    r"|(?:(?:[A-Za-z0-9_./:,@%+=*?~-]|" + _SQW + "|" + _DQW + "|" + _VAR + "|" + _ESC + ")"
    r"(?:[A-Za-z0-9_./:,@%+=*?~!-]|" + _SQW + "|" + _DQW + "|" + _VAR + "|" + _ESC + ")*+)"
    r"(?=[ |;]|&&|\Z)"
)


# A whole line of tokens, possessive: a line that is not plain fails in one linear pass (findall
# alone would retry from every later position, quadratic on a long unplain line).
_PLAIN_LINE = re.compile(r"(?: +|" + _TOKEN_ALTERNATIVES + r")*+")


_WORDS_AND_OPERATORS = re.compile(_TOKEN_ALTERNATIVES).findall


# An operator character next to one that is neither a blank nor an operator, written to start
# with the operator set (the regex engine then skips quickly to the next | & ;).
_GLUED_OPERATOR = re.compile(r"[|&;](?:[^ |&;]|(?<=[^ |&;][|&;]))")


_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


_NOT_SINGLE_QUOTED = re.compile(r"'[^']*'|(\"[^\"]*\")")  # sub(r"\1"): drop '…' only


_UNQUOTED = "[A-Za-z0-9_./:,@%+=*?~!-]"


_ONE_VARIABLE = re.compile(
    rf"(?!=[=~]){_UNQUOTED}*(?:{_VAR}|\"(?:{_Q}|!)*{_VAR}(?:{_Q}|!)*\"){_UNQUOTED}*"
)
