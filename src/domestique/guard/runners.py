"""Code runners: interpreter one-liners, code read from stdin, script files, editors' escapes."""

from __future__ import annotations

import os
import re

from domestique.guard import interp, jsast, pwsh, pyast
from domestique.guard.env import MAX_SCRIPT_BYTES
from domestique.guard.model import Hit, Invocation, Span, Word, program_name
from domestique.guard.names import CODE_FLAGS, INTERPRETERS, SHELLS, SYNTAX_CHECK_FLAGS
from domestique.guard.parse import Ctx, Walker
from domestique.guard.words import (
    decode_ansi_c,
)
from domestique.guard.wrappers import quote_text

MAX_SCRIPTS = 16


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
    facts.runs_files += [p for p in py.runs_files if p not in facts.runs_files]
    facts.written += [w for w in py.written if w not in facts.written]
    if py.runs_fetched:  # os.system(urlopen(U).read()): what is fetched is run
        facts.downloads = facts.executes = True


def echoed(inv: Invocation) -> str | None:
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
    values = args[1:]
    specs = len(_PRINTF_SPEC.findall(fmt))
    if not specs:
        return fmt
    # %s prints its argument as it is, %b with its backslash escapes decoded (\x72\x6d); a
    # missing argument prints nothing, and the format is used again while arguments remain
    # (printf '%s ' rm -rf ~ prints "rm -rf ~ "), as printf does
    rest = iter(values)

    def fill(spec: re.Match[str]) -> str:
        value = next(rest, "")
        return decode_ansi_c(value) if spec.group() == "%b" else value

    rounds = max(1, -(-len(values) // specs))
    return "".join(_PRINTF_SPEC.sub(fill, fmt) for _ in range(rounds))


_PRINTF_SPEC = re.compile(r"%[sb]")


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


def path_key(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    return p


# Code that runs what it reads on stdin: python -c 'exec(sys.stdin.read())', perl -e 'eval <STDIN>'.
_RUNS_STDIN = re.compile(
    r"\b(?:exec|eval)\s*\(?\s*(?:input\s*\(|sys\.stdin|<STDIN>|STDIN\.read|\$stdin\.read|"
    r"fs\.readFileSync\(\s*(?:0|['\"]/dev/stdin['\"]))"
)


def _is_shell(code: str) -> bool:
    first = code.strip().split(" ", 1)[0] if code.strip() else ""
    return program_name(first) in SHELLS


class Runners(Walker):
    """The code runners the unfold stage calls (one instance per judgement, as an Unfolder)."""

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
            texts = [echoed(f) for f in feeders]
            if feeders and all(t is not None for t in texts):
                code = "\n".join(t for t in texts if t is not None)
                if lang == "shell":
                    self.nested(code, ctx._replace(upstream=()), inv.span, via)
                else:
                    self._analyze(code, lang, inv, ctx)
                return True
            self.run_cat_files(feeders, inv, ctx, lang)
            inv.exec_data = (*inv.exec_data, *inv.upstream)
            return True
        return False

    def run_cat_files(
        self, feeders: list[Invocation], inv: Invocation, ctx: Ctx, lang: str = "shell"
    ) -> bool:
        """Feeders that are all ``cat FILE…`` (or ``$(< FILE)``) of literal names: the files'
        text is the code ``inv`` runs, read and judged like a script (``bash FILE``). False when
        some feeder is no such cat (a file named by a variable is judged as generated text, an
        opaque command, by the rules)."""
        cats = [f for f in feeders if f.name == "cat" and len(f.words) > 1]
        if not feeders or len(cats) != len(feeders):
            return False
        if not all(w.literal for c in cats for w in c.words):
            return False
        for c in cats:
            for w in c.words[1:]:
                if not w.text.startswith("-"):
                    self._run_file(w.text, inv, ctx, explicit=True, lang=lang)
        return True

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
        modules: list[str] = []  # perl -MLWP::Simple, ruby -rnet/http: part of what the code does
        i = 0
        while i < len(args):
            w = args[i]
            t = w.text
            if (lang, t[:2]) in (("perl", "-M"), ("perl", "-m"), ("ruby", "-r")):
                if len(t) > 2 or i + 1 < len(args):
                    modules.append(t[2:] if len(t) > 2 else args[i + 1].text)
                i += 1 if len(t) > 2 else 2
                continue
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
            prelude = "".join(
                f"use {m.split('=', 1)[0]};\n" if lang == "perl" else f"require '{m}'\n"
                for m in modules
            )
            for code in codes:
                if inv.stdin_text is not None and _RUNS_STDIN.search(code.text):
                    self._analyze(inv.stdin_text, lang, inv, ctx)  # exec(input()) <<< CODE
                if code.literal:
                    self._analyze(prelude + code.text, lang, inv, ctx, span=code.span)
                elif code.subs:
                    inv.exec_data = (*inv.exec_data, *code.subs)
                else:
                    self._analyze(code.text, lang, inv, ctx, span=code.span)
            return
        if script is not None and script.text != "-":
            if script.procsub or script.subs:
                inv.exec_data = (*inv.exec_data, *script.subs)
            elif script.literal:
                # a script this line wrote (`printf … > /tmp/t.py && python3 /tmp/t.py`): its
                # text is known and is what runs (a script already on disk is the project's)
                written = self.written.get(path_key(script.text))
                if written is not None:
                    self._analyze(written, lang, inv, ctx)
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
            if (
                (low in _PWSH_COMMAND or low in ("-file", "-f"))
                and i + 1 < len(args)
                and args[i + 1].text in ("-", "/dev/stdin")
            ):
                break  # -Command - / -File /dev/stdin: the code comes on stdin
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
                script = args[i + 1] if low in ("-file", "-f") and i + 1 < len(args) else w
                if script.literal and not script.text.startswith("-"):
                    self._ps1_file = True  # its named dangers are judged, not its other cmdlets
                    try:
                        self._run_file(script.text, inv, ctx, explicit=True, lang="powershell")
                    finally:
                        self._ps1_file = False
                return
            i += 2 if _pwsh_takes_value(low) else 1
        if not self._stdin_code(inv, ctx, "powershell", text_subs):
            self.hits.append(Hit("cmd.interactive_shell", f"{inv.name} starts a shell", inv.span))

    _ps1_file = False  # a .ps1 file is being read (a build script: only named dangers count)

    def _powershell_code(self, code: str, inv: Invocation, ctx: Ctx, span: Span) -> None:
        for argv in pwsh.shell_equivalents(code):
            self.nested(" ".join(quote_text(a) for a in argv), ctx, span, f"{inv.name} code")
        for found, message, target in pwsh.judge_powershell(code):
            if self._ps1_file and found == "cmd.opaque_command":
                continue  # a script's own cmdlets are the project's code, as a .sh file's are
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
        for path in facts.runs_files[:4]:
            # judged as `python3 FILE` is: a file the line downloaded, then run, is linked
            self._synthetic([inv.name, path], where, ctx, via)
        for path, appends in facts.writes:
            # judged like the shell redirect it amounts to (device, history, hooks, start-up)
            self.nested(f": {'>>' if appends else '>'} {quote_text(path)}", ctx, where, via)
        for path, text in facts.written[:4]:
            # and what it writes there, as `printf` of the same text would be judged
            self.nested(
                f"printf %s {quote_text(text[:4096])} >> {quote_text(path)}", ctx, where, via
            )
        if facts.network:
            inv.code_network = True
        shown = f"{lang}: {code[:160]}"
        if facts.packs_and_sends:
            # the archive leaves with the data sent: a deploy or backup looks the same (ask)
            self.hits.append(
                Hit("cmd.file_transfer", f"{lang} code packs a folder and sends data", where, shown)
            )
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
        if _GUARD_IN_CODE.search(code) and _KILL_IN_CODE.search(code):
            # os.kill over `pgrep domestique`, process.kill(pid) of the guard's processes
            self.hits.append(
                Hit("cmd.guard_tamper", f"{lang} code kills Domestique's processes", where, shown)
            )
        if lang == "awk" and "/inet" in code and _AWK_INET.search(code):
            # gawk's /inet/tcp/0/HOST/PORT special file: a socket; files it reads go out
            inv.code_network = True
            from domestique.guard.paths import CREDENTIAL_FILES

            inv.code_creds = (*inv.code_creds, *(
                t for t in interp.string_literals(code) if CREDENTIAL_FILES.search(t)
            ))  # fmt: skip
        if lang == "awk" and _AWK_RUNS_INPUT.search(code) and inv.upstream:
            # curl … | awk '{system($0)}': each line read is a command run
            inv.exec_data = (*inv.exec_data, *inv.upstream)
        if lang != "awk":
            from domestique.guard.paths import CREDENTIAL_FILES

            for text in interp.string_literals(interp.normalize_code(code)):
                if 3 <= len(text) <= 200 and CREDENTIAL_FILES.search(text):
                    inv.code_creds = (*inv.code_creds, text)
            for path in reads:
                if CREDENTIAL_FILES.search(path) and path not in inv.code_creds:
                    inv.code_creds = (*inv.code_creds, path)

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
        read_file = self.env.read_file
        if read_file is None:
            # No file access (a pure judgement): what the line itself wrote there is still known
            written = self.written.get(path_key(path))
            if written is not None:
                self._run_text(written.encode("utf-8", "surrogatepass"), path, inv, ctx,
                               explicit=explicit, lang=lang)  # fmt: skip
            return
        full = self.env.expand_user(path)
        if self.cwd and not os.path.isabs(full):
            full = os.path.join(self.cwd, full)
        if self.scripts_read >= MAX_SCRIPTS:
            self.hits.append(
                Hit("cmd.script_unread", "too many scripts to read: " + path, inv.span)
            )
            return
        self.scripts_read += 1
        try:
            data = read_file(full)
        except OSError:
            self.hits.append(
                Hit("cmd.script_unread", "the script could not be read: " + path, inv.span)
            )
            return
        if data is None:
            written = self.written.get(path_key(path))
            if written is None:
                return  # no such file: the shell fails the same way
            data = written.encode("utf-8", "surrogatepass")
        self._run_text(data, path, inv, ctx, explicit=explicit, lang=lang)

    def _run_text(
        self, data: bytes, path: str, inv: Invocation, ctx: Ctx, *, explicit: bool, lang: str
    ) -> None:
        """Judge the bytes of a script run as ``path`` (read from disk or written by the line)."""
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


# awk code that runs what it reads: system() of a field or the record, or lines printed into a
# shell (`print | "sh"`, `print $0 | "bash"`)
_AWK_RUNS_INPUT = re.compile(
    r"system\s*\(\s*\$|\|\s*\"\s*(?:/bin/|/usr/bin/)?(?:ba|z|da|k)?sh\s*\""
)
_GUARD_IN_CODE = re.compile(r"(?i)domestiq")
_KILL_IN_CODE = re.compile(
    r"(?i)\bkill(?:all)?\b|\bSIG(?:KILL|TERM|STOP)\b|\.terminate\(|Stop-Process"
)
_AWK_INET = re.compile(r"/inet[46]?/(?:tcp|udp)/\d+/[^/\"]+/\d+")
