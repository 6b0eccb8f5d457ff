"""Parse a command line with tree-sitter-bash and unfold what a shell would really run.

The result is a flat list of :class:`Invocation` (one per simple command, wrappers removed,
nested shells, ``eval``, heredocs, interpreter one-liners and script files opened up) plus the
hits found on the way (parse errors, opaque command names, unreadable scripts, reverse shells in
interpreter code). :mod:`domestique.guard.rules` judges the invocations.

Bounded: nesting depth, invocation count and script sizes are capped; going past a cap is a hit
(never a silent allow).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from domestique.guard import interp, jsast, pwsh, pyast
from domestique.guard.model import Hit, Invocation, Redirect, Span, Word, program_name
from domestique.guard.words import (
    decode_ansi_c,
    join_continuations,
    unescape_double_quoted,
    unescape_unquoted,
)

MAX_DEPTH = 8
MAX_INVOCATIONS = 4000
MAX_SCRIPT_BYTES = 256 * 1024
MAX_SCRIPTS = 16
IFS_SPLIT = "\x1f"

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "rbash",
     "elvish", "posh", "rc", "sash", "nu", "xonsh", "ion", "oksh", "pdksh", "es", "scsh"}
)  # fmt: skip
INTERPRETERS = {
    "python": "python", "pypy": "python", "perl": "perl", "ruby": "ruby", "node": "node",
    "nodejs": "node", "bun": "node", "deno": "node", "php": "php", "lua": "lua", "luajit": "lua",
    "awk": "awk", "gawk": "awk", "mawk": "awk", "nawk": "awk", "busybox-awk": "awk",
    "rscript": "r", "osascript": "applescript", "jrunscript": "node", "jjs": "node",
    "tclsh": "tcl", "wish": "tcl", "expect": "tcl", "irb": "ruby", "pwsh": "powershell",
    "powershell": "powershell", "groovy": "groovy", "julia": "julia", "gnuplot": "gnuplot",
    "bpftrace": "awk", "scala": "node",
}  # fmt: skip
# Option that introduces inline code, per interpreter.
CODE_FLAGS = {
    "python": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "php": ("-r",),
    "lua": ("-e",),
    "r": ("-e",),
    "applescript": ("-e",),
    "powershell": ("-c", "-command", "-Command", "-EncodedCommand", "-e", "-enc"),
    "groovy": ("-e",),
    "tcl": ("-c",),
    "julia": ("-e", "--eval"),
    "gnuplot": ("-e",),
}
# Flags that only check syntax: the code read (a file, stdin) is parsed, never run. Not perl -c,
# which runs BEGIN blocks and `use` imports.
SYNTAX_CHECK_FLAGS = {
    "php": ("-l", "--syntax-check"),
    "ruby": ("-c",),
    "node": ("-c", "--check"),
}
# Wrappers: how many option words take an argument, per wrapper.
_OPT_WITH_ARG = {
    "sudo": set("ugChpDrtUTR") | {"--user", "--group", "--host", "--prompt", "--chdir"},
    "doas": {"-u", "-C"},
    "run0": {"-u", "--user", "-D"},
    "pkexec": {"--user"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-t"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "setsid": set(),
    "nohup": set(),
    "time": {"-f", "--format", "-o", "--output"},
    "command": set(),
    "builtin": set(),
    "exec": {"-a"},
    # GNU -i, -l, -e (and --replace, --max-lines, --eof) take their value attached, if any
    "xargs": {"-I", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "--arg-file",
              "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
    "watch": {"-n", "--interval", "-d", "-q", "--differences"},
    "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
    "chroot": {"--userspec", "--groups"},
    "taskset": set(),
    "chrt": set(),
    "strace": {"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-O", "-a", "-b", "-I", "-S", "-X"},
    "ltrace": {"-o", "-e", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x"},
    "unbuffer": set(),
    "torsocks": set(),
    "torify": set(),
    "proxychains": {"-f"},
    "proxychains4": {"-f"},
    "catchsegv": set(),
    "valgrind": set(),
    "firejail": set(),
    "unshare": set(),
    "nsenter": {"-t", "--target"},
    "runuser": {"-u", "-g", "-G", "--user", "--group"},
    "systemd-run": {"-p", "--property", "-u", "--unit", "-E", "--setenv", "--description",
                    "-M", "--machine", "--uid", "--gid", "--working-directory", "--slice"},
    "caffeinate": {"-t", "-w"},
    "chronic": set(),
    "ts": set(),
    "rlwrap": set(),
    "xvfb-run": {"-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args"},
    "dbus-launch": set(),
    "sem": set(),
    "parallel": {"-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "-d",
                 "--delimiter", "-n", "--max-args", "-L", "-I", "--tmpdir", "--results",
                 "--colsep", "-C", "--timeout", "--delay", "--retries", "--tag-string"},
}  # fmt: skip
WRAPPERS = frozenset(_OPT_WITH_ARG) | {"busybox", "doas", "script", "su", "tmux", "screen"}
# Tools that take a shell command in an option (GTFOBins "shell" and "command" functions).
_CMD_OPTIONS: dict[str, tuple[str, ...]] = {
    "tar": ("--checkpoint-action=exec=", "--to-command=", "--use-compress-program=",
            "--rsh-command=", "--info-script=", "--new-volume-script=", "-I", "-F"),
    "zip": ("-TT", "--unzip-command"),
    "rsync": ("-e", "--rsh=", "--rsync-path="),
    "ssh": ("ProxyCommand=", "LocalCommand=", "-oProxyCommand=", "-oLocalCommand="),
    "scp": ("-S", "ProxyCommand=", "-oProxyCommand="),
    "sftp": ("-S", "ProxyCommand=", "-oProxyCommand="),
    "git": ("--upload-pack=", "--receive-pack=", "--exec="),
    "gdb": (),
    "man": ("-P", "--pager=", "-H"),
    "less": (),
    "rpm": ("--eval", "--pipe"),
    "rpmdb": ("--eval",),
    "rpmquery": ("--eval",),
    "rpmverify": ("--eval",),
    "dpkg": (),
    "make": ("--eval=", "SHELL="),
    "mail": ("--exec=",),
    "sqlite3": (".shell", ".system"),
    "mysql": ("system",),
    "pip": (),
}  # fmt: skip

_APT_NAMES = frozenset({"apt", "apt-get", "aptitude", "apt-cache", "apt-mark"})
_EDITORS = frozenset({"vim", "vi", "nvim", "ex", "view", "rvim", "gdb", "mysql", "sqlite3"})
# apt settings whose value is a shell command: hooks before/after updates and dpkg runs.
_APT_HOOK_KEYS = re.compile(r"(?i)(?:Pre|Post)-Invoke(?:-Success)?|Pre-Install-Pkgs|Run-Directory")
_BIN_DIRS = frozenset(
    {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/libexec"}
)

_CRASHES_PARSER = re.compile("[\U00040000-\U0010ffff]")

_parser: Parser | None = None


def parser() -> Parser:
    global _parser  # noqa: PLW0603 - one compiled grammar per process
    if _parser is None:
        _parser = Parser(Language(tree_sitter_bash.language()))
    return _parser


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


class Unfolder:
    """Walks tree-sitter trees into :class:`Invocation` objects. One instance per judgement."""

    def __init__(self, cwd: str | None, read_file: Callable[[str], bytes | None] | None) -> None:
        self.cwd = cwd
        self.read_file = read_file
        self.invs: list[Invocation] = []
        self.hits: list[Hit] = []
        self.vars: dict[str, str] = {}
        self.var_subs: dict[str, tuple[int, ...]] = {}
        self.assignments: list[tuple[str, Word]] = []
        self.functions: dict[str, Span] = {}
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
        if body is not None:
            if body.type == "command":
                self._command(node=body, ctx=ctx, extra=redirects, stdin=(stdin_text, text_subs))
            else:
                self._statement(body, ctx)
                for inv in self.invs[start:]:
                    if not inv.inside_sub:
                        inv.redirects.extend(redirects)
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
        return name, value

    def _declaration(self, node: Node, ctx: Ctx) -> None:
        words: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                pair = self._assignment(child, ctx, statement=True)
                if pair is not None:
                    words.append(Word(f"{pair[0]}={pair[1].text}", pair[1].literal, pair[1].span))
            elif child.is_named:
                words.extend(self._word(child, ctx))
            else:
                words.append(Word(self._t.source(child), True, self._span(child, ctx)))
        if words:
            self._add(Invocation(words, self._span(node, ctx)), ctx)

    def _function(self, node: Node, ctx: Ctx) -> None:
        name_node = node.child_by_field_name("name")
        name = self._t.source(name_node) if name_node is not None else ""
        span = self._span(node, ctx)
        self.functions[name] = span
        body = node.child_by_field_name("body")
        start = len(self.invs)
        if body is not None:
            self._statement(body, ctx._replace(via=(*ctx.via, f"function {name}")))
        calls = [inv for inv in self.invs[start:] if inv.words and inv.words[0].text == name]
        piped = any(inv.upstream for inv in calls) or any(
            i in inv.upstream for inv in self.invs[start:] for i in range(start, len(self.invs))
        )
        if name and calls and (len(calls) >= 2 or any(c.background for c in calls) or piped):
            self.hits.append(Hit("cmd.fork_bomb", f"function {name} calls itself", span))

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
        if simple and name in self.vars:
            value = self.vars[name]
            # Unquoted, a known value is split into words as bash would.
            parts.append(value if quoted else value.replace(" ", IFS_SPLIT))
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

    def _add(self, inv: Invocation, ctx: Ctx) -> int:
        if len(self.invs) >= MAX_INVOCATIONS and not self._budget():
            return -1
        inv.background = inv.background or ctx.background
        inv.inside_sub = inv.inside_sub or ctx.inside_sub
        self.invs.append(inv)
        return len(self.invs) - 1

    def emit(self, inv: Invocation, ctx: Ctx, text_subs: tuple[int, ...] = ()) -> None:
        """Unwrap ``inv``, record it, and open up whatever code it runs."""
        words = inv.words
        if not words:
            return
        # ``inv.name`` is the program name of ``words[0]``: not a wrapper (most commands), the
        # loop below would stop at once with nothing changed.
        if words[0].literal and inv.name in WRAPPERS:
            via = list(inv.via)
            for _ in range(32):
                if not words:
                    return
                head = words[0]
                if not head.literal:
                    break
                name = program_name(head.text)
                if name not in WRAPPERS and not (name == "busybox" and len(words) > 1):
                    break
                step = self._unwrap(name, words, inv, ctx)
                if step is None:
                    break
                new_words, code = step
                if not new_words and code is None:
                    break  # `env`, `nohup` alone: the wrapper itself is what runs
                via.append(name)
                if code is not None:
                    inv.retarget(words, tuple(via))
                    idx = self._add(inv, ctx)
                    if idx < 0:
                        return
                    self._run_code(code, inv, ctx, code_word_span=inv.span, via_name=name)
                    return
                words = new_words
            if words is not inv.words or len(via) != len(inv.via):
                inv.retarget(words, tuple(via))
            if not words:
                return
        idx = self._add(inv, ctx)
        if idx < 0:
            return
        head = words[0]
        if not head.literal:
            self.hits.append(
                Hit(
                    "cmd.opaque_command",
                    "the command name is not a literal: " + head.text[:60],
                    head.span,
                    inv.render(),
                )
            )
            if head.subs:
                inv.exec_data = (*inv.exec_data, *head.subs)
            return
        text = head.text
        if (
            ("*" in text or "?" in text or "[" in text)
            and _GLOB_NAME.search(text)
            and (text not in ("[", "[["))
        ):
            # /???/r? names whatever the file system matches: the program cannot be read
            self.hits.append(
                Hit("cmd.opaque_command", "the command name is a glob: " + head.text[:60],
                    head.span, inv.render())
            )  # fmt: skip
        if not (head.text.isascii() and head.text.isprintable()) and not _typographic_only(
            head.text
        ):
            self.hits.append(
                Hit(
                    "cmd.non_ascii_name",
                    "the command name has non-ASCII or invisible characters",
                    head.span,
                    ascii(head.text),
                )
            )
        name = inv.name
        if inv.env or name in _STORES_CODE:
            self._stored_code(inv, ctx)
        if name in ("make", "gmake", "bmake") and len(words) > 2:
            self._makefile_from_data(inv)
        if name not in _OPENS_CODE and "/" not in head.text:
            # Most commands run no code of their own: only what they write is remembered.
            if inv.redirects or name == "tee":
                self._remember_written(inv)
            return
        if ctx.via is not inv.via:
            ctx = ctx._replace(via=inv.via)
        self._remember_written(inv)
        if name in SHELLS:
            self._shell(inv, ctx, text_subs)
        elif name in ("eval",):
            self._eval(inv, ctx)
        elif name in ("source", "."):
            self._source(inv, ctx)
        elif name in INTERPRETERS:
            self._interpreter(inv, ctx, INTERPRETERS[name], text_subs)
        elif name == "find":
            self._find(inv, ctx)
        elif name == "trap" and len(inv.words) > 2:
            action = inv.words[1]
            if action.literal or not ("$(" in action.text or "`" in action.text):
                # Variables in the action (`trap "rm -f $tmp" EXIT`) stay variables either way.
                self.nested(action.text, ctx._replace(upstream=()), action.span, "trap")
            else:
                self._code_word(action, inv, ctx, "trap")
        elif name == "alias":
            for w in inv.words[1:]:
                if "=" in w.text and w.literal:
                    self.nested(w.text.split("=", 1)[1], ctx._replace(upstream=()), w.span, "alias")
        elif name in ("ssh", "dbclient") and len(inv.words) > 2:
            self._ssh_remote(inv, ctx)
        elif (
            (name == "capsh" and "--" in inv.args[-1:])
            or (name in ("sg", "newgrp") and "-c" not in inv.args)
            or (name == "systemd-run" and ({"-S", "--shell"} & set(inv.args)))
        ):
            self.hits.append(Hit("cmd.interactive_shell", f"{name} starts a shell", inv.span))
        elif "/" in head.text and name not in ("[",):
            self._run_file(head.text, inv, ctx, explicit=False)
        self._tool_options(inv, ctx)

    # ---------------------------------------------------------------- wrappers

    def _unwrap(
        self, name: str, words: list[Word], inv: Invocation, ctx: Ctx
    ) -> tuple[list[Word], str | None] | None:
        """Strip one wrapper: the words it runs, or shell code it runs (``su -c``), or None."""
        rest = words[1:]
        if name == "busybox":
            return rest, None
        if name == "command":
            if rest and rest[0].text in ("-v", "-V"):
                return None  # a lookup, runs nothing
            if not rest:
                return None
            return [w for w in rest if w.text not in ("-p", "--")], None
        if name == "su":
            for i, w in enumerate(rest):
                if w.text in ("-c", "--command") and i + 1 < len(rest):
                    return [], rest[i + 1].text if rest[i + 1].literal else None
                if w.text.startswith("--command="):
                    return [], w.text.split("=", 1)[1]
            self.hits.append(
                Hit("cmd.interactive_shell", "su starts an interactive shell", inv.span)
            )
            return None
        if name == "script":
            for i, w in enumerate(rest):
                combined = w.text.startswith("-") and not w.text.startswith("--")
                if (w.text == "--command" or (combined and w.text.endswith("c"))) and i + 1 < len(
                    rest
                ):
                    return [], rest[i + 1].text
            self.hits.append(
                Hit("cmd.interactive_shell", "script starts an interactive shell", inv.span)
            )
            return None
        if name in ("tmux", "screen"):
            code = _tail_after_session_opts(name, rest)
            if code is None:
                words_ = [w.text for w in rest]
                starts = not words_ or words_[0].startswith("-") or words_[0] in (
                    "new", "new-session", "new-window", "neww", "split-window", "splitw",
                )  # fmt: skip
                if starts and not any(
                    w in ("-ls", "-list", "-r", "-x", "-X", "ls") for w in words_
                ):
                    self.hits.append(
                        Hit("cmd.interactive_shell", f"{name} starts a shell", inv.span)
                    )
                return None
            return [], code
        if name == "env":
            i = 0
            while i < len(rest):
                opt = rest[i].text
                if opt in ("-S", "--split-string") and i + 1 < len(rest):
                    return [], " ".join(x.text for x in rest[i + 1 :])
                if opt.startswith("--split-string="):
                    return [], opt.split("=", 1)[1] + " " + " ".join(x.text for x in rest[i + 1 :])
                if opt == "--":
                    i += 1
                    break
                if opt in ("-i", "--ignore-environment", "-"):
                    inv.env[ENV_CLEARED] = ""  # every variable unset for the command
                if opt in ("-u", "--unset") and i + 1 < len(rest):
                    inv.env[rest[i + 1].text] = ""  # unset for the command: judged as emptied
                elif opt.startswith("--unset="):
                    inv.env[opt.split("=", 1)[1]] = ""
                if opt.startswith("-") and opt != "-":
                    i += 2 if opt in _OPT_WITH_ARG["env"] else 1
                    continue
                if "=" in opt and not opt.startswith("="):
                    inv.env[opt.split("=", 1)[0]] = opt.split("=", 1)[1]
                    i += 1
                    continue
                break
            rest = rest[i:]
            return rest, None
        if name in ("sudo", "doas", "run0", "pkexec"):
            i = 0
            opts = _OPT_WITH_ARG.get(name, set())
            interactive = False
            while i < len(rest):
                opt = rest[i].text
                if opt == "--":
                    i += 1
                    break
                if not opt.startswith("-") or opt == "-":
                    break
                if opt in ("-s", "--shell", "-i", "--login") or (
                    not opt.startswith("--") and ("s" in opt[1:] or "i" in opt[1:])
                ):
                    interactive = True
                if opt in opts or (not opt.startswith("--") and opt[-1:] in opts and len(opt) == 2):
                    i += 2
                else:
                    i += 1
            rest = rest[i:]
            if not rest:
                if interactive:
                    self.hits.append(
                        Hit(
                            "cmd.interactive_shell",
                            f"{name} starts an interactive root shell",
                            inv.span,
                        )
                    )
                return None
            if interactive:
                return [], " ".join(_quote_word(opt) for opt in rest)
            return rest, None
        if name == "timeout":
            rest = _skip_options(rest, _OPT_WITH_ARG["timeout"])
            return rest[1:], None  # the duration
        if name == "xargs":
            runs = _skip_options(rest, _OPT_WITH_ARG["xargs"], attached="IiLlnPdEeas")
            opts = {w.text for w in rest[: len(rest) - len(runs)]}
            if (
                {"-o", "--open-tty"} & opts
                and len(runs) == 1
                and program_name(runs[0].text) in SHELLS
            ):
                # xargs -o gives the shell the terminal: an interactive shell.
                self.hits.append(Hit("cmd.interactive_shell", "xargs -o starts a shell", inv.span))
            return self._xargs_fed(inv, rest[: len(rest) - len(runs)], runs), None
        if name in ("parallel", "sem"):
            rest = _skip_options(rest, _OPT_WITH_ARG["parallel"])
            cut = next((i for i, w in enumerate(rest) if w.text in (":::", "::::", ":::+")), None)
            cmd = rest[:cut] if cut is not None else rest
            if len(cmd) == 1:
                return [], cmd[0].text
            if cut is not None:  # the first argument group is appended to the command
                group = []
                for w in rest[cut + 1 :]:
                    if w.text in (":::", "::::", ":::+"):
                        break
                    group.append(w)
                cmd = [*cmd, *group]
            return cmd, None
        if name == "watch":
            exec_mode = any(w.text in ("-x", "--exec") for w in rest)
            rest = _skip_options(rest, _OPT_WITH_ARG["watch"])
            if exec_mode:
                return rest, None
            if len(rest) == 1:
                return [], rest[0].text  # watch runs its text with sh -c
            if rest and all(w.literal for w in rest):
                return [], " ".join(w.text for w in rest)
            return rest, None
        if name == "flock":
            for i, w in enumerate(rest):
                if w.text in ("-c", "--command") and i + 1 < len(rest):
                    return [], rest[i + 1].text
            rest = _skip_options(rest, _OPT_WITH_ARG["flock"])
            return rest[1:], None  # the lock file
        if name == "chroot":
            rest = _skip_options(rest, _OPT_WITH_ARG["chroot"])
            if len(rest) <= 1:
                self.hits.append(
                    Hit("cmd.interactive_shell", "chroot starts an interactive shell", inv.span)
                )
                return None
            return rest[1:], None
        if name in ("taskset", "chrt"):
            rest = _skip_options(rest, set())
            return rest[1:], None
        if name == "nice" and rest and re.fullmatch(r"-\d+", rest[0].text):
            return rest[1:], None
        if name == "unshare" and not _skip_options(rest, set()):
            self.hits.append(
                Hit("cmd.interactive_shell", "unshare starts an interactive shell", inv.span)
            )
            return None
        if name == "runuser":
            for i, w in enumerate(rest):
                if w.text in ("-c", "--command") and i + 1 < len(rest):
                    return [], rest[i + 1].text
        if name == "stdbuf":
            return _skip_options(rest, _OPT_WITH_ARG["stdbuf"], attached="ioe"), None
        if name == "exec" and not rest:
            return None
        return _skip_options(rest, _OPT_WITH_ARG.get(name, set())), None

    # ---------------------------------------------------------------- code runners

    def _run_code(
        self,
        code: str,
        inv: Invocation,
        ctx: Ctx,
        *,
        code_word_span: Span,
        via_name: str,
    ) -> None:
        sub_ctx = ctx._replace(upstream=inv.upstream)
        self.nested(code, sub_ctx, code_word_span, via_name)

    def _code_word(self, word: Word, idx_inv: Invocation, ctx: Ctx, via: str) -> None:
        """A word holding shell code: literal -> nested parse; else its data is executed."""
        if word.literal:
            self.nested(word.text, ctx._replace(upstream=idx_inv.upstream), word.span, via)
            return
        subs = list(word.subs)
        feeders = [self.invs[i] for i in subs if 0 <= i < len(self.invs)]
        texts = [
            f.stdin_text if f.name == "cat" and f.stdin_text is not None else _echoed(f)
            for f in feeders
        ]
        if (
            feeders
            and all(t is not None for t in texts)
            and word.text.strip().startswith(("$(", "`", '"$('))
        ):
            code = "\n".join(t for t in texts if t is not None)
            self.nested(code, ctx._replace(upstream=idx_inv.upstream), word.span, via)
            return
        if subs:
            idx_inv.exec_data = (*idx_inv.exec_data, *subs)
        known = _substitute_known(word.text, self.vars)
        if known is not None:
            self.nested(known, ctx._replace(upstream=idx_inv.upstream), word.span, via)
            return
        if not subs:
            self.hits.append(
                Hit(
                    "cmd.opaque_command",
                    f"{via} runs code that is not a literal",
                    word.span,
                    idx_inv.render(),
                )
            )

    def _stdin_code(self, inv: Invocation, ctx: Ctx, lang: str, text_subs: tuple[int, ...]) -> bool:
        """Code read from stdin: heredoc/here-string text, a file, or piped data. False if none."""
        via = f"{inv.name} <stdin"
        if inv.stdin_text is not None:
            if text_subs:
                inv.exec_data = (*inv.exec_data, *text_subs)
            if lang == "shell":
                self.nested(inv.stdin_text, ctx._replace(upstream=()), inv.span, via)
            else:
                self._analyze(inv.stdin_text, lang, inv, ctx)
            return True
        for r in inv.redirects:
            if (
                r.op in ("<", "<&", "<>")
                and r.fd in ("", "0")
                and (r.target.text in ("/dev/tty", "/dev/stdin") or r.target.text.isdigit())
            ):
                return False  # a terminal or another descriptor: interactive
            if r.op == "<" and r.fd in ("", "0"):
                if r.target.procsub or r.target.subs:
                    inv.exec_data = (*inv.exec_data, *r.target.subs)
                elif r.target.literal:
                    self._run_file(r.target.text, inv, ctx, explicit=True, lang=lang)
                else:
                    self.hits.append(
                        Hit("cmd.opaque_command", "code read from a variable file", r.target.span)
                    )
                return True
        if inv.upstream:
            feeders = [self.invs[i] for i in inv.upstream if not self.invs[i].inside_sub]
            texts = [_echoed(f) for f in feeders]
            if feeders and all(t is not None for t in texts):
                code = "\n".join(t for t in texts if t is not None)
                if lang == "shell":
                    self.nested(code, ctx._replace(upstream=()), inv.span, via)
                else:
                    self._analyze(code, lang, inv, ctx)
                return True
            cats = [f for f in feeders if f.name == "cat" and len(f.words) > 1]
            if (
                feeders
                and len(cats) == len(feeders)
                and all(w.literal for c in cats for w in c.words)
            ):
                for c in cats:
                    for w in c.words[1:]:
                        if not w.text.startswith("-"):
                            self._run_file(w.text, inv, ctx, explicit=True, lang=lang)
            inv.exec_data = (*inv.exec_data, *inv.upstream)
            return True
        return False

    def _shell(self, inv: Invocation, ctx: Ctx, text_subs: tuple[int, ...]) -> None:
        args = inv.words[1:]
        c_flag = False
        s_flag = False
        i = 0
        while i < len(args):
            w = args[i].text
            if w in ("--", "-"):
                i += 1 if w == "--" else 0
                break
            if w.startswith(("-o", "+o", "-O", "+O")) and len(w) == 2:
                i += 2
                continue
            if w in ("--rcfile", "--init-file", "--init-command", "-C"):
                i += 2
                continue
            if w in ("--version", "--help", "-n", "--noexec") or w.startswith("--dump"):
                return
            if w.startswith("--"):
                if w == "--command":
                    c_flag = True
                i += 1
                continue
            if w.startswith(("-", "+")) and len(w) > 1:
                c_flag = c_flag or "c" in w[1:]
                s_flag = s_flag or "s" in w[1:]
                i += 1
                continue
            break
        rest = args[i:]
        if c_flag:
            if rest:
                self._code_word(rest[0], inv, ctx, f"{inv.name} -c")
            return
        if rest and not s_flag:
            script = rest[0]
            if script.procsub or script.subs:
                inv.exec_data = (*inv.exec_data, *script.subs)
                return
            if script.text in ("-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
                if not self._stdin_code(inv, ctx, "shell", text_subs):
                    self.hits.append(Hit("cmd.interactive_shell", "a shell reads stdin", inv.span))
                return
            if script.literal:
                self._run_file(script.text, inv, ctx, explicit=True, lang="shell")
            else:
                self.hits.append(
                    Hit("cmd.opaque_command", "the script path is not a literal", script.span)
                )
            return
        if not self._stdin_code(inv, ctx, "shell", text_subs):
            self.hits.append(
                Hit(
                    "cmd.interactive_shell",
                    f"{inv.name} starts an interactive shell"
                    + (f" via {inv.via[-1]}" if inv.via else ""),
                    inv.span,
                    inv.render(),
                )
            )

    def _eval(self, inv: Invocation, ctx: Ctx) -> None:
        args = inv.words[1:]
        if not args:
            return
        if all(w.literal for w in args):
            self.nested(" ".join(w.text for w in args), ctx._replace(upstream=()), inv.span, "eval")
            return
        joined = Word(
            " ".join(w.text for w in args),
            False,
            inv.span,
            tuple(s for w in args for s in w.subs),
        )
        self._code_word(joined, inv, ctx, "eval")

    def _source(self, inv: Invocation, ctx: Ctx) -> None:
        args = inv.words[1:]
        if not args:
            return
        script = args[0]
        if script.procsub or script.subs:
            inv.exec_data = (*inv.exec_data, *script.subs)
        elif script.text in ("/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0"):
            self._stdin_code(inv, ctx, "shell", ())
        elif script.literal:
            self._run_file(script.text, inv, ctx, explicit=True, lang="shell")
        else:
            self.hits.append(
                Hit("cmd.opaque_command", "sourced path is not a literal", script.span)
            )

    def _interpreter(
        self, inv: Invocation, ctx: Ctx, lang: str, text_subs: tuple[int, ...]
    ) -> None:
        args = inv.words[1:]
        flags = CODE_FLAGS.get(lang, ())
        if lang == "awk":
            self._awk(inv, ctx)
            return
        if lang == "powershell":
            self._powershell(inv, ctx, text_subs)
            return
        if lang == "node" and inv.name == "deno" and args and args[0].text == "eval":
            args = [Word("-e", True, args[0].span), *args[1:]]
        codes: list[Word] = []
        script: Word | None = None
        i = 0
        while i < len(args):
            w = args[i]
            t = w.text
            if t in flags and i + 1 < len(args):
                codes.append(args[i + 1])
                i += 2
                continue
            if t.startswith("-") and not t.startswith("--") and lang in ("perl", "ruby"):
                code_at = _cluster_code(t)
                if code_at is not None:  # perl -ne CODE, -lane CODE, -anE'CODE'
                    if t[code_at:]:
                        codes.append(Word(t[code_at:], w.literal, w.span, w.subs))
                        i += 1
                    else:
                        if i + 1 < len(args):
                            codes.append(args[i + 1])
                        i += 2
                    continue
            if lang == "python" and t.startswith("-c") and len(t) > 2:
                codes.append(Word(t[2:], w.literal, w.span, w.subs))
                break
            if lang == "python" and t.startswith("-m"):  # -m json.tool, -mjson.tool
                return  # a module: judged as the project's code, see known escapes
            if t.startswith("-") and t != "-":
                i += 1
                continue
            script = w
            break
        if not codes and any(w.text in SYNTAX_CHECK_FLAGS.get(lang, ()) for w in args[:i]):
            return  # `xargs php -l`, `ruby -c < f`: a syntax check runs nothing
        if codes:
            for code in codes:
                if code.literal:
                    self._analyze(code.text, lang, inv, ctx, span=code.span)
                elif code.subs:
                    inv.exec_data = (*inv.exec_data, *code.subs)
                else:
                    self._analyze(code.text, lang, inv, ctx, span=code.span)
            return
        if script is not None and script.text != "-":
            if script.procsub or script.subs:
                inv.exec_data = (*inv.exec_data, *script.subs)
            return
        if not self._stdin_code(inv, ctx, lang, text_subs) and lang in ("tcl", "powershell"):
            self.hits.append(Hit("cmd.interactive_shell", f"{inv.name} starts a shell", inv.span))

    def _powershell(self, inv: Invocation, ctx: Ctx, text_subs: tuple[int, ...]) -> None:
        """``pwsh -Command CODE`` judged by ``pwsh``; an encoded command is decoded code."""
        args = inv.words[1:]
        i = 0
        while i < len(args):
            w = args[i]
            low = w.text.lower()
            if low in _PWSH_COMMAND and i + 1 < len(args):
                rest = args[i + 1 :]
                if any(r.subs for r in rest):
                    inv.exec_data = (*inv.exec_data, *(k for r in rest for k in r.subs))
                code = " ".join(r.text for r in rest)
                self._powershell_code(code, inv, ctx, rest[0].span)
                return
            if low.startswith("-") and pwsh.encoded_flag(low):
                self.hits.append(
                    Hit("cmd.decode_exec", f"{inv.name} runs an encoded command", w.span,
                        inv.render())
                )  # fmt: skip
                return
            if low in ("-file", "-f") or not low.startswith("-"):
                return  # a script file: judged as the project's code (see known escapes)
            i += 2 if _pwsh_takes_value(low) else 1
        if not self._stdin_code(inv, ctx, "powershell", text_subs):
            self.hits.append(Hit("cmd.interactive_shell", f"{inv.name} starts a shell", inv.span))

    def _powershell_code(self, code: str, inv: Invocation, ctx: Ctx, span: Span) -> None:
        for found, message, target in pwsh.judge_powershell(code):
            if target is not None:
                self._synthetic(["rm", "-rf", target], span, ctx, f"{inv.name} code")
            else:
                self.hits.append(Hit(found, message, span, f"powershell: {code[:160]}"))

    def _awk(self, inv: Invocation, ctx: Ctx) -> None:
        args = inv.words[1:]
        i = 0
        while i < len(args):
            t = args[i].text
            if t in ("-F", "-v", "--assign", "--field-separator") or t == "-f":
                if t == "-f":
                    return
                i += 2
                continue
            if t.startswith("-") and t != "-":
                i += 1
                continue
            self._analyze(args[i].text, "awk", inv, ctx, span=args[i].span)
            return

    def _analyze(
        self, code: str, lang: str, inv: Invocation, ctx: Ctx, span: Span | None = None
    ) -> None:
        facts = interp.analyze(code, lang)
        where = span or inv.span
        via = f"{inv.name} code"
        reads: list[str] = []
        if lang == "powershell":
            self._powershell_code(code, inv, ctx, where)
        parsed = (
            pyast.analyze_python(code)
            if lang == "python"
            else jsast.analyze_js(code)
            if lang == "node"
            else None
        )
        if parsed is not None:
            _merge_parsed(facts, parsed)
            reads = parsed.reads
        for shell in facts.shell:
            self.nested(shell, ctx._replace(upstream=()), where, via)
        for path in facts.delete_trees:
            self._synthetic(["rm", "-rf", path], where, ctx, via)
        for path in facts.delete_files:
            self._synthetic(["rm", path], where, ctx, via)
        for path, appends in facts.writes:
            # judged like the shell redirect it amounts to (device, history, hooks, start-up)
            self.nested(f": {'>>' if appends else '>'} {_quote_text(path)}", ctx, where, via)
        if facts.network:
            inv.code_network = True
        shown = f"{lang}: {code[:160]}"
        if facts.network and facts.sends_env:
            self.hits.append(
                Hit("cmd.exfiltration", f"{lang} code sends the environment", where, shown)
            )
        if facts.network:
            inv.code_env = (*inv.code_env, *dict.fromkeys(facts.env_names))
        if facts.sends_env:
            inv.code_dumps_env = True  # printed: sending it further is judged where it goes
        if facts.socket and (facts.wires_shell or any(_is_shell(s) for s in facts.shell)):
            code_name = "cmd.bind_shell" if facts.listens else "cmd.reverse_shell"
            self.hits.append(Hit(code_name, f"{lang} code wires a shell to a socket", where, shown))
        if facts.downloads and (facts.executes or facts.shell):
            self.hits.append(
                Hit("cmd.pipe_to_shell", f"{lang} code downloads and executes", where, shown)
            )
        if facts.decodes and facts.executes:
            self.hits.append(
                Hit("cmd.decode_exec", f"{lang} code decodes and executes", where, shown)
            )
        if facts.fork_loop:
            self.hits.append(Hit("cmd.fork_bomb", f"{lang} code forks in a loop", where, shown))
        if lang != "awk":
            from domestique.guard.paths import CREDENTIAL_FILES

            for text in interp.string_literals(interp.normalize_code(code)):
                if 3 <= len(text) <= 200 and CREDENTIAL_FILES.search(text):
                    inv.code_creds = (*inv.code_creds, text)
            for path in reads:
                if CREDENTIAL_FILES.search(path) and path not in inv.code_creds:
                    inv.code_creds = (*inv.code_creds, path)

    def _remember_written(self, inv: Invocation) -> None:
        """``echo … > x.sh`` / ``cat > x.sh <<EOF``: keep the text so running x.sh is judged."""
        if not inv.redirects and inv.name != "tee":
            return  # writes nothing
        targets = [r.target for r in inv.redirects if r.writes and r.target.literal]
        if inv.name == "tee":
            targets += [w for w in inv.words[1:] if w.literal and not w.text.startswith("-")]
        if not targets:
            return
        text: str | None = None
        if inv.name in ("echo", "printf"):
            text = _echoed(inv)
        elif inv.name in ("cat", "tee") and inv.stdin_text is not None:
            text = inv.stdin_text
        elif inv.upstream:
            texts = [_echoed(self.invs[i]) for i in inv.upstream]
            if texts and all(t is not None for t in texts):
                text = "\n".join(t for t in texts if t is not None)
        for target in targets:
            key = _path_key(target.text)
            if text is None:
                self.written.pop(key, None)
            else:
                self.written[key] = self.written.get(key, "") + text + "\n"

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

    def _ssh_remote(self, inv: Invocation, ctx: Ctx) -> None:
        """ssh HOST COMMAND…: the remote command is shell code (localhost is this machine)."""
        words = inv.words[1:]
        with_arg = set("bcDEeFIiJLlmOopQRSWw")
        i = 0
        while i < len(words):
            t = words[i].text
            if t == "--":
                i += 1
                break
            if t.startswith("-") and len(t) >= 2:
                i += 2 if (len(t) == 2 and t[1] in with_arg) else 1
                continue
            break
        rest = words[i + 1 :]
        if rest and all(w.literal for w in rest):
            code = " ".join(w.text for w in rest)
            self.nested(code, ctx._replace(upstream=()), _cover(rest), "ssh remote")

    def _find(self, inv: Invocation, ctx: Ctx) -> None:
        if _FIND_EXEC.isdisjoint(inv.args):
            return  # (most finds run no command)
        words = inv.words
        i = 1
        while i < len(words):
            t = words[i].text
            if t in _FIND_EXEC:
                j = i + 1
                while j < len(words) and words[j].text not in (";", "+", "\\;"):
                    j += 1
                inner = words[i + 1 : j]
                if inner:
                    dirs = " (dirs)" if _TYPE_DIR.search(" ".join(inv.argv)) else ""
                    sub = Invocation(
                        list(inner), inv.span, via=(*inv.via, f"find {t}{dirs}"), origin="find"
                    )
                    self.emit(sub, ctx)
                i = j + 1
                continue
            i += 1

    def _tool_options(self, inv: Invocation, ctx: Ctx) -> None:
        """Shell commands given to tools in options (tar --checkpoint-action=exec=…)."""
        prefixes = _CMD_OPTIONS.get(inv.name)
        words = inv.words
        if inv.name in _EDITORS:
            self._editor_escapes(inv, ctx)
            return
        if inv.name in _APT_NAMES:
            self._apt_hooks(inv, ctx)
            return
        if inv.name == "service" and len(words) > 1 and "/" in words[1].text:
            # `service NAME` runs /etc/init.d/NAME: a path in NAME runs whatever it points at.
            target = posixpath.normpath("/etc/init.d/" + words[1].text)
            runs = " ".join([target, *(w.text for w in words[2:])])
            self.nested(runs, ctx._replace(upstream=()), words[1].span, "service")
            return
        if inv.name == "run-parts":
            dirs = [w.text.rstrip("/") for w in words[1:] if not w.text.startswith("-")]
            if any(d in _BIN_DIRS for d in dirs):
                self.hits.append(
                    Hit("cmd.shell_escape", "run-parts runs the system's programs", inv.span,
                        inv.render())
                )  # fmt: skip
            return
        if not prefixes:
            return
        for i, w in enumerate(words[1:], start=1):
            t = w.text
            for p in prefixes:
                code: str | None = None
                if p.endswith("=") and p in t:
                    code = t.split(p, 1)[1]
                elif t == p and i + 1 < len(words):
                    code = words[i + 1].text
                elif len(p) == 2 and p.startswith("-") and t.startswith(p) and len(t) > 2:
                    code = t[2:]
                elif t == "-o" and p.startswith(("ProxyCommand", "LocalCommand")):
                    nxt = words[i + 1].text if i + 1 < len(words) else ""
                    if nxt.startswith(p):
                        code = nxt[len(p) :]
                if code:
                    if inv.name == "rpm" and code.startswith("%(") and code.endswith(")"):
                        code = code[2:-1]  # rpm macro %( … ) runs a shell command
                    self.nested(code, ctx._replace(upstream=()), w.span, f"{inv.name} {p}")
                    break

    def _makefile_from_data(self, inv: Invocation) -> None:
        """``make -f -`` / ``-f /dev/stdin`` / ``-f <(…)``: the makefile's recipes are code."""
        words = inv.words
        for k, w in enumerate(words[1:], start=1):
            target: Word | None = None
            if w.text in ("-f", "--file", "--makefile") and k + 1 < len(words):
                target = words[k + 1]
            elif w.text.startswith(("--file=", "--makefile=")):
                target = Word(w.text.split("=", 1)[1], w.literal, w.span, w.subs, w.procsub)
            if target is None:
                continue
            if target.text in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
                inv.exec_data = (*inv.exec_data, *inv.upstream)
            elif target.subs:
                inv.exec_data = (*inv.exec_data, *target.subs)

    def _xargs_fed(self, inv: Invocation, opts: list[Word], runs: list[Word]) -> list[Word]:
        """The command xargs runs with the arguments it reads when the line shows them.

        ``echo ~ | xargs rm -rf`` runs ``rm -rf ~``: the words of an ``echo``/``printf`` feeder
        (or a here-string, or ``pwd``) are appended, or put in place of ``-I``'s string.
        """
        if not runs:
            return runs
        replace_str = ""
        for k, w in enumerate(opts):
            if w.text == "-I" and k + 1 < len(opts):
                replace_str = opts[k + 1].text
            elif w.text.startswith("-I") and len(w.text) > 2:
                replace_str = w.text[2:]
            elif w.text == "-i" or w.text.startswith("--replace"):
                replace_str = w.text.partition("=")[2] or "{}"
        replace = bool(replace_str)
        items: list[Word] = []
        if inv.stdin_text is not None:
            items = [Word(t, "$" not in t, inv.span) for t in inv.stdin_text.split()]
        up = [i for i in inv.upstream if 0 <= i < len(self.invs)]
        # the stage right before xargs (`find . | grep -v x | xargs rm`: grep's output, not find's)
        direct = [i for i in up if not any(i in self.invs[j].upstream for j in up)]
        for i in direct:
            f = self.invs[i]
            if f.name in ("echo", "printf"):
                texts = [w for w in f.words[1:] if not (w.text.startswith("-") and w.literal)]
                if f.name == "printf" and texts:
                    texts = texts[1:] if "%" in texts[0].text else texts
                items += [Word(w.text, w.literal, w.span) for w in texts]
            elif f.name == "pwd":
                items.append(Word(".", True, f.span))
            elif (
                f.name == "ls"
                and replace
                and not any(a.startswith("-") and "d" in a for a in f.args)
            ):
                items.append(Word("*", True, f.span))  # the names in the listed folder
            elif f.name == "ls" and any(a.startswith("-") and "d" in a for a in f.args):
                items += [Word(w.text, w.literal, w.span) for w in f.words[1:]
                          if not w.text.startswith("-")]  # fmt: skip
            elif f.name == "find":
                items += _find_prints(f)
            elif f.name == "cat" and f.stdin_text is not None and len(f.words) == 1:
                items += [Word(t, "$" not in t, f.span) for t in f.stdin_text.split()]
        if not items:
            return runs
        if replace_str:
            item = items[0]
            return [
                Word(w.text.replace(replace_str, item.text), w.literal and item.literal, w.span)
                if replace_str in w.text
                else w
                for w in runs
            ]
        return [*runs, *items]

    def _variable_code(self, name: str, value: str, span: Span, ctx: Ctx) -> None:
        """A variable whose value a program later runs as a command (LESSOPEN, GIT_SSH_COMMAND)."""
        code = value.strip()
        if name.startswith("LESS"):
            code = code.lstrip("|-").replace("%s", "x")
        if code:
            self.nested(code, ctx._replace(upstream=()), span, f"${name}")

    def _stored_code(self, inv: Invocation, ctx: Ctx) -> None:
        """Shell code stored now and run later: command-holding variables, git config values
        that run programs, package scripts (``npm pkg set scripts.x=…``): judged as if run."""
        for k, v in inv.env.items():
            if k in CODE_VARIABLES and v:
                self._variable_code(k, v, inv.span, ctx)
        args = inv.args
        words = inv.words
        code: str | None = None
        if inv.name == "git":
            # git -c key=value … and git config [--global] key value
            for i, w in enumerate(words[1:], start=1):
                if words[i - 1].text == "-c" and "=" in w.text:
                    key, _, value = w.text.partition("=")
                    if _GIT_CODE_KEY.match(key) and w.literal:
                        self.nested(value.lstrip("!"), ctx._replace(upstream=()), w.span, "git -c")
            if "config" in args:
                rest = [a for a in args[args.index("config") + 1 :] if not a.startswith("-")]
                if len(rest) >= 2 and _GIT_CODE_KEY.match(rest[0]):
                    code = rest[1]
                    if rest[0].lower().startswith("alias."):
                        code = code[1:] if code.startswith("!") else ""
        elif inv.name in ("npm", "pnpm", "yarn") and args[:2] in (["pkg", "set"], ["set-script"]):
            if args[0] == "set-script" and len(args) >= 3:
                code = args[2]
            else:
                for a in args[2:]:
                    key, eq, value = a.partition("=")
                    if eq and key.startswith("scripts."):
                        code = value
        elif inv.name in ("npm", "pnpm", "yarn") and args[:1] == ["set-script"] and len(args) >= 3:
            code = args[2]
        if code:
            self.nested(code, ctx._replace(upstream=()), inv.span, f"{inv.name} stored command")

    def _apt_hooks(self, inv: Invocation, ctx: Ctx) -> None:
        """``apt-get -o APT::Update::Pre-Invoke::=CMD`` and the like run CMD through a shell."""
        words = inv.words
        for i, w in enumerate(words[1:], start=1):
            t = w.text
            if t in ("-o", "--option") and i + 1 < len(words):
                setting = words[i + 1].text
            elif t.startswith("-o") and len(t) > 2:
                setting = t[2:]
            elif t.startswith("--option="):
                setting = t.split("=", 1)[1]
            else:
                continue
            key, _, value = setting.partition("=")
            if value and _APT_HOOK_KEYS.search(key):
                self.nested(value, ctx._replace(upstream=()), w.span, f"{inv.name} -o {key}")

    def _editor_escapes(self, inv: Invocation, ctx: Ctx) -> None:
        words = inv.words
        for i, w in enumerate(words[1:], start=1):
            t = w.text
            cmd: str | None = None
            if t in ("-c", "--cmd", "-ex", "-eval-command", "-e") and i + 1 < len(words):
                cmd = words[i + 1].text
            elif t.startswith("+") and len(t) > 1:
                cmd = t[1:]
            if cmd is None:
                continue
            cmd = cmd.lstrip(":").strip()
            if cmd.startswith("!"):
                self.nested(cmd[1:], ctx._replace(upstream=()), w.span, f"{inv.name} !")
            elif cmd.startswith(("shell ", "system ")):
                self.nested(cmd.split(" ", 1)[1], ctx._replace(upstream=()), w.span, inv.name)
            elif cmd in ("sh", "shell", "terminal", "term"):
                self.hits.append(Hit("cmd.interactive_shell", f"{inv.name} :{cmd}", w.span))
            elif cmd.startswith(("py ", "py3 ", "python ", "python3 ", "pyx ", "pythonx ")):
                self._analyze(cmd.split(" ", 1)[1], "python", inv, ctx, span=w.span)
            elif cmd.startswith(("lua ",)):
                self._analyze(cmd.split(" ", 1)[1], "lua", inv, ctx, span=w.span)
            elif cmd.startswith(("ruby ", "rub ")):
                self._analyze(cmd.split(" ", 1)[1], "ruby", inv, ctx, span=w.span)
            elif cmd.startswith(("perl ",)):
                self._analyze(cmd.split(" ", 1)[1], "perl", inv, ctx, span=w.span)

    def _run_file(
        self, path: str, inv: Invocation, ctx: Ctx, *, explicit: bool, lang: str = "shell"
    ) -> None:
        """Read a script that is run and judge its contents (bounded)."""
        if self.read_file is None:
            return
        full = os.path.expanduser(path)
        if self.cwd and not os.path.isabs(full):
            full = os.path.join(self.cwd, full)
        if self.scripts_read >= MAX_SCRIPTS:
            self.hits.append(
                Hit("cmd.script_unread", "too many scripts to read: " + path, inv.span)
            )
            return
        self.scripts_read += 1
        try:
            data = self.read_file(full)
        except OSError:
            self.hits.append(
                Hit("cmd.script_unread", "the script could not be read: " + path, inv.span)
            )
            return
        if data is None:
            written = self.written.get(_path_key(path))
            if written is None:
                return  # no such file: the shell fails the same way
            data = written.encode("utf-8", "surrogatepass")
        if len(data) > MAX_SCRIPT_BYTES:
            self.hits.append(
                Hit("cmd.script_unread", f"the script is over {MAX_SCRIPT_BYTES} bytes", inv.span)
            )
            return
        head = data[:1024]
        if b"\x00" in head:
            return  # a binary (a build output): not a script
        text = data.decode("utf-8", "replace")
        if text.startswith("#!"):
            first = text.split("\n", 1)[0][2:].strip().split()
            prog = ""
            if first:
                prog = program_name(first[0])
                if prog == "env" and len(first) > 1:
                    rest = [p for p in first[1:] if not p.startswith("-")]
                    prog = program_name(rest[0]) if rest else ""
            if not explicit:
                if prog in INTERPRETERS:
                    lang = INTERPRETERS[prog]
                elif prog in SHELLS or not prog:
                    lang = "shell"
                else:
                    return
        elif not explicit:
            lang = "shell"  # no shebang: the shell runs it itself
        via = f"script:{path}"
        if lang == "shell":
            self.nested(text, ctx._replace(upstream=()), inv.span, via)
        else:
            self._analyze(text, lang, inv, ctx)


