"""Rules about the guard's own controls: its variables, its files and processes, programs shadowed
on PATH.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard import supply
from domestique.guard.env import GuardEnv
from domestique.guard.model import Hit, Invocation, Span
from domestique.guard.names import ENV_CLEARED, SHELLS
from domestique.guard.paths import (
    Place,
    canonical_for_match,
    classify,
    default_branch,
)
from domestique.guard.rules.common import shadowed_tool
from domestique.guard.rules.registry import Context, line_rule, rule
from domestique.guard.rules.vocab import AGENT_PROGRAMS, TEMP_TOPS, is_control_variable

_PROXY_VARIABLES = frozenset(
    {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
     "all_proxy", "no_proxy"}
)  # fmt: skip


_TLS_OFF_VARIABLES: dict[str, tuple[str, ...]] = {
    "NODE_TLS_REJECT_UNAUTHORIZED": ("0",),
    "PYTHONHTTPSVERIFY": ("0",),
    "GIT_SSL_NO_VERIFY": ("1", "true", "yes"),
    "CURL_CA_BUNDLE": ("",),
    "REQUESTS_CA_BUNDLE": ("",),
    "NODE_NO_VERIFY": ("1",),
    "GONOSUMCHECK": ("1",),
    "GOINSECURE": ("*",),
    "GONOSUMDB": ("*",),
    "GOSUMDB": ("off",),
    "GOFLAGS": ("-insecure",),
    "npm_config_strict_ssl": ("false",),
    "NPM_CONFIG_STRICT_SSL": ("false",),
    "YARN_STRICT_SSL": ("false",),
}


def assignment_hit(
    name: str,
    value: str,
    span: Span,
    judged: str,
    env: GuardEnv,
    *,
    exported: bool = True,
    program: str = "",
) -> Iterator[Hit]:
    """Hits for ``name=value``: exported (or a statement) unless ``exported`` is False, in which
    case it is set for one run of ``program`` only (``HTTPS_PROXY=… curl`` routes that curl, not
    an agent's model traffic: only agents and shells given such a variable count)."""
    if value.strip("'\"").lstrip().startswith("() {") or name.startswith("BASH_FUNC_"):
        # X='() { :;}; cmd' (Shellshock: an unpatched bash runs cmd when it starts) and
        # BASH_FUNC_ls%%='() { …; }' (a function every bash started below defines, shadowing ls)
        yield Hit("cmd.shell_escape", f"{name} carries a shell function definition into the "
                  "next bash", span, judged)  # fmt: skip
    elif name == "HISTFILE" and value in ("", "/dev/null"):
        yield Hit("cmd.history_wipe", "history file set to nothing", span, judged)
    elif name in ("HISTSIZE", "HISTFILESIZE", "SAVEHIST") and value.strip("'\"") == "0":
        yield Hit("cmd.history_wipe", f"{name}=0 stops history", span, judged)
    elif name == "HISTCONTROL" and any(v in value for v in ("ignorespace", "ignoreboth")):
        yield Hit("cmd.history_wipe", "HISTCONTROL hides commands from history", span, judged)
    elif (
        is_control_variable(name)
        and not _loopback_only(name, value)
        and (
            exported
            or (name not in _PROXY_VARIABLES and not name.startswith("DOMESTIQUE_"))
            or program in AGENT_PROGRAMS
            or program in SHELLS
            or program == "domestique"
            or (name in _PROXY_VARIABLES and _bypasses_proxy(name, value))
        )
    ):
        yield Hit("cmd.guard_tamper", f"{name} changed: model traffic or the guard's state moves",
                  span, judged)  # fmt: skip
    elif name in _TLS_OFF_VARIABLES and _tls_off_value(name, value):
        yield Hit("cmd.tls_off", f"{name}={value} turns certificate checks off", span, judged)
    elif name in _CA_VARIABLES and _temp_value(value):
        yield Hit("cmd.tls_off", f"{name} trusts certificates from a temporary file ({value[:60]})",
                  span, judged)  # fmt: skip
    elif name in _INDEX_VARIABLES or name.startswith(_INDEX_PREFIXES):
        where = supply.foreign_index_value(name, value)
        if where:
            yield Hit("cmd.untrusted_install", f"{name} sends package installs to {where[:60]}",
                      span, judged)  # fmt: skip
    elif _GIT_CONFIG_KEY.match(name) and _GIT_EXEC_KEY.match(value.strip("'\"")):
        yield Hit("cmd.git.config_exec", f"{name}={value[:40]} sets git configuration that runs "
                  "a program", span, judged)  # fmt: skip
    elif exported and name in _INJECT_VARIABLES and _temp_in(value):
        yield Hit("cmd.temp_exec", f"{name} makes later programs load code from a temporary "
                  f"folder ({value[:60]})", span, judged)  # fmt: skip
    elif name in ("PIP_TRUSTED_HOST", "UV_INSECURE_HOST") and value:
        yield Hit("cmd.tls_off", f"{name} turns certificate checks off for {value[:60]}", span,
                  judged)  # fmt: skip
    elif (
        name in ("LD_PRELOAD", "DYLD_INSERT_LIBRARIES")
        and value
        and (exported or classify(value, None, env) not in (Place.PROJECT, Place.PROJECT_ROOT))
    ):
        yield Hit("cmd.privilege.setuid", f"{name} injects a library into later commands", span,
                  judged)  # fmt: skip


def _bypasses_proxy(name: str, value: str) -> bool:
    """``HTTPS_PROXY=`` / ``env -u HTTPS_PROXY`` / ``NO_PROXY='*'`` for one program: its traffic
    goes around the firewall proxy, whatever the program."""
    v = value.strip("'\"")
    if name.lower() == "no_proxy":
        return "*" in v.split(",") or v == "*"
    return not v


def _loopback_only(name: str, value: str) -> bool:
    """``NO_PROXY=localhost,127.0.0.1``: only this machine skips the proxy (it never used it)."""
    if name.lower() != "no_proxy":
        return False
    hosts = [h.strip() for h in value.strip("'\"").split(",") if h.strip()]
    return bool(hosts) and all(
        h in ("localhost", "::1", "[::1]", ".localhost") or h.startswith("127.") for h in hosts
    )


def _tls_off_value(name: str, value: str) -> bool:
    v = value.strip("'\"")
    if name == "GOFLAGS":
        return "-insecure" in v.split()
    return v in _TLS_OFF_VARIABLES[name]


def _temp_value(value: str) -> bool:
    v = value.strip("'\"")
    return any(v == t or v.startswith(t + "/") for t in TEMP_TOPS) or "://" in v


def _temp_in(value: str) -> bool:
    """Does a variable's value (options, a path list) name a temporary folder?"""
    return any(_temp_value(p) for p in re.split(r"[\s:=,]+", value.strip("'\"")) if p)


# Variables that make every later program of a kind load code from where they point.
_INJECT_VARIABLES = frozenset(
    {"PATH", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONUSERBASE", "NODE_OPTIONS", "NODE_PATH",
     "RUBYOPT", "RUBYLIB", "PERL5OPT", "PERL5LIB", "PERLLIB", "ZDOTDIR", "JAVA_TOOL_OPTIONS",
     "_JAVA_OPTIONS", "CLASSPATH", "GEM_PATH", "DYLD_LIBRARY_PATH", "LD_LIBRARY_PATH", "LD_AUDIT",
     # where tools read their configuration (which can hold commands, proxies, TLS settings)
     "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "HOSTALIASES",
     "CURL_HOME", "WGETRC", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG", "PIP_CONFIG_FILE",
     "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "DOCKER_CONFIG", "KUBECONFIG", "SSLKEYLOGFILE",
     "CONDARC", "BUNDLE_USER_CONFIG", "CARGO_HOME", "GNUPGHOME", "INPUTRC", "VIMINIT", "MYVIMRC"}
)  # fmt: skip
_GIT_CONFIG_KEY = re.compile(r"^GIT_CONFIG_KEY_\d+$")
_GIT_EXEC_KEY = re.compile(
    r"(?i)^(?:core\.(?:fsmonitor|pager|sshcommand|hookspath|editor|askpass|gitproxy)|alias\.|"
    r"diff\.external|filter\.|credential\.helper|gpg\.program|sequence\.editor|init\.templatedir)"
)


# Variables naming the certificates to trust: a file in a temp folder is nobody's CA.
_CA_VARIABLES = frozenset(
    {"REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
     "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "PIP_CERT", "AWS_CA_BUNDLE",
     "HTTPLIB2_CA_CERTS", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "NPM_CONFIG_CAFILE",
     "npm_config_cafile", "DENO_CERT", "CARGO_HTTP_CAINFO"}
)  # fmt: skip
# Variables that choose where package installs come from.
_INDEX_VARIABLES = frozenset(
    {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL",
     "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS", "PIPENV_PYPI_MIRROR",
     "NPM_CONFIG_REGISTRY", "npm_config_registry", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER",
     "BUN_CONFIG_REGISTRY", "GOPROXY", "CARGO_REGISTRY_INDEX", "GEM_SOURCE", "CONDA_CHANNELS",
     "PDM_PYPI_URL", "HOMEBREW_BOTTLE_DOMAIN", "HOMEBREW_API_DOMAIN", "HOMEBREW_BREW_GIT_REMOTE",
     "HOMEBREW_CORE_GIT_REMOTE"}
)  # fmt: skip
_INDEX_PREFIXES = ("BUNDLE_MIRROR__", "POETRY_REPOSITORIES_", "CARGO_REGISTRIES_", "UV_INDEX_")


# Folders on a usual PATH, and the programs an agent or a person runs by bare name from them.
_PATH_HINT = re.compile(r"bin/|shims/")


_TAMPER_NAMES = frozenset(
    {"kill", "pkill", "killall", "mv", "chmod", "rm", "cp", "ln", "install", "unlink", "chattr",
     "truncate", "shred", "chflags"}
)  # fmt: skip


_PROCESS_FINDERS = frozenset({"pgrep", "pidof", "ps", "awk", "grep", "egrep", "lsof"})


@rule(programs=None, when="redirects")
def _rule_guard_overwritten(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``printf '…' > "$(command -v domestique)"``: the guard's own program overwritten through
    a redirect whose target is found by a substitution."""
    for r in inv.redirects:
        if (
            r.writes
            and r.target.subs
            and any(_names_guard(ctx.invs[i].args) for i in r.target.subs if i < len(ctx.invs))
        ):
            yield Hit("cmd.guard_tamper", f"{inv.name} overwrites Domestique "
                      f"({r.target.text[:60]})", r.target.span, inv.render())  # fmt: skip
            return


@rule(programs=_TAMPER_NAMES)
def _rule_controls(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """The guard itself stopped, moved or disabled; a common tool shadowed in a PATH folder."""
    n = inv.name
    words = inv.words[1:]
    args = inv.args
    if n in ("kill", "killall", "pkill") and any(
        _names_guard(ctx.invs[i].args) for i in inv.upstream
    ):  # pgrep -f domestique | xargs kill; ps aux | grep '[d]omestique' | awk … | xargs kill
        yield Hit("cmd.guard_tamper", f"{n} is given Domestique's process ids", inv.span,
                  inv.render())  # fmt: skip
        return
    if (
        n == "kill"
        and any(not w.literal for w in words)
        and any(other.name in _PROCESS_FINDERS and _names_guard(other.args) for other in ctx.invs)
    ):  # for p in $(ps -eo pid,comm | awk '/domest/{print $1}'); do kill $p; done
        yield Hit("cmd.guard_tamper", "kill is given process ids found by Domestique's name",
                  inv.span, inv.render())  # fmt: skip
        return
    if not args:
        return
    if (
        not any(w.subs for w in words)
        and "domestique" not in "\n".join(args).lower()
        and (n not in ("ln", "cp", "mv", "install") or not _PATH_HINT.search(args[-1]))
    ):
        return  # names neither the guard nor a PATH folder (most invocations)
    judged = inv.render()
    for w in words:
        named = False
        if w.subs:
            # $(which domestique), $(pgrep -f domestique), $(ps … | awk '/domestique/…')
            named = any(_names_guard(ctx.invs[i].args) for i in w.subs if i < len(ctx.invs))
        elif n in ("kill", "pkill", "killall"):
            named = "domestique" in w.text.lower() and n != "kill"
        elif "domestique" in w.text.lower():
            # ${DOMESTIQUE_HOME:-~/.domestique}/x: either branch is the guard's
            named = any(
                ctx.guard_re.search(canonical_for_match(t, ctx.cwd, ctx.env))
                for t in (w.text, default_branch(w.text))
                if t is not None
            )
        if named:
            yield Hit("cmd.guard_tamper", f"{n} targets Domestique ({w.text[:60]})", w.span,
                      judged)  # fmt: skip
            return
    if n in ("ln", "cp", "mv", "install") and len(words) >= 2:
        dest = words[-1]
        tool = shadowed_tool(dest.text, ctx.cwd, ctx.env)
        if tool and n == "ln" and any(w.text.startswith("-") and "s" in w.text for w in words):
            yield Hit("cmd.persistence", f"a link in a PATH folder shadows {tool}", dest.span,
                      judged)  # fmt: skip
        elif tool and n != "ln" and not words[-2].text.startswith(("/usr/", "/bin/", "/opt/")):
            yield Hit("cmd.persistence", f"{n} puts a program named {tool} in a PATH folder",
                      dest.span, judged)  # fmt: skip


# Switches that start an agent with its approvals or hooks off (or with settings from elsewhere).
_AGENT_SWITCHES = frozenset(
    {"--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox", "--yolo",
     "--dangerously-allow-all", "--allow-dangerously-skip-permissions"}
)  # fmt: skip
_AGENT_VALUE_SWITCHES = {
    "--permission-mode": ("bypasspermissions",),
    "--approval-mode": ("yolo",),
    "--sandbox": ("danger-full-access",),
    "-s": ("danger-full-access",),
    "--setting-sources": ("",),
}


@rule(programs=AGENT_PROGRAMS, args=True)
def _rule_agent_switches(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """An agent started with approvals or hooks off: ``claude --dangerously-skip-permissions``,
    ``codex --dangerously-bypass-approvals-and-sandbox``, ``gemini --yolo``, settings from a
    temporary folder (``claude --settings /tmp/x.json``)."""
    args = inv.args
    judged = inv.render()
    for i, a in enumerate(args):
        name, eq, value = a.partition("=")
        if not eq and i + 1 < len(args):
            value = args[i + 1]
        hit = a in _AGENT_SWITCHES or (
            inv.name == "gemini" and a == "-y"
        ) or (
            name in _AGENT_VALUE_SWITCHES
            and (
                value.lower() in _AGENT_VALUE_SWITCHES[name]
                or (name == "--setting-sources" and "user" not in value.lower())
            )
        ) or (name == "--settings" and _temp_value(value))  # fmt: skip
        if hit:
            yield Hit("cmd.guard_tamper", f"{inv.name} {a} starts an agent without its controls",
                      inv.span, judged)  # fmt: skip
            return


_GUARD_FILE_TOOLS = frozenset(
    {"chmod", "chown", "chattr", "chflags", "setfacl", "yq", "jq", "git", "find", "rsync", "rm"}
)
# The folders that hold an agent's hook settings or Domestique's state, as a whole.
_GUARD_FOLDERS = re.compile(
    r"(?:^|/)\.(?:claude|cursor|gemini|codex|copilot|windsurf|codeium|clinerules|domestique)/?$"
)
_GIT_FILE_VERBS = frozenset({"checkout", "restore", "rm", "mv", "apply", "stash"})
_GUARD_HINT = re.compile(r"(?i)claude|cursor|gemini|codex|copilot|windsurf|cline|domestique|hooks")


@rule(programs=_GUARD_FILE_TOOLS, args=True)
def _rule_guard_file_modes(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``chmod 000 ~/.claude/settings.json``, ``chattr +i``, ``yq -i 'del(.hooks)' …``, ``git
    checkout OLD -- .claude/settings.json``: the hook settings made unreadable, frozen, edited in
    place or replaced by an old version."""
    n = inv.name
    if n in ("find", "rsync", "rm"):
        yield from _guard_folder_wiped(inv, ctx)
        return
    if n in ("yq", "jq") and not any(a in ("-i", "--inplace", "--in-place") for a in inv.args):
        return
    if n == "git" and (
        _GIT_FILE_VERBS.isdisjoint(inv.args[:3]) or not _GUARD_HINT.search(" ".join(inv.args))
    ):
        return  # git checkout HEAD~5 -- .claude/settings.json: old settings written back
    for w in inv.words[1:]:
        t = w.text
        if t.startswith("-") or not ("/" in t or t.startswith(".")):
            continue
        if ctx.guard_re.search(canonical_for_match(t, ctx.cwd, ctx.env)):
            yield Hit("cmd.guard_tamper", f"{n} changes {t}", w.span, inv.render())
            return


def _guard_folder_wiped(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``rm -rf ~/.claude``, ``find ~/.claude -delete``, ``rsync --delete empty/ ~/.claude/``:
    the folder of an agent's hook settings deleted or emptied."""
    args = inv.args
    n = inv.name
    if n == "find":
        if not ("-delete" in args or any(a in ("rm", "/bin/rm") for a in args)):
            return
        targets = args[:1]
    elif n == "rsync":
        if not any(a.startswith("--delete") for a in args):
            return
        targets = [a for a in args if not a.startswith("-")][-1:]
    else:
        if not any(a.startswith("-") and ("r" in a or "R" in a) for a in args):
            return
        targets = [a for a in args if not a.startswith("-")]
    for t in targets:
        if _GUARD_FOLDERS.search(canonical_for_match(t, ctx.cwd, ctx.env)):
            yield Hit("cmd.guard_tamper", f"{n} deletes {t}, which holds hook settings",
                      inv.span, inv.render())  # fmt: skip
            return


def _names_guard(args: list[str]) -> bool:
    """Does a process search name Domestique (``[d]omestique``, ``/domestique/``)?"""
    text = "\n".join(args).lower()
    if "[" in text:
        text = _ONE_CHAR_CLASS.sub(r"\1", text)
    return "domestique" in text or _GUARD_STEM.search(text) is not None


# a search for the name's start (`awk '/domest/'`, `pgrep domesti`): still the guard
_GUARD_STEM = re.compile(r"(?<![a-z])domest(?:i(?:q(?:u)?)?)?(?![a-z])")
_ONE_CHAR_CLASS = re.compile(r"\[(\w)\]")
_BRACES = re.compile(r"\{([\w,]+,[\w,]*)\}")


def _expand_braces(text: str) -> list[str]:
    """``{HTTPS,HTTP}_PROXY=`` -> ``HTTPS_PROXY=``, ``HTTP_PROXY=`` (plain word lists only)."""
    m = _BRACES.search(text)
    if m is None:
        return [text]
    return [
        x
        for alt in m.group(1).split(",")
        for x in _expand_braces(text[: m.start()] + alt + text[m.end() :])
    ][:64]


@rule(programs={"launchctl", "systemctl", "dbus-update-activation-environment"}, args=True)
def _rule_service_environment(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``launchctl setenv HTTPS_PROXY ''``, ``systemctl --user set-environment X=…`` and
    ``unset-environment``: the variables of every program the session starts later."""
    args = [a for a in inv.args if not a.startswith("-")]
    judged = inv.render()
    if inv.name == "launchctl" and args[:1] in (["setenv"], ["unsetenv"]) and len(args) >= 2:
        if args[0] == "unsetenv" and is_control_variable(args[1]):
            yield Hit("cmd.guard_tamper", f"launchctl unsetenv {args[1]}", inv.span, judged)
        elif args[0] == "setenv":
            yield from assignment_hit(args[1], args[2] if len(args) > 2 else "", inv.span,
                                      judged, ctx.env)  # fmt: skip
        return
    pairs = args[1:] if args[:1] in (["set-environment"], ["unset-environment"]) else args
    if inv.name == "systemctl" and args[:1] == ["unset-environment"]:
        for name in pairs:
            if is_control_variable(name):
                yield Hit("cmd.guard_tamper", f"{name} unset for the session's services",
                          inv.span, judged)  # fmt: skip
                return
        return
    if inv.name == "systemctl" and args[:1] != ["set-environment"]:
        return
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if eq:
            yield from assignment_hit(name, value, inv.span, judged, ctx.env)


@rule(programs={"read", "printf", "mapfile", "readarray", "getopts"}, args=True)
def _rule_builtin_assign(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``read ANTHROPIC_BASE_URL <<< …``, ``printf -v HTTPS_PROXY …``: a control variable set."""
    args = inv.args
    names = (
        [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"]
        if inv.name == "printf"
        else [a for a in args if not a.startswith("-")]
    )
    for name in names:
        if is_control_variable(name):
            yield Hit("cmd.guard_tamper", f"{inv.name} sets {name}", inv.span, inv.render())
            return


@rule(programs={"export", "declare", "typeset", "local", "readonly"}, args=True)
def _rule_export(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``export NAME=value`` and friends: each assignment judged; a nameref to a control variable.

    ``export HTTPS_PROXY`` alone exports the value it has: nothing changes.
    """
    n = inv.name
    args = inv.args
    sp = inv.span
    judged = inv.render()
    nameref = n != "export" and any(x.startswith("-") and "n" in x for x in args)
    if any("{" in x for x in args):
        args = [y for x in args for y in _expand_braces(x)]
    for x in args:
        name, eq, value = x.partition("=")
        if nameref and is_control_variable(value):
            yield Hit("cmd.guard_tamper", f"{name} is made a reference to {value}", sp, judged)
        if eq:
            yield from assignment_hit(name, value, sp, judged, ctx.env)


@rule(programs=(), also=("env",))
def _rule_env_prefix(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``NAME=value cmd``: the assignment holds for that one run; an emptied environment."""
    n = inv.name
    sp = inv.span
    judged = inv.render()
    if ENV_CLEARED in inv.env and n in AGENT_PROGRAMS:
        yield Hit("cmd.guard_tamper", f"{n} starts with an emptied environment", sp, judged)
    for k, v in inv.env.items():
        if k != ENV_CLEARED:
            yield from assignment_hit(k, v, sp, judged, ctx.env, exported=False, program=n)


@line_rule(facts=("assignments",))
def _rule_assignments(ctx: Context) -> Iterator[Hit]:
    """Bare ``NAME=value`` statements: they hold for the rest of the shell session."""
    for name, value in ctx.assignments:
        yield from assignment_hit(name, value.text, value.span, f"{name}={value.text}", ctx.env)


_TIMER_OPTIONS = (
    "--on-calendar", "--on-active", "--on-boot", "--on-startup", "--on-unit-active",
    "--on-unit-inactive",
)  # fmt: skip


@rule(programs=None, when="wrapped")
def _rule_scheduled(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``systemd-run --on-calendar=… cmd``: the command is scheduled to run again and again."""
    for name, words in inv.wrapped:
        if name == "systemd-run" and any(w.text.startswith(_TIMER_OPTIONS) for w in words):
            yield Hit("cmd.persistence", "systemd-run schedules a timer", inv.span, inv.render())
            return
