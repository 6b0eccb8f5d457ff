"""Rules about ways out of the guard's sight: tools that start shells, unsafe modes, local
packages, containers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard import wrappers
from domestique.guard.model import Hit, Invocation
from domestique.guard.names import SHELLS
from domestique.guard.paths import (
    Place,
    classify,
)
from domestique.guard.rules.common import SHELL_ARG
from domestique.guard.rules.registry import Context, rule
from domestique.guard.supply import option_values
from domestique.guard.wrappers import PROJECT_RUNNERS, WRAPPERS


@rule(programs=None, when="mentions_sh", also=("env",))
def _rule_shell_escape(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A tool given a shell to start (GTFOBins): ``-TT 'sh #'``, ``:!/bin/sh``, ``exec=/bin/sh``."""
    n = inv.name
    if n in SHELLS or n in SHELL_ESCAPE_OK or (n in WRAPPERS and n not in PROJECT_RUNNERS):
        return
    if not inv.env and "sh" not in "\n".join(inv.args):
        return  # SHELL_ARG needs "sh" in a word (cheap first: this rule runs on most commands)
    texts = [(w.text if w.literal else _SUBST.sub(" ", w.text), w.span) for w in inv.words[1:]]
    texts += [(f"{k}={v}", inv.span) for k, v in inv.env.items()]
    previous = ""
    for text, span in texts:
        if previous in _NAMES_A_SHELL and text in SHELLS:
            previous = text
            continue  # `gh completion -s bash`, `direnv hook bash`: names a shell, starts none
        previous = text
        if "sh" in text and SHELL_ARG.search(text):
            yield Hit("cmd.shell_escape", f"{n} is told to start a shell ({text[:40]})", span,
                      inv.render())  # fmt: skip
            return