# Names ``emit`` (and ``_tool_options``) open code for: every other name, unless its command
# word has a slash (a script run), runs no code of its own the guard could unfold.
# Variables whose value a program runs as a shell command.
CODE_VARIABLES = frozenset(
    {"LESSOPEN", "LESSCLOSE", "PAGER", "MANPAGER", "GIT_PAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
     "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND",
     "BASH_ENV", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "BROWSER", "SYSTEMD_PAGER",
     "PERLDOC_PAGER", "FCEDIT", "GIT_SEQUENCE_EDITOR", "SVN_EDITOR", "PSQL_PAGER", "MYSQL_PS1"}
)  # fmt: skip
# git configuration keys whose value git runs as a command.
_GIT_CODE_KEY = re.compile(
    r"(?i)^(?:alias\.\S+|core\.(?:pager|sshcommand|fsmonitor|editor|askpass|gitproxy)|"
    r"sequence\.editor|diff\.external|diff\.[^.]+\.(?:textconv|command)|"
    r"filter\.[^.]+\.(?:clean|smudge|process)|gpg\.(?:[^.]+\.)?program|pager\.\S+|"
    r"merge\.[^.]+\.driver|uploadpack\.packobjectshook)$"
)
_STORES_CODE = frozenset({"git", "npm", "pnpm", "yarn"})
# The key ``env -i`` leaves in ``Invocation.env``: the command starts with no variables at all.
ENV_CLEARED = "\0cleared"
_PWSH_COMMAND = frozenset({"-c", "-co", "-com", "-comm", "-comma", "-comman", "-command", "/c"})
_PWSH_OPT_WITH_ARG = (
    "executionpolicy", "workingdirectory", "outputformat", "inputformat", "windowstyle",
    "configurationname", "settingsfile", "custompipename", "version",
)  # fmt: skip


