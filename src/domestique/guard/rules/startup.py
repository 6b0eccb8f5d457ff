"""Lines for a shell start-up file that only configure the shell (issue 17, everyday stops).

``echo 'export EDITOR=nvim' >> ~/.zshrc``, ``echo 'alias gs="git status -sb"' >> ~/.bash_aliases``
and ``echo 'export PATH="$HOME/.cargo/bin:$PATH"' >> ~/.bashrc`` are the set-up steps of every
tool's install guide. Such text still runs at every shell start, so it is persistence unless
every line is one of a few inert shapes, each with a literal value and nothing it runs:

- an assignment or ``export`` of a plain value to a variable that is not read as code, as a
  loader or interpreter switch, as an agent's or the guard's control, as history or as a tool's
  trust setting (the names below);
- a ``PATH`` made of ``$PATH`` and absolute or home folders (no temp folder, no relative or
  empty entry, which would put the current folder first);
- ``EDITOR``/``VISUAL``/``PAGER``-like variables set to a bare program name;
- an ``alias`` whose body is one plain command (no pipe, separator, redirect or substitution)
  of a program that is not a shell, interpreter or downloader, and that does not shadow a
  security-relevant command with another program;
- ``set -o vi``-style option lines, comments and blank lines.

Anything else (``source``, ``eval "$(…)"``, functions, conditionals, a background job) keeps the
persistence ask. The text is judged as shell code by the unfold as well, whatever this says.
"""

from __future__ import annotations

import re
import shlex

from domestique.guard.model import Invocation, Word
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.parse import CODE_VARIABLES
from domestique.guard.paths import SHELL_STARTUP_FILES, canonical_for_match
from domestique.guard.rules.registry import Context
from domestique.guard.rules.vocab import DOWNLOADERS, TEMP_TOPS, is_control_variable
from domestique.guard.runners import echoed

# Variables a program reads as a loader, interpreter or tool switch, a trust setting, history,
# a prompt (expanded at every prompt) or a cloud or agent setting: never inert.
_ACTIVE_NAME = re.compile(
    r"^(?:LD_|DYLD_|BASH_ENV$|ENV$|PROMPT_COMMAND$|PS[0-4]$|HIST|IFS$|CDPATH$|TMOUT$|MAIL|"
    r"PYTHON|NODE_|PERL|RUBY|JAVA_TOOL_OPTIONS$|_JAVA_OPTIONS$|JDK_JAVA_OPTIONS$|GIT_|SSH_|"
    r"SSL_|CURL_|REQUESTS_|GO(?:PROXY|FLAGS|INSECURE|NOSUM|SUMDB|PRIVATE|NOPROXY)|PIP_|UV_|"
    r"NPM_|npm_|YARN_|BUN_|CARGO_REGISTR|BUNDLE_|GEM_|COMPOSER_|AWS_|AZURE_|GOOGLE_|GCLOUD_|"
    r"CLOUDSDK_|KUBECONFIG$|DOCKER_|CONTAINER_HOST$|VAULT_|ANTHROPIC|OPENAI|GEMINI|CLAUDE|"
    r"CODEX|COPILOT|CURSOR|DOMESTIQUE|ZDOTDIR$|XDG_CONFIG_HOME$|HOME$|SHELL$|USER$|LOGNAME$|"
    r"SUDO_|LESS|MANPATH$|FPATH$|INFOPATH$)"
)
# Code variables whose usual value is just a program: EDITOR=nvim, PAGER=less.
_PROGRAM_VARIABLES = frozenset(
    {"EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_EDITOR", "GIT_PAGER", "SYSTEMD_PAGER",
     "FCEDIT", "SVN_EDITOR", "PSQL_PAGER", "BROWSER"}
)  # fmt: skip
_PROGRAM_VALUE = re.compile(r"^[\w./+-]+(?: +--?[\w-]+(?:=[\w.-]+)?)*$")
_PLAIN_VALUE = re.compile(r"^[^$`\\;&|<>(){}\n]*$")
_ASSIGN = re.compile(r"^(?:export\s+|declare\s+-x\s+|typeset\s+-x\s+)?([A-Za-z_]\w*)=(.*)$")
_ALIAS = re.compile(r"^alias\s+([\w.+-]+)=(.+)$")
_OPTION_LINE = re.compile(
    r"^(?:set\s+[-+]o\s+(?:vi|emacs|noclobber|pipefail|ignoreeof)|"
    r"shopt\s+-[su]\s+(?:autocd|cdspell|checkwinsize|globstar|nocaseglob|dotglob|extglob|"
    r"direxpand|dirspell)|setopt\s+(?:auto_cd|autocd|correct|extended_glob|no_beep|nobeep|"
    r"interactive_comments|auto_pushd|pushd_ignore_dups)|bindkey\s+-[ev]|umask\s+0?[0-7]{3})$"
)
# Commands an alias must not silently replace with another program.
_SHADOWED = frozenset(
    {"sudo", "su", "doas", "ssh", "scp", "sftp", "git", "gh", "ls", "cd", "cat", "rm", "cp", "mv",
     "curl", "wget", "gpg", "passwd", "docker", "kubectl", "aws", "gcloud", "az", "npm", "npx",
     "pip", "pip3", "python", "python3", "node", "make", "claude", "codex", "gemini", "aider",
     "domestique", "which", "type", "command", "env", "ps", "kill", "grep", "find", "chmod",
     "chown", "bash", "sh", "zsh", "vi", "vim", "nano", "code"}
)  # fmt: skip
_RUNNERS = frozenset(
    {"eval", "exec", "source", ".", "env", "xargs", "nohup", "setsid", "sudo", "doas", "su",
     "command", "builtin", "nc", "ncat", "socat", "telnet", "crontab", "at"}
)  # fmt: skip