@rule(programs=None, except_programs=SHELLS, when="shell_subcommand")
def _rule_shell_subcommand(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``<tool> shell`` with no command after it: a tool's subcommand that opens a shell.

    ``poetry shell``, ``pipenv shell``, ``ansible-test shell``, ``adb shell``: the session's
    input is typed later and never judged. ``adb shell ls`` (a command given) is judged as usual.
    """
    if len(inv.words) < 2 or inv.words[1].text != "shell":
        return  # the test below needs it (cheap first: this rule runs on most commands)
    positional = [w for w in inv.words[1:] if not w.text.startswith("-")]
    if len(positional) == 1 and positional[0].text == "shell" and inv.words[1] is positional[0]:
        yield Hit("cmd.interactive_shell", f"{inv.name} shell starts an interactive shell",
                  inv.span, inv.render())  # fmt: skip


# Full-screen file managers and serial terminals with a key that starts a shell (ranger S,
# ncdu b, nnn !, mc Ctrl-O, lf !, vifm :!, minicom Ctrl-A, picocom/cu ~!): the keys typed later
# are never seen. Editors and pagers (vim, less, man) are everyday tools and are left alone;
# their shell escapes given as arguments are caught by _rule_shell_escape.
_TUI_SHELL_KEY = frozenset(
    {"ranger", "nnn", "lf", "mc", "vifm", "ncdu", "broot", "yazi", "minicom", "picocom", "tio",
     "cu"}
)  # fmt: skip


@rule(programs=_TUI_SHELL_KEY)
def _rule_tui_shell_key(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A full-screen tool whose shell key opens a shell the guard never sees."""
    yield Hit("cmd.interactive_shell", f"{inv.name} offers a key that starts a shell",
              inv.span, inv.render())  # fmt: skip


# Options that switch a document tool into a mode where its input may run shell commands.
_TEX_ENGINES = frozenset(
    {"tex", "latex", "pdflatex", "xelatex", "lualatex", "luatex", "pdftex", "xetex", "etex",
     "mpost", "latexmk", "context", "lualatex-dev", "pdflatex-dev", "xelatex-dev", "uplatex",
     "platex", "euptex", "eptex", "ptex", "uptex", "lilypond"}
)  # fmt: skip


_ROFF_TOOLS = frozenset(
    {"groff", "troff", "gtroff", "nroff", "pic", "gpic", "eqn", "geqn", "grops", "refer",
     "soelim", "tbl", "grog"}
)  # fmt: skip


_TEX_UNSAFE = re.compile(r"^--?(?:shell-escape|enable-write18)$")


_GS_NAMES = frozenset({"gs", "gsc", "gswin64c", "gswin32c", "ghostscript", "ps2pdf", "ps2ps"})


_UNSAFE_MODE_NAMES = _TEX_ENGINES | _ROFF_TOOLS | _GS_NAMES | {"dvips"}


@rule(programs=_UNSAFE_MODE_NAMES, args=True)
def _rule_unsafe_mode(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A document tool run in its unsafe mode, where the document may start commands.

    ``dvips -R0``, ``groff``/``troff``/``pic -U``, TeX ``--shell-escape``/``--enable-write18``
    and Ghostscript ``-dNOSAFER``: the input file (often fetched or generated) can then run any
    shell command, which the guard never sees.
    """
    n = inv.name
    for w in inv.words[1:]:
        t = w.text
        if t == "--":
            break
        unsafe = (
            (n == "dvips" and t == "-R0")
            or (n in _ROFF_TOOLS and t.startswith("-") and not t.startswith("--") and "U" in t)
            or (n in _TEX_ENGINES and bool(_TEX_UNSAFE.match(t.split("=", 1)[0])))
            or (n in _GS_NAMES and t in ("-dNOSAFER", "-dDELAYSAFER", "-dSAFER=false"))
        )
        if unsafe:
            yield Hit("cmd.shell_escape", f"{n} {t}: its input may run shell commands", w.span,
                      inv.render())  # fmt: skip
            return


# Installing a package file runs its maintainer scripts (preinst/postinst, %post) as root.
_PACKAGE_FILE = re.compile(
    r"\.(?:deb|udeb|rpm|ipk|apk|snap|pkg|mpkg|pkg\.tar(?:\.\w+)?|xbps|txz|tbz)$", re.I
)


_PKG_LOCAL_CLUSTER = {"dpkg": "i", "rpm": "iUF", "pacman": "U"}


_PKG_LOCAL_LONG = frozenset({"--install", "--upgrade", "--freshen", "--unpack"})


_PKG_INSTALL_VERBS = frozenset({"install", "add", "reinstall", "localinstall", "upgrade", "in"})


_PKG_MANAGERS = frozenset(
    {"apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "opkg", "apk", "snap", "xbps-install",
     "pkg", "gdebi", "installer", "pkgutil", "microdnf", "tdnf"}
)  # fmt: skip


_PACKAGE_NAMES = frozenset(_PKG_LOCAL_CLUSTER) | _PKG_MANAGERS


@rule(programs=_PACKAGE_NAMES, args=True)
def _rule_package_file(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A package file installed (``dpkg -i x.deb``, ``rpm -Uvh``, ``apt install ./x.deb``).

    Its maintainer scripts run as root with no review; installs by name from the configured
    repositories are left alone.
    """
    n = inv.name
    judged = inv.render()
    words = inv.words[1:]
    if n in _PKG_LOCAL_CLUSTER:
        letters = _PKG_LOCAL_CLUSTER[n]
        for w in words:
            t = w.text
            if t in _PKG_LOCAL_LONG or (
                t.startswith("-") and not t.startswith("--") and len(t) > 1 and t[1] in letters
            ):
                yield Hit("cmd.package_file", f"{n} {t} installs a package file", w.span, judged)
                return
        return
    if n == "installer" and "-pkg" in (w.text for w in words):
        yield Hit("cmd.package_file", "installer -pkg installs a package file", inv.span, judged)
        return
    if not any(w.text in _PKG_INSTALL_VERBS for w in words):
        return
    for w in words:
        if _PACKAGE_FILE.search(w.text) and not w.text.startswith("-"):
            yield Hit("cmd.package_file", f"{n} installs package file {w.text}", w.span, judged)
            return


_SUBST = re.compile(r"\$\([^()]*\)|`[^`]*`")


_CONTAINER_NAMES = frozenset({"docker", "podman", "nerdctl", "lxc", "incus", "ctr"})


@rule(programs=_CONTAINER_NAMES)
def _rule_container(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A container given the host's root or home folder, PID namespace or full privileges."""
    n = inv.name
    if n not in ("docker", "podman", "nerdctl", "lxc", "incus", "ctr"):
        return
    args = inv.args
    judged = inv.render()
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if "=" in a and a.startswith("--") else (
            args[i + 1] if a in ("-v", "--volume", "--mount") and i + 1 < len(args) else ""
        )  # fmt: skip
        if a in ("-v", "--volume") or a.startswith(("--volume=", "--mount", "-v/", "-v~")):
            value = value or a[2:]
            if "src=" in value or "source=" in value:
                src = re.split(r"(?:^|,)(?:src|source)=", value, maxsplit=1)[1].split(",")[0]
            else:
                src = value.split(":", 1)[0]
            if src and classify(src, ctx.cwd, ctx.env) in (Place.ROOT, Place.HOME, Place.SYSTEM):
                yield Hit("cmd.privilege.container", f"{n} mounts the host's {src}", inv.span,
                          judged)  # fmt: skip
                return
        if a in ("--privileged", "--pid=host", "--userns=host", "security.privileged=true") or (
            a.startswith("source=/") and a in ("source=/",)
        ):
            yield Hit("cmd.privilege.container", f"{n} {a}", inv.span, judged)
            return
    # the host's disk given to the container, or the capability to mount it
    disks = [d for d in option_values(args, ("--device",)) if _HOST_DISK.match(d)]
    caps = {c.upper() for c in option_values(args, ("--cap-add",))} & _MOUNTING_CAPS
    if disks or caps:
        given = disks[0] if disks else f"--cap-add {min(caps)}"
        yield Hit("cmd.privilege.container", f"{n} is given {given}", inv.span, judged)
        return
    if n in ("lxc", "incus") and any(x in ("source=/", "security.privileged=true") for x in args):
        yield Hit("cmd.privilege.container", f"{n} shares the host's root", inv.span, judged)


_HOST_DISK = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|dm-|md|loop|mapper/)")
_MOUNTING_CAPS = frozenset({"ALL", "SYS_ADMIN", "CAP_SYS_ADMIN"})


# Words after which a shell's name says which shell to write set-up code for (``zoxide init
# zsh``, ``mise activate bash``): the tool prints code for that shell and starts none.
_NAMES_A_SHELL = frozenset(
    {"completion", "completions", "-s", "--shell", "hook", "init", "activate", "shellenv",
     "integration"}
)  # fmt: skip


SHELL_ESCAPE_OK = frozenset(
    {
        "which", "type", "whereis", "man", "info", "apropos", "help", "apt", "apt-get", "dnf",
        "yum", "brew", "pacman", "apk", "port", "file", "ls", "stat", "readlink",
        "realpath", "chsh", "grep", "rg", "ag", "echo", "printf", "cat", "head", "tail", "test",
        "[", "ln", "cp", "install", "update-alternatives", "chmod", "chown", "dpkg", "rpm",
        "tldr", "command", "hash", "usermod", "useradd", "export", "local", "declare", "set",
        "ps", "pgrep", "pkill", "kill", "killall", "mv", "rm", "touch", "git", "sed",
        "shellcheck", "shfmt", "snap", "flatpak", "nix", "conda", "cargo", "go", "du",
        "find", "xargs", "env", "sort", "uniq", "wc", "cut", "tr", "unset", "alias", "sudo",
        "ssh", "docker", "podman", "kubectl", "oc", "nerdctl",
    }
)  # fmt: skip


# ------------------------------------------------------------------ wrappers that start a shell

_ROOT_WRAPPERS = frozenset({"sudo", "doas", "run0", "pkexec"})
_LISTING = frozenset({"-ls", "-list", "-r", "-x", "-X", "ls"})
_SESSION_STARTS = frozenset({"new", "new-session", "new-window", "neww", "split-window", "splitw"})


def _wrapper_shell(inv: Invocation) -> str | None:
    """What shell a wrapper left with nothing to run starts (None: it starts none)."""
    n = inv.name
    rest = inv.words[1:]
    if n == "su":
        if any(w.text in ("-c", "--command") for w in rest[:-1]) or any(
            w.text.startswith("--command=") for w in rest
        ):
            return None
        return "su starts an interactive shell"
    if n == "script":
        return (
            None if wrappers.script_code(rest) is not None else "script starts an interactive shell"
        )
    if n in ("tmux", "screen"):
        if wrappers.tail_after_session_opts(n, rest) is not None:
            return None
        texts = [w.text for w in rest]
        starts = not texts or texts[0].startswith("-") or texts[0] in _SESSION_STARTS
        return f"{n} starts a shell" if starts and _LISTING.isdisjoint(texts) else None
    if n in _ROOT_WRAPPERS:
        command, interactive = wrappers.root_shell_options(n, rest)
        return f"{n} starts an interactive root shell" if interactive and not command else None
    if n == "chroot":
        left = wrappers.skip_options(rest, wrappers.SPECS["chroot"].opts_with_arg)
        return "chroot starts an interactive shell" if len(left) <= 1 else None
    if n == "unshare" and not wrappers.skip_options(rest, frozenset()):
        return "unshare starts an interactive shell"
    return None


@rule(programs=frozenset({"su", "script", "tmux", "screen", "chroot", "unshare"}) | _ROOT_WRAPPERS)
def _rule_wrapper_shell(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A wrapper with nothing to run starts a shell: ``su``, ``sudo -i``, ``tmux``, ``chroot DIR``.

    The session's commands are typed later and never judged.
    """
    message = _wrapper_shell(inv)
    if message:
        yield Hit("cmd.interactive_shell", message, inv.span, inv.render())


@rule(programs=SHELLS, when="wrapped")
def _rule_xargs_tty_shell(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``xargs -o bash``: xargs hands the shell the terminal, an interactive shell."""
    for name, words in inv.wrapped:
        if name != "xargs":
            continue
        opts, runs = wrappers.xargs_split(list(words))
        if {"-o", "--open-tty"} & {w.text for w in opts} and len(runs) == 1:
            yield Hit("cmd.interactive_shell", "xargs -o starts a shell", inv.span, inv.render())
            return