def _pwsh_takes_value(flag: str) -> bool:
    """PowerShell accepts any unambiguous prefix of a parameter (``-Exec Bypass``, ``-W h``)."""
    name = flag.lstrip("-/")
    return name in ("ep", "ex", "wd", "of", "if", "w", "v") or (
        len(name) >= 2 and any(full.startswith(name) for full in _PWSH_OPT_WITH_ARG)
    )


_HOME_VALUE = re.compile(r"^(?:\$HOME|\$\{HOME\})(?:/[\w.@+-]*)*/?$")
_GLOB_NAME = re.compile(r"[*?]|\[.*\]")
_OPENS_CODE = (
    SHELLS
    | frozenset(INTERPRETERS)
    | frozenset(_CMD_OPTIONS)
    | _EDITORS
    | _APT_NAMES
    | {"eval", "source", ".", "find", "trap", "alias", "ssh", "dbclient", "capsh", "sg", "newgrp"}
    | {"systemd-run", "service", "run-parts"}
)


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_NUMBER_OPTION = re.compile(r"-\d+(?:\.\d+)?[smhd]?")
_TYPE_DIR = re.compile(r"-type\s+d\b")


def _skip_options(words: list[Word], with_arg: set[str], attached: str = "") -> list[Word]:
    i = 0
    while i < len(words):
        t = words[i].text
        if t == "--":
            return words[i + 1 :]
        if not t.startswith("-") or t == "-" or not words[i].literal:
            return words[i:]
        if t[1:2].isdigit() and _NUMBER_OPTION.fullmatch(t):  # (isdigit: every \d, and more)
            i += 1
            continue
        name = t.split("=", 1)[0]
        if "=" in t or (attached and len(t) > 2 and t[1] in attached and not t.startswith("--")):
            i += 1
        elif name in with_arg:
            i += 2
        else:
            i += 1
    return []


