"""Rules about the guard's own controls: its variables, its files and processes, programs shadowed
on PATH.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.env import GuardEnv
from domestique.guard.model import Hit, Invocation, Span
from domestique.guard.names import ENV_CLEARED, SHELLS
from domestique.guard.paths import (
    Place,
    canonical_for_match,
    classify,
)
from domestique.guard.rules.common import shadowed_tool
from domestique.guard.rules.registry import Context, line_rule, rule
from domestique.guard.rules.vocab import AGENT_PROGRAMS, CONTROL_VARIABLES

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
    if name == "HISTFILE" and value in ("", "/dev/null"):
        yield Hit("cmd.history_wipe", "history file set to nothing", span, judged)
    elif name in ("HISTSIZE", "HISTFILESIZE", "SAVEHIST") and value.strip("'\"") == "0":
        yield Hit("cmd.history_wipe", f"{name}=0 stops history", span, judged)
    elif name == "HISTCONTROL" and any(v in value for v in ("ignorespace", "ignoreboth")):
        yield Hit("cmd.history_wipe", "HISTCONTROL hides commands from history", span, judged)
    elif name in CONTROL_VARIABLES and (
        exported
        or name not in _PROXY_VARIABLES  # a model endpoint only matters to a model client
        or program in AGENT_PROGRAMS
        or program in SHELLS
    ):
        yield Hit("cmd.guard_tamper", f"{name} changed: model traffic or the guard's state moves",
                  span, judged)  # fmt: skip
    elif name in _TLS_OFF_VARIABLES and value.strip("'\"") in _TLS_OFF_VARIABLES[name]:
        yield Hit("cmd.tls_off", f"{name}={value} turns certificate checks off", span, judged)
    elif (
        name in ("LD_PRELOAD", "DYLD_INSERT_LIBRARIES")
        and value
        and (exported or classify(value, None, env) not in (Place.PROJECT, Place.PROJECT_ROOT))
    ):
        yield Hit("cmd.privilege.setuid", f"{name} injects a library into later commands", span,
                  judged)  # fmt: skip


# Folders on a usual PATH, and the programs an agent or a person runs by bare name from them.
_PATH_HINT = re.compile(r"bin/|shims/")


_TAMPER_NAMES = frozenset(
    {"kill", "pkill", "killall", "mv", "chmod", "rm", "cp", "ln", "install", "unlink", "chattr",
     "truncate", "shred", "chflags"}
)  # fmt: skip


@rule(programs=_TAMPER_NAMES, args=True)
def _rule_controls(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """The guard itself stopped, moved or disabled; a common tool shadowed in a PATH folder."""
    n = inv.name
    words = inv.words[1:]
    args = inv.args
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
            # $(which domestique), $(pgrep -f domestique), `command -v domestique`
            named = any("domestique" in ctx.invs[i].args for i in w.subs if i < len(ctx.invs))
        elif n in ("kill", "pkill", "killall"):
            named = "domestique" in w.text.lower() and n != "kill"
        elif "domestique" in w.text.lower():
            named = bool(ctx.guard_re.search(canonical_for_match(w.text, ctx.cwd, ctx.env)))
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
    for x in args:
        name, eq, value = x.partition("=")
        if nameref and value in CONTROL_VARIABLES:
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
