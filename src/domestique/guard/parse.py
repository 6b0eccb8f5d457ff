"""The tree-sitter walk: a command line's syntax tree into :class:`Invocation` objects.

:class:`Walker` visits statements, pipelines, redirections, words and expansions, and hands
each simple command to ``emit`` (the unfold stage, :mod:`domestique.guard.unfold`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from domestique.guard.env import GuardEnv
from domestique.guard.model import Hit, Invocation, Redirect, Span, Word
from domestique.guard.simple import simple_commands
from domestique.guard.words import (
    decode_ansi_c,
    join_continuations,
    unescape_double_quoted,
    unescape_unquoted,
)

MAX_DEPTH = 8


MAX_INVOCATIONS = 4000


IFS_SPLIT = "\x1f"


_CRASHES_PARSER = re.compile("[\U00040000-\U0010ffff]")


_parser: Parser | None = None


def parser() -> Parser:
    global _parser  # noqa: PLW0603 - one compiled grammar per process
    if _parser is None:
        _parser = Parser(Language(tree_sitter_bash.language()))
    return _parser


_NAMEREF_FLAG = re.compile(r"^-[a-zA-Z]*n[a-zA-Z]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# Loop conditions that always hold.
_ENDLESS = frozenset({"true", ":", "[ 1 ]", "(( 1 ))", "((1))", "/bin/true", "[ : ]"})


class Ctx(NamedTuple):
    """How the statements being visited are run (a tuple: derived copies are cheap)."""

    upstream: tuple[int, ...] = ()
    via: tuple[str, ...] = ()
    span: Span | None = None  # when set, every span in this text maps to it (nested code)
    depth: int = 0
    background: bool = False
    inside_sub: bool = False
    origin: str = ""


@dataclass(slots=True)
class Unfolded:
    """The unfolded command line: invocations in execution order, hits found while unfolding."""

    invocations: list[Invocation]
    hits: list[Hit]
    parse_ok: bool
    assignments: list[tuple[str, Word]]
    functions: dict[str, Span]


class _Text:
    """A text being parsed: its bytes, and byte-offset to top-level character-offset maps."""

    __slots__ = ("b2c", "data", "index", "text")

    def __init__(self, text: str, index: list[int] | None) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.index = index
        self.b2c: list[int] | None = None
        if len(self.data) != len(text):
            b2c = [0] * (len(self.data) + 1)
            pos = 0
            for ci, ch in enumerate(text):
                n = len(ch.encode("utf-8", "surrogatepass"))
                for k in range(n):
                    b2c[pos + k] = ci
                pos += n
            b2c[pos] = len(text)
            self.b2c = b2c

    def char(self, byte: int) -> int:
        c = self.b2c[byte] if self.b2c is not None else byte
        if self.index is not None:
            c = self.index[min(c, len(self.index) - 1)]
        return c

    def source(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


_NO_TEXT = _Text("", None)  # before any parse (read only: each parse makes its own)


_TOP = Ctx()


# Names ``emit`` (and ``_tool_options``) open code for: every other name, unless its command
# word has a slash (a script run), runs no code of its own the guard could unfold.
# Variables whose value a program runs as a shell command.
CODE_VARIABLES = frozenset(
    {"LESSOPEN", "LESSCLOSE", "PAGER", "MANPAGER", "GIT_PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
     "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND",
     "BASH_ENV", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "BROWSER", "SYSTEMD_PAGER",
     "PERLDOC_PAGER", "FCEDIT", "GIT_SEQUENCE_EDITOR", "SVN_EDITOR", "PSQL_PAGER", "MYSQL_PS1"}
)  # fmt: skip


_DEFAULTED = re.compile(r"\$\{(\w+|[@*])(?::?[?=-][^}]*)\}")
_POSITIONAL = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*")
_HOME_VALUE = re.compile(r"^(?:\$HOME|\$\{HOME\})(?:/[\w.@+-]*)*/?$")


_EXPANDING = frozenset(
    {"command_substitution", "process_substitution", "expansion", "simple_expansion",
     "arithmetic_expansion", "brace_expression"}
)  # fmt: skip


def _expands(node: Node) -> bool:
    """Does the word hold anything the shell expands (a variable, a substitution, braces)?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _EXPANDING:
            return True
        stack.extend(n.children)
    return False