def _tail_after_session_opts(name: str, rest: list[Word]) -> str | None:
    """tmux new -d 'cmd' / screen -dm cmd: the command they start, if any."""
    if name == "tmux":
        words = [w.text for w in rest]
        if not words or words[0] not in (
            "new",
            "new-session",
            "new-window",
            "neww",
            "send-keys",
            "send",
            "split-window",
            "splitw",
            "run-shell",
            "run",
        ):
            return None
        args = words[1:]
        with_arg = {"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-f", "-l"}
        i = 0
        while i < len(args):
            if args[i] in with_arg:
                i += 2
            elif args[i].startswith("-"):
                i += 1
            else:
                break
        tail = args[i:]
        return " ".join(tail) if tail else None
    words = [w.text for w in rest]
    i = 0
    while i < len(words):
        if words[i] in ("-S", "-c", "-L", "-T", "-t", "-p", "-X", "-logfile"):
            i += 2
        elif words[i].startswith("-"):
            i += 1
        else:
            break
    tail = words[i:]
    return " ".join(_quote_text(t) for t in tail) if tail else None


_FIND_UNFILTERED = frozenset(
    {"-maxdepth", "-mindepth", "-print", "-print0", "-L", "-H", "-P", "-xdev", "-mount", "-depth"}
)


