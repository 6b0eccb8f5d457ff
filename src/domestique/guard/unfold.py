"""Unfold a command line into what a shell would really run.

The result is a flat list of :class:`Invocation` (one per simple command, wrappers removed,
nested shells, ``eval``, heredocs, interpreter one-liners and script files opened up) plus the
hits about what could not be opened (parse errors, opaque command names, unreadable scripts,
caps reached). The stage is layered: :mod:`.simple` reads plain lines without a parser,
:mod:`.parse` walks tree-sitter trees (``Walker``), :mod:`.wrappers` strips ``sudo``/``env``/…,
:mod:`.runners` opens interpreter code and script files, and this module's ``Unfolder.emit``
records each invocation and opens up what it runs. :mod:`domestique.guard.rules` judges them.

Bounded: nesting depth, invocation count and script sizes are capped; going past a cap is a hit
(never a silent allow).
"""

from __future__ import annotations

import posixpath
import re

from domestique.guard import buildfiles
from domestique.guard.env import NO_MACHINE, GuardEnv
from domestique.guard.feeds import (
    RECIPE,
    RM_NAMES,
    names_home,
    positional,
    recursive_delete,
    runs_stdin_code,
)
from domestique.guard.model import Hit, Invocation, Span, Word, program_name
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.parse import CODE_VARIABLES, Ctx, Unfolded
from domestique.guard.paths import SHELL_STARTUP_FILES, canonical_for_match
from domestique.guard.rules.vocab import DOWNLOADERS
from domestique.guard.runners import Runners, echoed, path_key
from domestique.guard.wrappers import WRAPPERS, quote_text, unwrap

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


# git configuration keys whose value git runs as a command.
_GIT_CODE_KEY = re.compile(
    r"(?i)^(?:alias\.\S+|core\.(?:pager|sshcommand|fsmonitor|editor|askpass|gitproxy)|"
    r"sequence\.editor|diff\.external|diff\.[^.]+\.(?:textconv|command)|"
    r"filter\.[^.]+\.(?:clean|smudge|process)|gpg\.(?:[^.]+\.)?program|pager\.\S+|"
    r"merge\.[^.]+\.driver|uploadpack\.packobjectshook)$"
)


_STORES_CODE = frozenset({"git", "npm", "pnpm", "yarn", "crontab"})


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
_STARTS_SHELLS = frozenset({"capsh", "sg", "newgrp", "systemd-run"})


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


_TYPE_DIR = re.compile(r"-type\s+d\b")


_FIND_UNFILTERED = frozenset(
    {"-maxdepth", "-mindepth", "-print", "-print0", "-L", "-H", "-P", "-xdev", "-mount", "-depth"}
)


# System cron tables (a user field after the schedule) and the per-user spool (none).
_TASK_COMMAND = re.compile(r'"command"\s*:\s*"((?:[^"\\]|\\.)*)"')
# Python files run at start-up: site hooks, .pth import lines, IPython start-up scripts.
_PYTHON_STARTUP = re.compile(
    r"(?:\.pth|sitecustomize\.py|usercustomize\.py|\.ipython/profile_[^/]+/startup/[^/]+\.py)$"
)
# Names a shell alias or function must not take: the guard's own command.
GUARD_PROGRAMS = frozenset({"domestique"})
_HOME_PATH = re.compile(r"^(?:\$HOME|\$\{HOME\})/[\w.@+/-]+$")


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


_RECIPE_PREFIX = re.compile(r"(?m)^\.RECIPEPREFIX\s*[:?+]?=\s*(\S)")


def _quote_word(w: Word) -> str:
    return quote_text(w.text)


def _substitute_vars(text: str, variables: dict[str, str]) -> tuple[str, bool]:
    """``$x``/``${x}`` replaced by known literal values; whether any was left unknown."""
    unknown = False

    def sub(m: re.Match[str]) -> str:
        nonlocal unknown
        name = m.group(1) or m.group(2)
        if name in variables:
            return variables[name]
        unknown = True
        return m.group(0)

    return re.sub(r"\$(?:\{(\w+)\}|(\w+))", sub, text), unknown


def _substitute_known(text: str, variables: dict[str, str]) -> str | None:
    """``$x``/``${x}`` replaced by known literal values; None when any is unknown."""
    out, unknown = _substitute_vars(text, variables)
    if unknown or "$(" in out or "`" in out:
        return None
    return out


