"""Wrappers (``sudo``, ``env``, ``timeout``, ``xargs`` …) as data, and the one step that strips one.

A wrapper runs another command: what the guard judges is that command. :data:`SPECS` says, per
wrapper, which options take a value, which option hands it shell code (``su -c``, ``flock -c``)
and how many operands stand before the command (``timeout DURATION``, ``chroot DIR``); the few
whose reading is not a table (``env``, the ``sudo`` family, ``xargs``, ``parallel``, ``watch``,
``tmux``/``screen``, ``script``, ``su``, ``command``) have a small function each.

:func:`unwrap` strips one wrapper and never judges: a wrapper left with nothing to run (``su``,
``sudo -i``, ``chroot /srv``) stays the invocation, and the rules judge it there
(``domestique.guard.rules.escapes``); the words each wrapper was given are kept on the
invocation (``Invocation.wrapped``) for the rules that need them (``xargs -o``, timers).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from domestique.guard.model import Invocation, Word, program_name
from domestique.guard.names import ENV_CLEARED, INTERPRETERS, SHELLS

# What one step gives: the words the wrapper runs, or the shell code it runs (``su -c CODE``);
# None when it runs nothing the guard can open (the wrapper itself is then the invocation).
Step = tuple[list[Word], str | None]
# xargs appends what its feeders print: (invocation, xargs's options, the command) -> command
Feed = Callable[[Invocation, list[Word], list[Word]], list[Word]]
Special = Callable[[str, list[Word], Invocation, Feed], "Step | None"]


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """How one wrapper reads its words."""

    opts_with_arg: frozenset[str] = frozenset()  # options whose value is the next word
    attached: str = ""  # short options that may carry their value attached (``-I{}``)
    code_options: tuple[str, ...] = ()  # ``-c CODE``: the next word is shell code
    operands: int = 0  # words between the options and the command (``timeout 5 cmd``)
    options: bool = True  # False: every word after the name is the command (``busybox``)
    special: Special | None = None  # a reading that is not a table


_NUMBER_OPTION = re.compile(r"-\d+(?:\.\d+)?[smhd]?")


def skip_options(words: list[Word], with_arg: frozenset[str], attached: str = "") -> list[Word]:
    """The words after the leading options (and their values)."""
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


def quote_text(t: str) -> str:
    """``t`` as one shell word (quoted unless plain)."""
    if t and all(c.isalnum() or c in "-_./=:,@%+" for c in t):
        return t
    return "'" + t.replace("'", "'\\''") + "'"


_TMUX_STARTS = frozenset(
    {"new", "new-session", "new-window", "neww", "send-keys", "send", "split-window", "splitw",
     "run-shell", "run"}
)  # fmt: skip
_TMUX_WITH_ARG = frozenset({"-s", "-n", "-c", "-t", "-x", "-y", "-e", "-F", "-f", "-l"})
_SCREEN_WITH_ARG = frozenset({"-S", "-c", "-L", "-T", "-t", "-p", "-X", "-logfile"})


def tail_after_session_opts(name: str, rest: list[Word]) -> str | None:
    """tmux new -d 'cmd' / screen -dm cmd: the command they start, if any."""
    words = [w.text for w in rest]
    if name == "tmux":
        if not words or words[0] not in _TMUX_STARTS:
            return None
        args, with_arg = words[1:], _TMUX_WITH_ARG
    else:
        args, with_arg = words, _SCREEN_WITH_ARG
    i = 0
    while i < len(args):
        if args[i] in with_arg:
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            break
    tail = args[i:]
    if not tail:
        return None
    return " ".join(tail) if name == "tmux" else " ".join(quote_text(t) for t in tail)


# ------------------------------------------------------------------ the odd ones


def _command(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    if not rest or rest[0].text in ("-v", "-V"):
        return None  # a lookup, runs nothing
    return [w for w in rest if w.text not in ("-p", "--")], None


def _su(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    for i, w in enumerate(rest):
        bundle = w.text.startswith("-") and not w.text.startswith("--") and w.text.endswith("c")
        if (w.text == "--command" or bundle) and i + 1 < len(rest):  # -c, -lc, -mc …
            # code that is not a literal cannot be read: judged as `su` itself, not dropped
            return ([], rest[i + 1].text) if rest[i + 1].literal else None
        if w.text.startswith("--command="):
            return [], w.text.split("=", 1)[1]
    return None  # an interactive shell: judged as the invocation `su`


def script_code(rest: list[Word]) -> str | None:
    """The command ``script -c CODE`` runs (None: it starts an interactive shell)."""
    for i, w in enumerate(rest):
        combined = w.text.startswith("-") and not w.text.startswith("--")
        if (w.text == "--command" or (combined and w.text.endswith("c"))) and i + 1 < len(rest):
            return rest[i + 1].text
    return None


def _script(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    code = script_code(rest)
    return None if code is None else ([], code)


def _session(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    code = tail_after_session_opts(name, rest)
    return None if code is None else ([], code)


def _env(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    """``env [-i] [-u NAME] [NAME=value]… cmd``: the assignments go to the command's env."""
    with_arg = SPECS["env"].opts_with_arg
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
            i += 2 if opt in with_arg else 1
            continue
        if "=" in opt and not opt.startswith("="):
            inv.env[opt.split("=", 1)[0]] = opt.split("=", 1)[1]
            i += 1
            continue
        break
    return rest[i:], None