def _find_prints(f: Invocation) -> list[Word]:
    """The path an unfiltered ``find X`` prints first: X itself (X/* with ``-mindepth`` > 0)."""
    args = [w.text for w in f.words[1:]]
    if not args or args[0].startswith("-"):
        return []
    opts = [a for a in args if a.startswith("-")]
    if any(o not in _FIND_UNFILTERED for o in opts):
        return []  # tests (-name, -type, …) print a subset: not the folder itself
    root = f.words[1]
    depth = args[args.index("-mindepth") + 1] if "-mindepth" in args[:-1] else "0"
    text = root.text.rstrip("/") + "/*" if depth != "0" else root.text
    return [Word(text, root.literal, root.span)]


def _merge_parsed(facts: interp.CodeFacts, py: pyast.PyFacts) -> None:
    """Add what a parser's reading (Python ``ast``, tree-sitter JavaScript) found to the
    text-pattern facts (never removes any)."""
    facts.shell += [c for c in py.commands if c not in facts.shell]
    facts.delete_trees += [p for p in py.delete_trees if p not in facts.delete_trees]
    facts.delete_files += [p for p in py.delete_files if p not in facts.delete_files]
    facts.writes += [w for w in py.writes if w not in facts.writes]
    facts.network = facts.network or py.network
    facts.sends_env = facts.sends_env or py.sends_env
    facts.env_names += [n for n in py.secret_vars if n not in facts.env_names]