def inert_shell_config(text: str) -> bool:
    """Is every line of ``text`` (for a shell start-up file) one of the inert shapes?"""
    lines = [ln.strip() for ln in text.splitlines()]
    if not any(ln and not ln.startswith("#") for ln in lines):
        return False  # nothing but comments: nothing to call inert (and nothing to gain)
    known: set[str] = set()  # names set inertly above: ``$JAVA_HOME/bin`` in a later PATH
    return all(not ln or ln.startswith("#") or _inert_line(ln, known) for ln in lines)


def _unquote(value: str) -> str | None:
    """The value as the shell reads it, when it is one word; None otherwise."""
    try:
        words = shlex.split(value, comments=False, posix=True)
    except ValueError:
        return None
    if len(words) == 1:
        return words[0]
    return "" if not words and value in ('""', "''") else None


def _inert_line(line: str, known: set[str]) -> bool:
    if _OPTION_LINE.match(line):
        return True
    m = _ASSIGN.match(line)
    if m:
        if _inert_assignment(m.group(1), m.group(2), known):
            known.add(m.group(1))
            return True
        return False
    m = _ALIAS.match(line)
    if m:
        return _inert_alias(m.group(1), m.group(2))
    return False


def _inert_assignment(name: str, raw: str, known: set[str]) -> bool:
    value = _unquote(raw)
    if value is None or (raw.startswith("'") and "$" in raw):
        return False
    if name == "PATH":
        return _inert_path(value, known)
    if name in _PROGRAM_VARIABLES:
        first = value.split(" ", 1)[0].rsplit("/", 1)[-1]
        return (
            bool(_PROGRAM_VALUE.match(value))
            and first not in SHELLS
            and (first not in INTERPRETERS)
        )
    if name in CODE_VARIABLES or is_control_variable(name) or _ACTIVE_NAME.match(name):
        return False
    if "$" in value:
        return bool(_HOME_PART.match(value)) or _known_part(value, known)
    return bool(_PLAIN_VALUE.match(value))


_HOME_PART = re.compile(r"^(?:\$HOME|\$\{HOME\}|~)(?:/[\w.@+-]+)*/?$")
_ABSOLUTE_PART = re.compile(r"^(?:/[\w.@+-]+)+/?$")
_VARIABLE_PART = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?(?:/[\w.@+-]+)*/?$")


def _known_part(part: str, known: set[str]) -> bool:
    """``$JAVA_HOME/bin`` where ``JAVA_HOME`` was given a plain value above."""
    m = _VARIABLE_PART.match(part)
    return m is not None and m.group(1) in known


def _inert_path(value: str, known: set[str]) -> bool:
    parts = value.split(":")
    if not any(p in ("$PATH", "${PATH}") for p in parts):
        return False  # PATH replaced, not extended: every later command name changes meaning
    for p in parts:
        if p in ("$PATH", "${PATH}"):
            continue
        if not (_HOME_PART.match(p) or _ABSOLUTE_PART.match(p) or _known_part(p, known)):
            return False  # empty, relative or computed: the current folder or unknown first
        if _ABSOLUTE_PART.match(p) and (
            p.rstrip("/") in TEMP_TOPS or p.startswith(tuple(t + "/" for t in TEMP_TOPS))
        ):
            return False
    return True


def _inert_alias(name: str, raw: str) -> bool:
    body = _unquote(raw)
    if body is None or not _PLAIN_VALUE.match(body) or "$" in body:
        return False
    try:
        words = shlex.split(body)
    except ValueError:
        return False
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if (
        program in SHELLS
        or program in INTERPRETERS
        or program in DOWNLOADERS
        or program in _RUNNERS
        or "/" in words[0]
    ):
        return False
    if name in _SHADOWED:  # ls='ls --color=auto': the same program, plain switches only
        return program == name and all(_PLAIN_SWITCH.match(w) for w in words[1:])
    return True


_PLAIN_SWITCH = re.compile(r"^--?[\w-]+(?:=[\w.,-]+)?$")


def configures_shell(inv: Invocation, target: Word, ctx: Context) -> bool:
    """``echo 'export EDITOR=nvim' >> ~/.zshrc``: known text appended to a shell start-up file,
    every line of it inert shell configuration (:mod:`.startup`). Overwriting the file, unknown
    text, or any line that runs something keeps the persistence ask."""
    canon = canonical_for_match(target.text, ctx.cwd, ctx.env)
    if not target.literal or not SHELL_STARTUP_FILES.search(canon):
        return False
    texts: list[str | None]
    if inv.name == "tee":
        if not ({"-a", "--append"} & set(inv.args)) or inv.redirects:
            return False
        texts = [inv.stdin_text] if inv.stdin_text is not None else []
        texts += [echoed(ctx.invs[i]) for i in inv.upstream]
    elif any(r.target is target and r.op == ">>" for r in inv.redirects):
        texts = [echoed(inv) if inv.name in ("echo", "printf") else None]
        if inv.name == "cat" and not inv.args:
            texts = [inv.stdin_text]
    else:
        return False
    return bool(texts) and all(t is not None and inert_shell_config(t) for t in texts)