def root_shell_options(name: str, rest: list[Word]) -> tuple[list[Word], bool]:
    """``sudo``/``doas``/``run0``/``pkexec``: the words after the options, and whether an option
    asks for a shell (``-s``, ``-i``, ``--login``)."""
    opts = SPECS[name].opts_with_arg
    interactive = False
    i = 0
    while i < len(rest):
        opt = rest[i].text
        if opt == "--":
            i += 1
            break
        if not opt.startswith("-") or opt == "-":
            break
        if opt.startswith("--"):
            interactive = interactive or opt in ("--shell", "--login")
            i += 2 if opt in opts else 1
            continue
        # A short bundle (-Eu, -nu, -iu): letters until one that takes a value; that value is
        # the rest of the bundle, or the next word when the letter ends the bundle.
        takes_next = False
        for at, letter in enumerate(opt[1:], start=1):
            if letter in ("s", "i"):
                interactive = True
            if letter in opts or f"-{letter}" in opts:
                takes_next = at == len(opt) - 1
                break
        i += 2 if takes_next else 1
    return rest[i:], interactive


def _root(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    command, interactive = root_shell_options(name, rest)
    if not command:
        return None  # `sudo -i` alone: judged as the invocation
    if interactive:  # `sudo -s cmd` runs cmd with the shell
        return [], " ".join(quote_text(w.text) for w in command)
    return command, None


def xargs_split(rest: list[Word]) -> tuple[list[Word], list[Word]]:
    """xargs's own options, and the command it runs."""
    runs = skip_options(rest, SPECS["xargs"].opts_with_arg, SPECS["xargs"].attached)
    return rest[: len(rest) - len(runs)], runs


def _xargs(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    opts, runs = xargs_split(rest)
    return feed(inv, opts, runs), None


_ARG_GROUPS = (":::", "::::", ":::+")


def _parallel(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    rest = skip_options(rest, SPECS["parallel"].opts_with_arg)
    cut = next((i for i, w in enumerate(rest) if w.text in _ARG_GROUPS), None)
    cmd = rest[:cut] if cut is not None else rest
    if len(cmd) == 1:
        return [], cmd[0].text
    if cut is not None:  # the first argument group is appended to the command
        group = []
        for w in rest[cut + 1 :]:
            if w.text in _ARG_GROUPS:
                break
            group.append(w)
        cmd = [*cmd, *group]
    return cmd, None


def _watch(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    exec_mode = any(w.text in ("-x", "--exec") for w in rest)
    rest = skip_options(rest, SPECS["watch"].opts_with_arg)
    if exec_mode:
        return rest, None
    if len(rest) == 1:
        return [], rest[0].text  # watch runs its text with sh -c
    if rest and all(w.literal for w in rest):
        return [], " ".join(w.text for w in rest)
    return rest, None


def _exec(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    return None if not rest else (skip_options(rest, SPECS["exec"].opts_with_arg), None)


# Project runners: `uv run CMD`, `poetry run CMD`, `npx node …` run CMD in the project's
# environment. Opened only when CMD is a shell or an interpreter (whose code the guard reads) and
# nothing is fetched for the run (`uv run --with git+URL …` stays for the install rules).
_RUNNER_VERB = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run",
                "rye": "run", "conda": "run", "mamba": "run", "micromamba": "run", "npx": "",
                "bunx": "", "pnpx": ""}  # fmt: skip
_RUNNER_OPTS = frozenset(
    {"-p", "--python", "--project", "--directory", "--env-file", "--extra", "--group",
     "--package", "-n", "--name", "--prefix", "-e", "--env", "--cwd", "--no-env-file",
     "--no-project", "--frozen", "--locked", "--isolated", "--quiet", "-q", "-y", "--yes",
     "--no-install", "--offline", "--no-sync", "--all-extras", "--no-capture-output",
     "--live-stream", "-v", "--verbose"}
)  # fmt: skip
_RUNNER_WITH_ARG = frozenset(
    {"-p", "--python", "--project", "--directory", "--env-file", "--extra", "--group",
     "--package", "-n", "--name", "--prefix", "-e", "--env", "--cwd"}
)  # fmt: skip


def _project_run(name: str, rest: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    verb = _RUNNER_VERB[name]
    if verb:
        if not rest or rest[0].text != verb:
            return None
        rest = rest[1:]
    i = 0
    while i < len(rest) and rest[i].text.startswith("-"):
        opt = rest[i].text.split("=", 1)[0]
        if opt not in _RUNNER_OPTS:
            return None  # --with, --from, a package spec: judged as the runner itself
        i += 2 if opt in _RUNNER_WITH_ARG and "=" not in rest[i].text else 1
    runs = rest[i:]
    if len(runs) < 2 or not runs[0].literal:
        return None  # `uv run /bin/sh` alone: a shell escape, judged as the runner itself
    prog = program_name(runs[0].text)
    if prog in SHELLS or prog in INTERPRETERS or (not verb and prog in _NPM_TUNNELS):
        return (runs, None)
    return None


# npm packages of tunnel programs (`npx localtunnel --port 22`, `npx ngrok http 3000`): the
# program the package runs is judged, as when it is installed.
_NPM_TUNNELS = frozenset({"localtunnel", "ngrok", "cloudflared", "untun", "tunnelmole"})


def _spec(
    *opts: str,
    attached: str = "",
    code_options: tuple[str, ...] = (),
    operands: int = 0,
    options: bool = True,
    special: Special | None = None,
) -> WrapperSpec:
    return WrapperSpec(frozenset(opts), attached, code_options, operands, options, special)


_PARALLEL_OPTS = (
    "-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "-d", "--delimiter", "-n",
    "--max-args", "-L", "-I", "--tmpdir", "--results", "--colsep", "-C", "--timeout", "--delay",
    "--retries", "--tag-string",
)  # fmt: skip
_ROOT_SHORT = tuple("ugChpDrtUTR")  # sudo's short options with a value (letters: -u, -uroot)

SPECS: dict[str, WrapperSpec] = {
    "sudo": _spec(*_ROOT_SHORT, "--user", "--group", "--host", "--prompt", "--chdir",
                  special=_root),
    "doas": _spec("-u", "-C", special=_root),
    "run0": _spec("-u", "--user", "-D", special=_root),
    "pkexec": _spec("--user", special=_root),
    "env": _spec("-u", "--unset", "-C", "--chdir", "-S", "--split-string", special=_env),
    "nice": _spec("-n", "--adjustment"),
    "ionice": _spec("-c", "-n", "-p", "-t"),
    "timeout": _spec("-s", "--signal", "-k", "--kill-after", operands=1),  # the duration
    "stdbuf": _spec("-i", "-o", "-e", "--input", "--output", "--error", attached="ioe"),
    "setsid": _spec(),
    "nohup": _spec(),
    "time": _spec("-f", "--format", "-o", "--output"),
    "command": _spec(special=_command),
    "builtin": _spec(),
    "exec": _spec("-a", special=_exec),
    # GNU -i, -l, -e (and --replace, --max-lines, --eof) take their value attached, if any
    "xargs": _spec("-I", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "--arg-file", "--delimiter",
                   "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
                   attached="IiLlnPdEeas", special=_xargs),
    "watch": _spec("-n", "--interval", "-d", "-q", "--differences", special=_watch),
    "flock": _spec("-w", "--timeout", "-E", "--conflict-exit-code",
                   code_options=("-c", "--command"), operands=1),  # the lock file
    "chroot": _spec("--userspec", "--groups", operands=1),  # the new root
    "taskset": _spec(operands=1),  # the CPU mask
    "chrt": _spec(operands=1),  # the priority
    "strace": _spec("-o", "-e", "-p", "-s", "-u", "-E", "-P", "-O", "-a", "-b", "-I", "-S", "-X"),
    "ltrace": _spec("-o", "-e", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-x"),
    "unbuffer": _spec(),
    "torsocks": _spec(),
    "torify": _spec(),
    "proxychains": _spec("-f"),
    "proxychains4": _spec("-f"),
    "catchsegv": _spec(),
    "valgrind": _spec(),
    "firejail": _spec(),
    "unshare": _spec(),
    "nsenter": _spec("-t", "--target"),
    "runuser": _spec("-u", "-g", "-G", "--user", "--group", code_options=("-c", "--command")),
    "systemd-run": _spec("-p", "--property", "-u", "--unit", "-E", "--setenv", "--description",
                         "-M", "--machine", "--uid", "--gid", "--working-directory", "--slice",
                         "--on-calendar", "--on-active", "--on-boot", "--on-startup",
                         "--on-unit-active", "--on-unit-inactive", "--timer-property"),
    "caffeinate": _spec("-t", "-w"),
    "chronic": _spec(),
    "ts": _spec(),
    "rlwrap": _spec(),
    "xvfb-run": _spec("-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args"),
    "dbus-launch": _spec(),
    "sem": _spec(*_PARALLEL_OPTS, special=_parallel),
    "parallel": _spec(*_PARALLEL_OPTS, special=_parallel),
    "busybox": _spec(options=False),
    "script": _spec(special=_script),
    "su": _spec(special=_su),
    "tmux": _spec(special=_session),
    "screen": _spec(special=_session),
    **{runner: _spec(special=_project_run) for runner in _RUNNER_VERB},
}  # fmt: skip
WRAPPERS = frozenset(SPECS)
# Runners that are tools of their own as well: left as the invocation, the rules judge them.
PROJECT_RUNNERS = frozenset(_RUNNER_VERB)


def unwrap(name: str, words: list[Word], inv: Invocation, feed: Feed) -> Step | None:
    """Strip one wrapper from ``words``: the words it runs, or the shell code it runs."""
    spec = SPECS[name]
    rest = words[1:]
    if spec.special is not None:
        return spec.special(name, rest, inv, feed)
    if not spec.options:
        return rest, None
    for i, w in enumerate(rest):
        if w.text in spec.code_options and i + 1 < len(rest):
            return [], rest[i + 1].text
    rest = skip_options(rest, spec.opts_with_arg, spec.attached)
    return rest[spec.operands :], None