def _quote_text(t: str) -> str:
    if t and all(c.isalnum() or c in "-_./=:,@%+" for c in t):
        return t
    return "'" + t.replace("'", "'\\''") + "'"


def _quote_word(w: Word) -> str:
    return _quote_text(w.text)


def _echoed(inv: Invocation) -> str | None:
    """The text an ``echo``/``printf`` of literal words prints, else None."""
    if inv.name not in ("echo", "printf") or not all(w.literal for w in inv.words):
        return None
    args = [w.text for w in inv.words[1:]]
    if inv.name == "echo":
        decode = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            decode = decode or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return decode_ansi_c(text) if decode else text
    if not args:
        return ""
    fmt = decode_ansi_c(args[0])
    try:
        return fmt.replace("%s", "{}").format(*args[1:]) if "%s" in fmt else fmt
    except (IndexError, ValueError):
        return fmt


def _substitute_known(text: str, variables: dict[str, str]) -> str | None:
    """``$x``/``${x}`` replaced by known literal values; None when any is unknown."""
    unknown = False

    def sub(m: re.Match[str]) -> str:
        nonlocal unknown
        name = m.group(1) or m.group(2)
        if name in variables:
            return variables[name]
        unknown = True
        return m.group(0)

    out = re.sub(r"\$(?:\{(\w+)\}|(\w+))", sub, text)
    if unknown or "$(" in out or "`" in out:
        return None
    return out