# Curly quotes pasted from a document: they look like no letter, so a name made of ASCII and
# these is no homoglyph; bash runs a program literally named `PHP]”`, which does not exist.
_TYPOGRAPHIC_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f"))


def _typographic_only(name: str) -> bool:
    plain = name.translate(_TYPOGRAPHIC_QUOTES)
    return plain != name and plain.isascii() and plain.isprintable()


def _cover(words: list[Word]) -> Span:
    return (min(w.span[0] for w in words), max(w.span[1] for w in words))


def unfold_command(command: str, *, cwd: str | None = None, env: GuardEnv = NO_MACHINE) -> Unfolded:
    """Parse and unfold ``command``. Never raises on any input text.

    Scripts the command runs are read through ``env.read_file`` (none by default).
    """
    return Unfolder(cwd, env).unfold(command)


class Unfolder(Runners):
    """Walks tree-sitter trees into :class:`Invocation` objects. One instance per judgement."""

    def emit(self, inv: Invocation, ctx: Ctx, text_subs: tuple[int, ...] = ()) -> None:
        """Unwrap ``inv``, record it, and open up whatever code it runs."""
        words = inv.words
        if not words:
            return
        # ``inv.name`` is the program name of ``words[0]``: not a wrapper (most commands), there
        # is nothing to strip.
        if words[0].literal and inv.name in WRAPPERS:
            if not self._unwrap_all(inv, ctx):
                return
            words = inv.words
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
        if name in ("make", "gmake", "bmake") and len(words) >= 2:
            self._makefile_from_data(inv, ctx)
        if name in ("sed", "perl") and len(words) >= 3:
            self._sed_edit(inv, ctx)
        if name not in _OPENS_CODE and "/" not in head.text:
            # Most commands run no code of their own: only what they write is remembered.
            if inv.redirects or name == "tee":
                self._remember_written(inv, ctx)
            return
        if ctx.via is not inv.via:
            ctx = ctx._replace(via=inv.via)
        self._remember_written(inv, ctx)
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
                if w.text.split("=", 1)[0] in GUARD_PROGRAMS:
                    self.hits.append(
                        Hit("cmd.guard_tamper", "an alias shadows Domestique's command", w.span)
                    )
                if "=" in w.text and w.literal:
                    self.nested(w.text.split("=", 1)[1], ctx._replace(upstream=()), w.span, "alias")
        elif name in ("ssh", "dbclient") and len(inv.words) > 2:
            self._ssh_remote(inv, ctx)
        elif name in _STARTS_SHELLS:
            pass  # the shell they may start (`capsh --`, `sg grp`) is judged by commands.toml
        elif "/" in head.text and name not in ("[",):
            self._run_file(head.text, inv, ctx, explicit=False)
        self._tool_options(inv, ctx)

    # ---------------------------------------------------------------- wrappers

    def _unwrap_all(self, inv: Invocation, ctx: Ctx) -> bool:
        """Strip the wrappers off ``inv`` (``sudo env X=1 timeout 5 cmd`` -> ``cmd``).

        False when nothing is left to record here: no words remain, or a wrapper runs shell
        code (``su -c CODE``: the wrapper is recorded and its code opened up as nested code).
        """
        words = inv.words
        via = list(inv.via)
        wrapped = list(inv.wrapped)
        for _ in range(32):
            if not words:
                return False
            head = words[0]
            if not head.literal:
                break
            name = program_name(head.text)
            if name not in WRAPPERS:
                break
            step = unwrap(name, words, inv, self._xargs_fed)
            if step is None:
                break
            new_words, code = step
            if not new_words and code is None:
                break  # `env`, `nohup` alone: the wrapper itself is what runs
            via.append(name)
            wrapped.append((name, tuple(words[1:])))
            if code is not None:
                inv.retarget(words, tuple(via), tuple(wrapped))
                if self._add(inv, ctx) >= 0:
                    self._run_code(code, inv, ctx, code_word_span=inv.span, via_name=name)
                return False
            words = new_words
        if words is not inv.words or len(via) != len(inv.via):
            inv.retarget(words, tuple(via), tuple(wrapped))
        return bool(words)

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
            f.stdin_text if f.name == "cat" and f.stdin_text is not None else echoed(f)
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
            if word.text.strip().startswith(("$(", "`", '"$(')):
                # `eval "$(cat FILE)"`, `bash -c "$(< FILE)"`: FILE's text is the code run,
                # judged as a script, like `bash FILE` and `cat FILE | bash`
                self.run_cat_files(feeders, idx_inv, ctx)
        known = _substitute_known(word.text, self.vars)
        if known is not None:
            self.nested(known, ctx._replace(upstream=idx_inv.upstream), word.span, via)
            return
        if subs and not word.text.strip().startswith(("$(", "`", '"$(')):
            # `bash -c "rm -rf ~/$(echo x)"`: the code around the substitution is run too;
            # parsed with the substitution still in place, its value stays unknown
            partial, _ = _substitute_vars(word.text, self.vars)
            self.nested(partial, ctx._replace(upstream=idx_inv.upstream), word.span, via)
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
                self._code_word(positional(rest[0], rest[1:]), inv, ctx, f"{inv.name} -c")
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
            texts = [echoed(self.invs[i]) for i in script.subs if i < len(self.invs)]
            if texts and all(t is not None for t in texts):
                # source <(echo 'export X=…'): the code is known, judge it as run
                code = "\n".join(t for t in texts if t is not None)
                self.nested(code, ctx._replace(upstream=()), script.span, "source <(…)")
        elif script.text in ("/dev/stdin", "-", "/proc/self/fd/0", "/dev/fd/0"):
            self._stdin_code(inv, ctx, "shell", ())
        elif script.literal:
            self._run_file(script.text, inv, ctx, explicit=True, lang="shell")
        elif _HOME_PATH.match(script.text) and self.env.home:
            # . "$HOME/.cargo/env": home is known, so the file is too
            path = self.env.home.rstrip("/") + "/" + script.text.split("/", 1)[1]
            self._run_file(path, inv, ctx, explicit=True, lang="shell")
        else:
            self.hits.append(
                Hit("cmd.opaque_command", "sourced path is not a literal", script.span)
            )

    def _late_redirects(self, inv: Invocation, ctx: Ctx) -> None:
        if inv.name in ("echo", "printf", "cat", "tee"):
            self._remember_written(inv, ctx)

    def _remember_written(self, inv: Invocation, ctx: Ctx) -> None:
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
            text = echoed(inv)
        elif inv.name in ("cat", "tee") and inv.stdin_text is not None:
            text = inv.stdin_text
        elif inv.upstream:
            texts = [echoed(self.invs[i]) for i in inv.upstream]
            if texts and all(t is not None for t in texts):
                text = "\n".join(t for t in texts if t is not None)
        for target in targets:
            key = path_key(target.text)
            if text is None:
                self.written.pop(key, None)
            else:
                self.written[key] = self.written.get(key, "") + text + "\n"
                self._startup_text(target.text, text, inv, ctx)

    def _crontab_text(self, inv: Invocation) -> str | None:
        """The table ``crontab`` installs: piped echo/printf text, a here-document, a file
        written earlier in the line (``crontab -l`` and ``-r`` install nothing)."""
        if any(a in ("-l", "-r", "-e") for a in inv.args):
            return None
        if inv.stdin_text is not None:
            return inv.stdin_text
        texts = [echoed(self.invs[i]) for i in inv.upstream if i < len(self.invs)]
        known = [t for t in texts if t is not None]
        if known:
            return "\n".join(known)
        files = [a for a in inv.args if not a.startswith("-")]
        if files and files[-1] != "-":
            return self.written.get(path_key(files[-1]))
        return None

    def _startup_text(self, path: str, text: str, inv: Invocation, ctx: Ctx) -> None:
        """Text written into a file that runs at start-up is code: a shell rc file is judged as
        shell, sitecustomize and a ``.pth`` file's ``import`` lines as Python."""
        canon = canonical_for_match(path, self.cwd, self.env)
        if SHELL_STARTUP_FILES.search(canon):
            self.nested(text, ctx._replace(upstream=()), inv.span, f"start-up:{path}")
        elif buildfiles.CRON_FILE.search(canon):
            code = buildfiles.cron_commands(
                text, user_field=not canon.startswith(("var/", "/var/"))
            )
            if code:
                self.nested(code, ctx._replace(upstream=()), inv.span, f"cron:{path}")
        elif canon.endswith(".vscode/tasks.json") and "folderOpen" in text:
            # a VS Code task that runs when the folder is opened: its commands are shell code
            self.hits.append(Hit("cmd.persistence", "a VS Code task runs on folder open", inv.span))
            for m in _TASK_COMMAND.finditer(text):
                self.nested(m.group(1).replace('\\"', '"'), ctx._replace(upstream=()),
                            inv.span, f"task:{path}")  # fmt: skip
        elif (name := buildfiles.agent_env_control(canon, text)) is not None:
            self.hits.append(Hit("cmd.guard_tamper", f"sets {name} in agent file {path}", inv.span))
        elif _PYTHON_STARTUP.search(canon):
            code = text
            if canon.endswith(".pth"):
                code = "\n".join(
                    ln for ln in text.splitlines() if ln.startswith(("import ", "import\t"))
                )
            if code.strip():
                self._analyze(code, "python", inv, ctx)
        else:
            self._later_code(path, canon, text, inv, ctx)

    def _later_code(self, path: str, canon: str, text: str, inv: Invocation, ctx: Ctx) -> None:
        """Text written into a file a tool runs later (conftest.py, a Makefile recipe, package
        scripts, .envrc, git hooks) is judged as that code; text that points a dependency or
        build file at another source, or prints a CI secret, is named (:mod:`.buildfiles`)."""
        sub = ctx._replace(upstream=())
        for lang, code in buildfiles.code_in(canon, text):
            if lang == "shell":
                self.nested(code, sub, inv.span, f"run later:{path}")
            elif code.strip():
                self._analyze(code, lang, inv, ctx)
        for code_name, message in buildfiles.sources_in(canon, text):
            self.hits.append(Hit(code_name, message, inv.span, inv.render()))
        for line in buildfiles.workflow_code(canon, text):
            self.nested(line, sub, inv.span, f"ci:{path}")

    def _sed_edit(self, inv: Invocation, ctx: Ctx) -> None:
        """``sed -i 's#old#NEW#' FILE``, ``sed -i '$a TEXT' FILE``: the text put into each file
        is judged as written there (see :meth:`_later_code`)."""
        edit = buildfiles.in_place_edit(inv.name, [w.text for w in inv.words[1:]])
        if edit is None or not all(w.literal for w in inv.words[1:]):
            return
        pairs, files = edit
        text = "\n".join(new for _, new in pairs)
        if not text:
            return
        swapped = [
            host for old, new in pairs for host in buildfiles.default_hosts_in(old)
            if host not in new and new.strip()
        ]  # fmt: skip
        for f in files:
            canon = canonical_for_match(f, self.cwd, self.env)
            if swapped and buildfiles.installs_from(canon):
                self.hits.append(Hit("cmd.untrusted_install",
                                     f"sed replaces the registry {swapped[0]} in {f}", inv.span,
                                     inv.render()))  # fmt: skip
            self._later_code(f, canon, text, inv, ctx)

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
            host = words[i].text.rsplit("@", 1)[-1].strip("[]").lower()
            here = host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.startswith("127.")  # noqa: S104 - a name compared, nothing bound
            label = "ssh localhost" if here else "ssh remote"
            self.nested(code, ctx._replace(upstream=()), _cover(rest), label)

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

    def _makefile_from_data(self, inv: Invocation, ctx: Ctx) -> None:
        """``make -f -`` / ``-f /dev/stdin`` / ``-f <(…)``: the makefile's recipes are code."""
        words = inv.words
        for k, w in enumerate(words[1:], start=1):
            target: Word | None = None
            if w.text in ("-f", "--file", "--makefile") and k + 1 < len(words):
                target = words[k + 1]
            elif w.text.startswith(("--file=", "--makefile=")):
                target = Word(w.text.split("=", 1)[1], w.literal, w.span, w.subs, w.procsub)
            elif w.text in ("-f", "--file", "--makefile") and inv.stdin_text is not None:
                target = Word("-", True, w.span)  # `make -f - <<EOF`: the parser drops the `-`
            if target is None:
                continue
            if target.text in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
                inv.exec_data = (*inv.exec_data, *inv.upstream)
                if inv.stdin_text:  # a here-string or here-document: its recipes are read
                    recipes = RECIPE.findall(inv.stdin_text)
                    code = "\n".join((a or b).strip().lstrip("@+-") for a, b in recipes)
                    prefix = _RECIPE_PREFIX.search(inv.stdin_text)
                    if prefix:  # .RECIPEPREFIX = >: recipe lines start with that character
                        mark = prefix.group(1)
                        code += "\n" + "\n".join(
                            line[1:].strip().lstrip("@+-")
                            for line in inv.stdin_text.splitlines()
                            if line.startswith(mark) and not line.startswith(".RECIPEPREFIX")
                        )
                    if code.strip():
                        self.nested(code, ctx._replace(upstream=()), inv.span, "make recipe")
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
        direct, unread = self._xargs_sources(inv, opts)
        for i in direct:
            f = self.invs[i]
            if f.name in ("echo", "printf"):
                texts = [w for w in f.words[1:] if not (w.text.startswith("-") and w.literal)]
                if f.name == "printf" and texts:
                    texts = texts[1:] if "%" in texts[0].text else texts
                items += [Word(w.text, w.literal, w.span) for w in texts]
            elif f.name == "pwd":
                items.append(Word(".", True, f.span))
            elif f.name == "ls" and not any(a.startswith("-") and "d" in a for a in f.args):
                listed = [w for w in f.words[1:] if not w.text.startswith("-")]
                if replace or not listed:
                    # the names in the listed folder; `ls DIR` prints names relative to DIR,
                    # which xargs would read against the working folder: not followed
                    items.append(Word("*", True, f.span))
            elif f.name == "ls" and any(a.startswith("-") and "d" in a for a in f.args):
                items += [Word(w.text, w.literal, w.span) for w in f.words[1:]
                          if not w.text.startswith("-")]  # fmt: skip
            elif f.name == "find":
                items += _find_prints(f)
            elif f.name == "cat" and f.stdin_text is not None and len(f.words) == 1:
                items += [Word(t, "$" not in t, f.span) for t in f.stdin_text.split()]
            elif (
                f.name in DOWNLOADERS
                and program_name(runs[0].text) in RM_NAMES
                and any(
                    w.text.startswith("-") and not w.text.startswith("--") and "r" in w.text.lower()
                    for w in runs[1:]
                )
            ):
                # curl URL | xargs rm -rf: the server names what is deleted, / or ~ included
                message = "xargs deletes what the network names (any path)"
                self.hits.append(
                    Hit("cmd.destructive.rm_root", message, inv.span, f.render() + " | xargs")
                )
                unread = False
            else:
                unread = True
        if not items and runs_stdin_code(runs, replace_str) and (direct or unread):
            # `… | xargs -0 sh -c`: each item becomes the shell's code (`sh -c ITEM`)
            inv.exec_data = (*inv.exec_data, *direct)
            if unread and not direct:
                self.hits.append(
                    Hit(
                        "cmd.opaque_command",
                        "xargs runs the lines of a file as shell code",
                        inv.span,
                        inv.render(),
                    )
                )
        if not items and unread and recursive_delete(runs):
            # `cat list | xargs rm -rf`, `python -c 'print(…)' | xargs rm -rf`: the targets are
            # not on the line; code that names the home folder is read as naming it
            home = any(names_home(self.invs[i]) for i in direct)
            items = [Word("~", True, inv.span) if home else Word("$XARGS_ITEMS", False, inv.span)]
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

    def _xargs_sources(self, inv: Invocation, opts: list[Word]) -> tuple[list[int], bool]:
        """The invocations whose output xargs reads, and whether it also reads a file.

        The stage right before xargs (`find . | grep -v x | xargs rm`: grep's output, not
        find's), a process substitution given to ``-a`` or to ``<``, a file named there.
        """
        up = [i for i in inv.upstream if 0 <= i < len(self.invs)]
        direct = [i for i in up if not any(i in self.invs[j].upstream for j in up)]
        unread = False
        files: list[Word] = [r.target for r in inv.redirects if r.op == "<" and r.fd in ("", "0")]
        for k, w in enumerate(opts):
            if w.text in ("-a", "--arg-file") and k + 1 < len(opts):
                files.append(opts[k + 1])
            elif w.text.startswith("--arg-file=") or (w.text.startswith("-a") and len(w.text) > 2):
                files.append(w)
        for f in files:
            if f.procsub or f.subs:
                subs = [i for i in f.subs if 0 <= i < len(self.invs)]
                direct += [i for i in subs if not any(i in self.invs[j].upstream for j in subs)]
            elif f.text != "/dev/null":
                unread = True
        return direct, unread

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
        if inv.name == "crontab":
            code = self._crontab_text(inv)
            if code:
                code = buildfiles.cron_commands(code, user_field=False)
        elif inv.name == "git":
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