def _join_words(a: Word, b: Word) -> Word:
    return Word(a.text + b.text, a.literal and b.literal, (a.span[0], b.span[1]),
                a.subs + b.subs, a.procsub or b.procsub)  # fmt: skip


class Walker:
    """Walks tree-sitter trees into :class:`Invocation` objects; ``emit`` records each one."""

    def __init__(self, cwd: str | None, env: GuardEnv) -> None:
        self.cwd = cwd
        self.env = env
        self.invs: list[Invocation] = []
        self.hits: list[Hit] = []
        self.vars: dict[str, str] = {}
        self.var_subs: dict[str, tuple[int, ...]] = {}
        self.var_alias: dict[str, str] = {}  # name -> the variable references its value holds
        self.assignments: list[tuple[str, Word]] = []
        self.functions: dict[str, Span] = {}
        self._bodies: dict[str, tuple[Node, _Text]] = {}  # function name -> its body
        self._calling: set[str] = set()
        self.scripts_read = 0
        self.written: dict[str, str] = {}  # files this command line writes with literal text
        self.parse_ok = True
        self._drop_last = False
        self._t: _Text = _NO_TEXT

    # ---------------------------------------------------------------- entry points

    def unfold(self, command: str) -> Unfolded:
        commands = simple_commands(command)
        if commands is not None:
            # Plain commands: the words are known without the parser (same words, same spans).
            acc: list[int] = []
            for words, piped in commands:
                if not piped:
                    acc = []
                ctx = Ctx(upstream=tuple(acc)) if acc else _TOP
                start = len(self.invs)
                inv = Invocation(
                    words, (words[0].span[0], words[-1].span[1]), upstream=ctx.upstream
                )
                self.emit(inv, ctx)
                acc.extend(range(start, len(self.invs)))
        else:
            text, index = join_continuations(command)
            self._parse_into(text, index, Ctx())
        return Unfolded(self.invs, self.hits, self.parse_ok, self.assignments, self.functions)

    def _parse_into(self, text: str, index: list[int] | None, ctx: Ctx) -> None:
        if ctx.depth > MAX_DEPTH:
            self.hits.append(
                Hit(
                    "cmd.opaque_command",
                    "nested shells go deeper than the guard unfolds",
                    ctx.span or (0, len(text)),
                )
            )
            return
        if not text.isascii() and _CRASHES_PARSER.search(text):
            # tree-sitter-bash 0.25 can crash the process (SIGSEGV) on `{` followed by a code
            # point from planes 4-16; no shell command needs them: refuse before parsing.
            self.parse_ok = False
            self.hits.append(
                Hit(
                    "engine.parse_error",
                    "characters from unassigned or private planes (U+40000 and above)",
                    ctx.span or (0, len(text)),
                )
            )
            return
        saved = self._t
        self._t = _Text(text, index)
        try:
            tree = parser().parse(self._t.data)
            root = tree.root_node
            if root.has_error:
                self.parse_ok = False
                self.hits.append(
                    Hit(
                        "engine.parse_error",
                        "the command does not parse as shell" + (" (nested)" if ctx.span else ""),
                        self._span(root, ctx),
                        text[:200],
                    )
                )
            self._statements(root, ctx)
        finally:
            self._t = saved

    def nested(self, code: str, ctx: Ctx, span: Span, via: str) -> None:
        """Judge ``code`` as shell code run by the command at ``span``."""
        text, _ = join_continuations(code)
        self._parse_into(
            text,
            None,
            ctx._replace(span=span, depth=ctx.depth + 1, via=(*ctx.via, via), origin=via),
        )

    # ---------------------------------------------------------------- helpers

    def _span(self, node: Node, ctx: Ctx) -> Span:
        if ctx.span is not None:
            return ctx.span
        return (self._t.char(node.start_byte), self._t.char(node.end_byte))

    def _budget(self) -> bool:
        if len(self.invs) >= MAX_INVOCATIONS:
            if not any(
                h.code == "cmd.opaque_command" and "too many" in h.message for h in self.hits
            ):
                self.hits.append(Hit("cmd.opaque_command", "too many commands to judge", (0, 0)))
            return False
        return True

    # ---------------------------------------------------------------- statements

    def _statements(self, node: Node, ctx: Ctx) -> None:
        if node.type == "command_substitution" and self._file_read_sub(node, ctx):
            return
        children = node.children
        n = len(children)
        for i, child in enumerate(children):
            if not child.is_named:
                continue
            bg = ctx.background or (i + 1 < n and children[i + 1].type == "&")
            self._statement(child, ctx._replace(background=bg) if bg != ctx.background else ctx)

    def _statement(self, node: Node, ctx: Ctx) -> None:
        t = node.type
        if t == "command":
            self._command(node, ctx)
        elif t == "pipeline":
            self._pipeline(node.children, ctx)
        elif t == "redirected_statement":
            self._redirected(node, ctx)
        elif t == "variable_assignment":
            self._assignment(node, ctx, statement=True)
        elif t == "variable_assignments":
            for c in node.named_children:
                self._assignment(c, ctx, statement=True)
        elif t in ("declaration_command", "unset_command"):
            self._declaration(node, ctx)
        elif t == "function_definition":
            self._function(node, ctx)
        elif t == "for_statement":
            self._for(node, ctx)
        elif t == "while_statement" and ctx.upstream:
            self._while_read(node, ctx)
        elif t == "while_statement":
            self._endless(node, ctx)
        elif t in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            return
        elif t in ("command_substitution", "process_substitution"):
            self._statements(node, ctx._replace(inside_sub=True))
        elif t in (
            "word",
            "string",
            "concatenation",
            "simple_expansion",
            "expansion",
            "raw_string",
        ):
            self._word(node, ctx)  # words in for/case/test: visit their substitutions
        else:
            # lists, subshells, groups, if/while/for/case, negation, test commands, ...
            self._statements(node, ctx)

    def _pipeline(self, children: list[Node], ctx: Ctx) -> None:
        acc = list(ctx.upstream)
        for child in children:
            if not child.is_named:
                continue
            start = len(self.invs)
            self._statement(child, ctx._replace(upstream=tuple(acc)))
            acc.extend(range(start, len(self.invs)))

    def _redirected(self, node: Node, ctx: Ctx) -> None:
        body: Node | None = None
        redirects: list[Redirect] = []
        stdin_text: str | None = None
        text_subs: tuple[int, ...] = ()
        tails: list[tuple[bool, list[Node]]] = []
        for child in node.named_children:
            t = child.type
            if t == "heredoc_redirect":
                piped = False
                rest: list[Node] = []
                delim_quoted = False
                for c in child.children:
                    ct = c.type
                    if ct == "heredoc_start":
                        delim_quoted = any(q in self._t.source(c) for q in "'\"\\")
                    elif ct == "heredoc_body":
                        stdin_text = self._t.source(c)
                        if not delim_quoted:
                            subs: list[int] = []
                            for sub in c.named_children:
                                start = len(self.invs)
                                self._statement(sub, ctx._replace(inside_sub=True))
                                subs.extend(range(start, len(self.invs)))
                            text_subs = tuple(subs)
                    elif ct in ("|", "|&"):
                        piped = True
                    elif c.is_named and ct not in ("heredoc_end", "file_redirect"):
                        rest.append(c)
                    elif ct == "file_redirect":
                        r = self._redirect(c, ctx)
                        if r is not None:
                            redirects.append(r)
                tails.append((piped, rest))
            elif t in ("file_redirect", "herestring_redirect"):
                r = self._redirect(child, ctx)
                if r is not None:
                    if r.op == "<<<":
                        stdin_text = r.target.text + "\n"
                        text_subs = r.target.subs
                    redirects.append(r)
            elif body is None:
                body = child
        start = len(self.invs)
        if body is not None and redirects and body.type == "command":
            last = body.named_children[-1] if body.named_children else None
            first_redirect = next(
                (c for c in node.named_children if c.type.endswith("redirect")), None
            )
            if (
                last is not None
                and first_redirect is not None
                and last.type == "number"
                and last.end_byte == first_redirect.start_byte
            ):
                # `sh 0<&2`: bash reads 0 as the redirect's descriptor (tree-sitter-bash does not)
                redirects[0] = replace(redirects[0], fd=self._t.source(last))
                self._drop_last = True
        if body is None and redirects:
            # `> ~/.bash_history` alone truncates the file: judged as `:` with that redirect
            span = self._span(node, ctx)
            self._add(Invocation([Word(":", True, span)], span, redirects=redirects), ctx)
        while body is not None and body.type == "list" and body.named_children:
            # `mkdir d && cat > d/f <<EOF`: tree-sitter-bash hangs the redirects on the whole
            # list; bash gives them (and the here-document) to its last command only
            *head, body = body.named_children
            for k in head:
                self._statement(k, ctx)
        if body is not None:
            if body.type == "command":
                self._command(node=body, ctx=ctx, extra=redirects, stdin=(stdin_text, text_subs))
            else:
                self._statement(body, ctx)
                for inv in self.invs[start:]:
                    if not inv.inside_sub:
                        inv.redirects.extend(redirects)
                        if redirects:
                            self._late_redirects(inv, ctx)
        produced = tuple(range(start, len(self.invs)))
        for piped, rest in tails:
            for stmt in rest:
                if piped:
                    self._statement(stmt, ctx._replace(upstream=(*ctx.upstream, *produced)))
                else:
                    self._statement(stmt, ctx)

    def _assignment(self, node: Node, ctx: Ctx, *, statement: bool) -> tuple[str, Word] | None:
        name_node = node.child_by_field_name("name") or (
            node.children[0] if node.children else None
        )
        if name_node is None:
            return None
        name = self._t.source(name_node)
        value_node = node.child_by_field_name("value")
        if value_node is None:
            value = Word("", True, self._span(node, ctx))
        else:
            words = self._word(value_node, ctx, split=False)
            value = words[0] if words else Word("", True, self._span(node, ctx))
        if statement:
            self.assignments.append((name, replace(value, span=self._span(node, ctx))))
            if name in CODE_VARIABLES and value.literal and value.text:
                self._variable_code(name, value.text, value.span, ctx)
            if value.literal:
                self.vars[name] = value.text
                self.var_subs.pop(name, None)
            elif _HOME_VALUE.match(value.text):
                # H=$HOME: the value is home, which the rules know by that name
                self.vars[name] = value.text
                self.var_subs.pop(name, None)
            else:
                self.vars.pop(name, None)
                if value.subs:
                    self.var_subs[name] = value.subs
                elif "$" in value.text and "$(" not in value.text and "`" not in value.text:
                    # K=$OPENAI_API_KEY: $K is whatever $OPENAI_API_KEY is; keep the reference
                    self.var_alias[name] = value.text
                    return name, value
            self.var_alias.pop(name, None)
        return name, value

    def _declaration(self, node: Node, ctx: Ctx) -> None:
        words: list[Word] = []
        nameref = False
        for child in node.children:
            if child.type == "variable_assignment":
                pair = self._assignment(child, ctx, statement=True)
                if pair is not None:
                    words.append(Word(f"{pair[0]}={pair[1].text}", pair[1].literal, pair[1].span))
                    if nameref and pair[1].literal and _NAME.match(pair[1].text):
                        self._nameref(pair[0], pair[1].text)
            elif child.type == "word" and _NAMEREF_FLAG.match(self._t.source(child)):
                nameref = True  # declare -n r=HOME: "$r" is "$HOME"
                words.extend(self._word(child, ctx))
            elif child.is_named:
                words.extend(self._word(child, ctx))
            else:
                words.append(Word(self._t.source(child), True, self._span(child, ctx)))
        if words:
            self._add(Invocation(words, self._span(node, ctx)), ctx)

    def _nameref(self, name: str, target: str) -> None:
        """``declare -n r=HOME``: every later ``$r`` reads ``$HOME`` (known values followed)."""
        ref = "$" + target
        if target in self.vars:
            self.vars[name] = self.vars[target]
        elif _HOME_VALUE.match(ref):
            self.vars[name] = ref
        else:
            self.vars.pop(name, None)
            self.var_alias[name] = ref

    def _for(self, node: Node, ctx: Ctx) -> None:
        """``for d in /tmp/x ~; do rm -rf "$d"; done``: over up to four literal words, the body
        is walked once with the name bound to each."""
        var = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        body = node.child_by_field_name("body")
        if (
            var is not None
            and 1 <= len(values) <= 4
            and body is not None
            and all(v.type in ("word", "raw_string") for v in values)
        ):
            words = [w for v in values for w in self._word(v, ctx)]
            if 1 <= len(words) <= 4 and all(w.literal for w in words):
                name = self._t.source(var)
                self.var_subs.pop(name, None)
                self.var_alias.pop(name, None)
                for w in words:  # `for d in /tmp/x ~`: the body once per word (at most four)
                    self.vars[name] = w.text
                    self._statement(body, ctx)
                return
        # More words, or not all literal: the name stands for the whole list (or is unknown).
        self._for_words(node, ctx)
        self._statements(node, ctx)

    def _while_read(self, node: Node, ctx: Ctx) -> None:
        """``echo ~ | while read d; do rm -rf "$d"; done``: ``d`` is what the echo prints."""
        cond = node.child_by_field_name("condition")
        words = self._t.source(cond).split() if cond is not None and cond.type == "command" else []
        names = [w for w in words[1:] if not w.startswith("-")]
        feeders = [self.invs[i] for i in ctx.upstream if 0 <= i < len(self.invs)]
        if words[:1] == ["read"] and len(names) == 1 and len(feeders) == 1:
            f = feeders[0]
            printed = [w for w in f.words[1:] if not w.text.startswith("-")]
            if (
                f.name == "echo"
                and len(printed) == 1
                and (printed[0].literal or _HOME_VALUE.match(printed[0].text))
            ):
                self.vars[names[0]] = printed[0].text  # bound before the body is walked
        self._statements(node, ctx)

    def _positional(self, args: list[Word]) -> dict[str, str | None]:
        """Bind $1…$9, $@ and $* to literal ``args``; returns the old values."""
        old = {k: self.vars.get(k) for k in _POSITIONAL}
        for k in _POSITIONAL:
            self.vars.pop(k, None)
        for i, a in enumerate(args[:9], start=1):
            self.vars[str(i)] = a.text
        self.vars["@"] = self.vars["*"] = IFS_SPLIT.join(a.text for a in args)
        return old

    def _call(self, name: str, args: list[Word], ctx: Ctx) -> None:
        """A call of a function defined in the line with literal arguments (``wipe ~``): its
        body is walked again with $1… bound to them (once per call, not into itself)."""
        if not args or not all(a.literal for a in args) or len(self._calling) >= 4:
            return
        body, text = self._bodies[name]
        old = self._positional(args)
        saved_t, self._t = self._t, text
        self._calling.add(name)
        try:
            self._statement(body, ctx._replace(via=(*ctx.via, f"function {name}")))
        finally:
            self._calling.discard(name)
            self._t = saved_t
            for k, v in old.items():
                if v is None:
                    self.vars.pop(k, None)
                else:
                    self.vars[k] = v

    def _endless(self, node: Node, ctx: Ctx) -> None:
        """``while :; do sh -c … & done``: a loop that never ends and starts a background job
        each round, waiting for nothing, multiplies processes without bound (a fork bomb)."""
        start = len(self.invs)
        self._statements(node, ctx)
        cond = node.child_by_field_name("condition")
        text = self._t.source(cond).strip().rstrip(";").strip() if cond is not None else ""
        until = bool(node.children) and node.children[0].type == "until"
        endless = text in ("false", "! :", "! true") if until else text in _ENDLESS
        if not endless:
            return
        body = self.invs[start:]
        if any(i.background for i in body) and not any(
            not i.background and i.name in ("sleep", "wait", "read", "timeout") for i in body
        ):
            self.hits.append(
                Hit("cmd.fork_bomb", "an endless loop starts a background job each round",
                    self._span(node, ctx))
            )  # fmt: skip

    def _function(self, node: Node, ctx: Ctx) -> None:
        name_node = node.child_by_field_name("name")
        name = self._t.source(name_node) if name_node is not None else ""
        span = self._span(node, ctx)
        self.functions[name] = span
        if name == "domestique":
            self.hits.append(
                Hit("cmd.guard_tamper", "a function shadows Domestique's command", span)
            )
        body = node.child_by_field_name("body")
        if name and body is not None:
            self._bodies[name] = (body, self._t)
        start = len(self.invs)
        if body is not None:
            self._statement(body, ctx._replace(via=(*ctx.via, f"function {name}")))
        calls = [inv for inv in self.invs[start:] if inv.words and inv.words[0].text == name]
        piped = any(inv.upstream for inv in calls) or any(
            i in inv.upstream for inv in self.invs[start:] for i in range(start, len(self.invs))
        )
        if name and calls and (len(calls) >= 2 or any(c.background for c in calls) or piped):
            self.hits.append(Hit("cmd.fork_bomb", f"function {name} calls itself", span))

    def _for_words(self, node: Node, ctx: Ctx) -> None:
        """``for p in A B; do … $p …``: $p is each of A and B in turn, so it stands for all of
        them (judged as the list, split into words) when they are known; otherwise unknown."""
        var = node.child_by_field_name("variable")
        if var is None:
            return
        name = self._t.source(var)
        values = node.children_by_field_name("value")
        self.vars.pop(name, None)
        self.var_subs.pop(name, None)
        self.var_alias.pop(name, None)
        if not values or len(values) > 64 or any(_expands(v) for v in values):
            return
        texts: list[str] = []
        for v in values:
            words = self._word(v, ctx)
            if not all(w.literal for w in words):
                return
            texts += [w.text for w in words]
        if texts:
            self.vars[name] = IFS_SPLIT.join(texts)

    # ---------------------------------------------------------------- words

    def _word(self, node: Node, ctx: Ctx, *, split: bool = True) -> list[Word]:
        if node.type == "word":  # the common case: one plain word, nothing to expand
            text = unescape_unquoted(self._t.source(node))
            if IFS_SPLIT not in text:
                return [Word(text, True, self._span(node, ctx))]
        parts: list[str] = []
        state = {"literal": True, "procsub": False}
        subs: list[int] = []
        self._piece(node, ctx, parts, state, subs, quoted=False)
        text = "".join(parts)
        span = self._span(node, ctx)
        literal = bool(state["literal"])
        procsub = bool(state["procsub"])
        if IFS_SPLIT in text:
            if not split:
                return [Word(text.replace(IFS_SPLIT, " "), literal, span, tuple(subs), procsub)]
            return [
                Word(piece, literal, span, tuple(subs), procsub)
                for piece in text.split(IFS_SPLIT)
                if piece
            ]
        return [Word(text, literal, span, tuple(subs), procsub)]

    def _piece(
        self,
        node: Node,
        ctx: Ctx,
        parts: list[str],
        state: dict[str, bool],
        subs: list[int],
        *,
        quoted: bool,
    ) -> None:
        t = node.type
        if t == "word":
            src = self._t.source(node)
            parts.append(unescape_double_quoted(src) if quoted else unescape_unquoted(src))
        elif t in ("number", "brace_expression", "variable_name", "special_variable_name"):
            parts.append(self._t.source(node))
        elif t == "raw_string":
            parts.append(self._t.source(node)[1:-1])
        elif t == "ansi_c_string":
            parts.append(decode_ansi_c(self._t.source(node)[2:-1]))
        elif t in ("string", "translated_string"):
            children = node.children
            last = len(children) - 1
            for k, c in enumerate(children):
                ct = c.type
                if ct == "string_content":
                    parts.append(unescape_double_quoted(self._t.source(c)))
                elif c.is_named:
                    self._piece(c, ctx, parts, state, subs, quoted=True)
                elif k == last and k > 0:
                    # tree-sitter folds trailing blanks into the closing quote token (`" "`).
                    parts.append(self._t.source(c)[:-1])
        elif t == "concatenation":
            for c in node.children:
                self._piece(c, ctx, parts, state, subs, quoted=quoted)
        elif t in ("simple_expansion", "expansion"):
            self._expansion(node, parts, state, subs, quoted=quoted)
        elif t in ("command_substitution", "process_substitution"):
            state["literal"] = False
            if t == "process_substitution":
                state["procsub"] = True
            start = len(self.invs)
            self._statements(node, ctx._replace(inside_sub=True, upstream=()))
            subs.extend(range(start, len(self.invs)))
            parts.append(self._t.source(node))
        elif not node.is_named:
            parts.append(self._t.source(node))
        else:
            # arithmetic, extglob, regex, ...: keep the text, trust none of it.
            state["literal"] = False
            parts.append(self._t.source(node))
            for c in node.named_children:
                if c.type in ("command_substitution", "process_substitution"):
                    self._piece(c, ctx, [], state, subs, quoted=quoted)

    def _expansion(
        self,
        node: Node,
        parts: list[str],
        state: dict[str, bool],
        subs: list[int],
        *,
        quoted: bool,
    ) -> None:
        src = self._t.source(node)
        named = node.named_children
        name = ""
        simple = False
        if named and named[0].type in ("variable_name", "special_variable_name"):
            name = self._t.source(named[0])
            simple = len(named) == 1 and src in (f"${name}", f"${{{name}}}")
        if name == "IFS" and not quoted:
            parts.append(IFS_SPLIT)
            return
        if name == "IFS":
            parts.append(" ")
            return
        if not simple and name in self.vars and self.vars[name] and _DEFAULTED.fullmatch(src):
            simple = True  # ${X:?}, ${X:-/tmp}: X is set, so its value is what the shell uses
        if simple and name in self.vars:
            value = self.vars[name]
            # Unquoted, a known value is split into words as bash would.
            parts.append(value if quoted else value.replace(" ", IFS_SPLIT))
            return
        if simple and name in self.var_alias:
            state["literal"] = False
            parts.append(self.var_alias[name])
            return
        if simple and name in self.var_subs:
            subs.extend(self.var_subs[name])
        state["literal"] = False
        parts.append(f"${{{name}}}" if simple and src.startswith("${") else src)
        for c in named:
            if c.type in ("command_substitution", "process_substitution"):
                self._piece(c, Ctx(), [], state, subs, quoted=quoted)

    def _redirect(self, node: Node, ctx: Ctx) -> Redirect | None:
        op = ""
        fd = ""
        target: Word | None = None
        for c in node.children:
            if c.type == "file_descriptor":
                fd = self._t.source(c)
            elif not c.is_named:
                op += self._t.source(c)
            elif target is None:
                ws = self._word(c, ctx, split=False)
                target = ws[0] if ws else None
        if target is None:
            return None
        return Redirect(op, target, fd)

    # ---------------------------------------------------------------- commands

    def _command(
        self,
        node: Node,
        ctx: Ctx,
        extra: list[Redirect] | None = None,
        stdin: tuple[str | None, tuple[int, ...]] = (None, ()),
    ) -> None:
        words: list[Word] = []
        env: dict[str, str] = {}
        redirects: list[Redirect] = list(extra or ())
        stdin_text, text_subs = stdin
        word_end = -1  # end byte of the last word node: a node starting there continues it
        for child in node.children:
            t = child.type
            if t == "variable_assignment":
                pair = self._assignment(child, ctx, statement=False)
                if pair is not None:
                    env[pair[0]] = pair[1].text
            elif t == "command_name":
                for c in child.named_children:
                    words.extend(self._word(c, ctx))
                word_end = child.end_byte
            elif t in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                r = self._redirect(child, ctx)
                if r is not None:
                    if r.op == "<<<":
                        stdin_text = r.target.text + "\n"
                        text_subs = r.target.subs
                    redirects.append(r)
            elif child.is_named:
                more = self._word(child, ctx)
                if more and words and child.start_byte == word_end:
                    # tree-sitter-bash splits `A=`cmd`:0` after the `=`; with no blank between,
                    # the shell reads one word.
                    words[-1] = _join_words(words[-1], more[0])
                    more = more[1:]
                words.extend(more)
                word_end = child.end_byte
        if self._drop_last and words:
            words.pop()
        self._drop_last = False
        span = self._span(node, ctx)
        if not words:
            if env:
                for name, value in env.items():
                    self.assignments.append((name, Word(value, True, span)))
            return
        inv = Invocation(
            words,
            span,
            redirects,
            env,
            upstream=ctx.upstream,
            stdin_text=stdin_text,
            via=ctx.via,
            background=ctx.background,
            origin=ctx.origin,
            inside_sub=ctx.inside_sub,
        )
        self.emit(inv, ctx, text_subs)
        head = words[0].text if words[0].literal else ""
        if head in self._bodies and head not in self._calling:
            self._call(head, words[1:], ctx)
        elif (
            head == "set"
            and words[1:2]
            and words[1].text == "--"
            and all(w.literal for w in words[2:])
        ):
            self._positional(words[2:])  # set -- ~: $1 is now ~

    def _add(self, inv: Invocation, ctx: Ctx) -> int:
        if len(self.invs) >= MAX_INVOCATIONS and not self._budget():
            return -1
        inv.background = inv.background or ctx.background
        inv.inside_sub = inv.inside_sub or ctx.inside_sub
        self.invs.append(inv)
        return len(self.invs) - 1

    def _file_read_sub(self, node: Node, ctx: Ctx) -> bool:
        """``$(< FILE)``: bash reads FILE, as ``$(cat FILE)`` does; judged as that ``cat``."""
        named = node.named_children
        if len(named) != 1 or named[0].type != "file_redirect":
            return False
        r = self._redirect(named[0], ctx)
        if r is None or r.op != "<" or r.fd:
            return False
        span = self._span(node, ctx)
        via = "$(< file)"
        # The file word as parsed (a variable in it keeps it non-literal).
        words = [Word("cat", True, span), r.target]
        self._add(Invocation(words, span, via=(*ctx.via, via), origin=via), ctx)
        return True

    def _synthetic(self, argv: list[str], span: Span, ctx: Ctx, via: str) -> None:
        words = [Word(a, True, span) for a in argv]
        self._add(Invocation(words, span, via=(*ctx.via, via), origin=via), ctx)

    def emit(self, inv: Invocation, ctx: Ctx, text_subs: tuple[int, ...] = ()) -> None:
        """Record ``inv`` and open up what it runs (the unfold stage overrides this)."""
        raise NotImplementedError

    def _variable_code(self, name: str, value: str, span: Span, ctx: Ctx) -> None:
        """Open up code stored in a variable (the unfold stage overrides this)."""
        raise NotImplementedError

    def _late_redirects(self, inv: Invocation, ctx: Ctx) -> None:
        """``a && echo x > f`` (a list's redirects, added after ``emit``): the unfold stage
        remembers what is written."""
