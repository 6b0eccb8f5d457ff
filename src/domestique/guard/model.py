"""Data the guard's stages pass along: words, unfolded invocations and rule hits.

Kept free of tree-sitter so the fast path and the rules can import it cheaply.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Any

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word after dequoting.

    ``text`` is what the shell would pass when every part is static; parts it cannot know (a
    variable, a substitution) keep their source text (``$HOME``, ``$(curl …)``) and make
    ``literal`` false. ``subs`` are the indices of the invocations inside command or process
    substitutions of this word; ``procsub`` is true when the word is a process substitution.
    """

    text: str
    literal: bool
    span: Span
    subs: tuple[int, ...] = ()
    procsub: bool = False

    def __init__(
        self,
        text: str,
        literal: bool,
        span: Span,
        subs: tuple[int, ...] = (),
        procsub: bool = False,
    ) -> None:
        # The generated frozen ``__init__`` goes through ``object.__setattr__`` per field; the
        # slot descriptors' setters do the same with less overhead (the guard makes one Word per
        # shell word on every judgement).
        _SET_TEXT(self, text)
        _SET_LITERAL(self, literal)
        _SET_SPAN(self, span)
        _SET_SUBS(self, subs)
        _SET_PROCSUB(self, procsub)


_SET_TEXT: Any = vars(Word)["text"].__set__
_SET_LITERAL: Any = vars(Word)["literal"].__set__
_SET_SPAN: Any = vars(Word)["span"].__set__
_SET_SUBS: Any = vars(Word)["subs"].__set__
_SET_PROCSUB: Any = vars(Word)["procsub"].__set__


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``op`` as written (``>``, ``>>``, ``<``, ``&>``, ``<<<`` …) and its target."""

    op: str
    target: Word
    fd: str = ""

    @property
    def writes(self) -> bool:
        return ">" in self.op and not self.op.startswith("<<") and not self.target.text.isdigit()

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>")


@dataclass(slots=True)
class Invocation:
    """One simple command as the shell would run it, wrappers removed.

    ``upstream`` are invocations whose output reaches this one's stdin through a pipe;
    ``exec_data`` are invocations whose *output this one runs as code* (a download piped into
    ``sh``, ``bash <(curl …)``, ``eval "$(…)"``). ``via`` lists the wrappers and nestings seen
    through (``sudo``, ``bash -c``, ``script:./x.sh``).
    """

    words: list[Word]
    span: Span
    redirects: list[Redirect] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    upstream: tuple[int, ...] = ()
    exec_data: tuple[int, ...] = ()
    stdin_text: str | None = None
    via: tuple[str, ...] = ()
    background: bool = False
    origin: str = ""
    inside_sub: bool = False
    code_network: bool = False  # interpreter code that talks to the network
    code_creds: tuple[str, ...] = ()  # credential paths named in interpreter code
    code_env: tuple[str, ...] = ()  # environment variables read by code that uses the network
    code_dumps_env: bool = False  # interpreter code that turns the whole environment into data
    # Each wrapper seen through (``sudo``, ``xargs -o``) with the words it was given after its
    # name: for the rules that judge a wrapper's own options.
    wrapped: tuple[tuple[str, tuple[Word, ...]], ...] = ()
    # Derived from ``words`` (plain attributes, not properties: the rules read them dozens of
    # times per command line). ``words`` is only ever replaced through ``retarget``.
    name: str = field(init=False, default="", repr=False, compare=False)
    """The program's base name, lower-cased (``/usr/bin/CURL`` -> ``curl``)."""
    args: list[str] = field(init=False, default_factory=list, repr=False, compare=False)
    """The argument texts (every word but the first)."""
    _rendered: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        words = self.words
        if words:
            self.name = program_name(words[0].text)
            self.args = [w.text for w in words[1:]]

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]

    def retarget(
        self,
        words: list[Word],
        via: tuple[str, ...],
        wrapped: tuple[tuple[str, tuple[Word, ...]], ...] | None = None,
    ) -> None:
        """Point this (not yet recorded) invocation at the command a wrapper runs."""
        self.words = words
        self.via = via
        if wrapped is not None:
            self.wrapped = wrapped
        self._rendered = None
        if words:
            self.name = program_name(words[0].text)
            self.args = [w.text for w in words[1:]]
        else:
            self.name = ""
            self.args = []

    def render(self) -> str:
        """The unfolded command as text (for evidence and ``CommandJudgement.unfolded``)."""
        if self._rendered is None:
            self._rendered = self._render()
        return self._rendered

    def _render(self) -> str:
        words = self.words
        texts = [words[0].text, *self.args] if words else []
        text = " ".join(texts)
        # One match over the joined words: when it passes and the spaces are exactly the joins,
        # no word is empty or holds a space, so every word is plain and shows as written.
        if not (text.count(" ") == len(texts) - 1 and _PLAIN_WORDS.fullmatch(text)):
            plain = _PLAIN_CHARS.issuperset
            text = " ".join([t if t and plain(t) else _quote(t) for t in texts])
        if self.env or self.redirects:
            parts = [f"{k}={v}" for k, v in self.env.items()]
            if texts:
                parts.append(text)
            parts += [f"{r.fd}{r.op} {_show(r.target.text)}" for r in self.redirects]
            text = " ".join(parts)
        if self.via:
            text = f"{text}  [via {' > '.join(self.via)}]"
        return text


_PLAIN = re.compile(r"[\w\-./=:,@%+~$*?\[\]{}]+", re.ASCII)
_PLAIN_WORDS = re.compile(r"[\w\-./=:,@%+~$*?\[\]{}]+(?: [\w\-./=:,@%+~$*?\[\]{}]+)*", re.ASCII)


# The characters of _PLAIN (a set test per word is cheaper than a match per word).
_PLAIN_CHARS = frozenset(string.ascii_letters + string.digits + "_-./=:,@%+~$*?[]{}")


def _show(text: str) -> str:
    if _PLAIN.fullmatch(text):
        return text
    return _quote(text)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


_VERSIONED = ("python", "pypy", "perl", "ruby", "php", "node", "lua", "pip", "tclsh", "wish")


_NAMES: dict[str, str] = {}


def program_name(text: str) -> str:
    """Base name, lower-cased, with version suffixes folded (``python3.11`` -> ``python``)."""
    name = _NAMES.get(text)
    if name is not None:
        return name
    base = text.rstrip("/").rsplit("/", 1)[-1].lower()
    for stem in _VERSIONED:
        if base.startswith(stem) and base[len(stem) :].replace(".", "").isdigit():
            base = stem
            break
    if len(_NAMES) >= 4096:  # bounded: a pure function of ``text``, cached for speed only
        _NAMES.clear()
    _NAMES[text] = base
    return base


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule's finding: a reason code, a message, the span it is about and what was judged."""

    code: str
    message: str
    span: Span
    judged: str = ""