def _cluster_code(flag: str) -> int | None:
    """In a perl/ruby flag cluster, where inline code starts (after -e/-E); None if no -e."""
    after_l = False
    for i, c in enumerate(flag[1:], start=1):
        if after_l and c in "01234567":
            continue  # -l40: -l's octal argument, not -0
        after_l = c == "l"
        if c in "eE":
            return i + 1
        if c in "FIMmxCdDi0":
            return None  # these take the rest of the word as their own argument
    return None


# Curly quotes pasted from a document: they look like no letter, so a name made of ASCII and
# these is no homoglyph; bash runs a program literally named `PHP]”`, which does not exist.
_TYPOGRAPHIC_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f"))


def _typographic_only(name: str) -> bool:
    plain = name.translate(_TYPOGRAPHIC_QUOTES)
    return plain != name and plain.isascii() and plain.isprintable()


def _join_words(a: Word, b: Word) -> Word:
    return Word(a.text + b.text, a.literal and b.literal, (a.span[0], b.span[1]),
                a.subs + b.subs, a.procsub or b.procsub)  # fmt: skip


def _cover(words: list[Word]) -> Span:
    return (min(w.span[0] for w in words), max(w.span[1] for w in words))


def _path_key(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    return p


def _is_shell(code: str) -> bool:
    first = code.strip().split(" ", 1)[0] if code.strip() else ""
    return program_name(first) in SHELLS


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


def unfold_command(
    command: str,
    *,
    cwd: str | None = None,
    read_file: Callable[[str], bytes | None] | None = None,
) -> Unfolded:
    """Parse and unfold ``command``. Never raises on any input text."""
    return Unfolder(cwd, read_file).unfold(command)


def read_script(path: str) -> bytes | None:
    """Read at most ``MAX_SCRIPT_BYTES + 1`` bytes of a regular file; None if it does not exist."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return fh.read(MAX_SCRIPT_BYTES + 1)
    except FileNotFoundError:
        return None


__all__: list[Any] = [
    "Unfolded",
    "Unfolder",
    "read_script",
    "simple_commands",
    "simple_words",
    "unfold_command",
]
