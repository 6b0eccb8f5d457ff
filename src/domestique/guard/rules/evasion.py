"""Rules about hiding tracks: timestamps set back, invisible characters, privileges, temp-folder
programs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.paths import (
    Place,
    classify,
)
from domestique.guard.rules.common import opts
from domestique.guard.rules.registry import Context, line_rule, rule

PRIVILEGED_VIA = frozenset({"sudo", "doas", "su", "pkexec", "run0", "runuser"})


TEMP_EXEC = ("/tmp/", "/var/tmp/", "/dev/shm/", "/private/tmp/", "$TMPDIR/")  # noqa: S108 - matched, never opened


@line_rule(facts=("privileged",))
def _rule_privileged(ctx: Context) -> Iterator[Hit]:
    """sudo and friends: the agent asks for root. Programs run straight from a temp folder."""
    said = False
    for inv in ctx.invs:
        # sudo on another host (ssh deploy@web 'sudo systemctl restart app') raises nothing here;
        # what it runs there is still judged by every other rule.
        remote = "ssh remote" in inv.via and inv.via.index("ssh remote") < min(
            (inv.via.index(v) for v in PRIVILEGED_VIA if v in inv.via), default=-1
        )
        if (
            not said
            and not remote
            and not PRIVILEGED_VIA.isdisjoint(inv.via)
            and not system_package_install(inv)
            and not plain_root_task(inv, ctx)
        ):
            said = True
            yield Hit("cmd.privilege.sudo", f"{inv.name} runs with raised privileges", inv.span,
                      inv.render())  # fmt: skip
        if inv.words and inv.words[0].text.startswith(TEMP_EXEC):
            yield Hit("cmd.temp_exec", f"runs {inv.words[0].text} from a temp folder", inv.span,
                      inv.render())  # fmt: skip


# System package managers and the verbs that install, refresh or remove packages by name from
# the repositories the machine already trusts (signed indexes, set up by its administrator).
# Removing a security tool's package is its own rule (``package-remove-security``).
_SYSTEM_PM = {
    "apt-get": ("install", "update", "remove", "purge", "autoremove"),
    "apt": ("install", "update", "remove", "purge", "autoremove"),
    "dnf": ("install", "remove", "erase"), "yum": ("install", "remove", "erase"),
    "microdnf": ("install",), "zypper": ("install", "in", "refresh", "remove", "rm"),
    "apk": ("add", "update", "del"), "pacman": ("-S", "-Sy", "--sync", "--needed"),
    "snap": ("install", "refresh"),
}  # fmt: skip
_PM_PLAIN_OPTS = frozenset(
    {"-y", "--yes", "--assume-yes", "-q", "-qq", "--quiet", "--no-install-recommends",
     "--no-install-suggests", "--noconfirm", "--needed", "--no-cache", "-n", "--non-interactive",
     "--update", "--refresh", "--setopt=install_weak_deps=False", "-qy", "-yq", "--fix-missing",
     "--no-upgrade", "--only-upgrade", "--classic"}
)  # fmt: skip
_PACKAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_:=~*-]*$")
_PLAIN_SUDO_ENV = frozenset({"DEBIAN_FRONTEND", "NEEDRESTART_MODE", "NEEDRESTART_SUSPEND"})


def _plain_sudo(inv: Invocation) -> bool:
    """Run through a bare ``sudo``/``doas`` (no sudo options, no other wrapper, no environment
    passed but the package tools' quiet switches)."""
    if inv.via not in (("sudo",), ("doas",)) or len(inv.wrapped) != 1:
        return False
    given = inv.wrapped[0][1]
    return len(given) == len(inv.words) and all(k in _PLAIN_SUDO_ENV for k in inv.env)


def system_package_install(inv: Invocation) -> bool:
    """``sudo apt-get install -y jq``: packages installed or removed by name from the configured
    system repositories through a plain ``sudo``. Everyday set-up; ``./x.deb``, URLs, ``-o``
    hooks, other config files and unsigned-package switches are not names and still ask."""
    verbs = _SYSTEM_PM.get(inv.name)
    if verbs is None or not _plain_sudo(inv):
        return False
    args = inv.args
    if not args or args[0] not in verbs:
        return False
    for a in args[1:]:
        if a.startswith("-"):
            if a not in _PM_PLAIN_OPTS:
                return False
        elif not _PACKAGE_NAME.match(a):
            return False
    return True


# Root tasks whose whole effect is to show the machine's state, or to restart a service the
# machine already runs: ``sudo lsof -i``, ``sudo ss -tlnp``, ``sudo systemctl restart docker``.
# Each entry: the program and a test of its arguments. Anything else under sudo still asks, and
# every other rule still judges the command (``sudo cat /etc/shadow`` is a credential read).
_SHOWS = frozenset(
    {"lsof", "ss", "netstat", "ps", "df", "du", "lsblk", "blkid", "free", "uptime", "lscpu",
     "lspci", "lsusb", "lshw", "dmidecode", "iotop", "nethogs", "iftop", "pstree", "getenforce",
     "sestatus", "aa-status", "ufw-status", "id", "whoami"}
)  # fmt: skip
_SERVICE_VERBS = frozenset(
    {"status", "is-active", "is-enabled", "is-failed", "list-units", "list-timers",
     "list-unit-files", "show", "cat", "restart", "reload", "try-restart", "reload-or-restart",
     "try-reload-or-restart", "start", "daemon-reload"}
)  # fmt: skip
_CONTAINER_LOOKS = frozenset(
    {"ps", "images", "logs", "inspect", "stats", "info", "version", "top", "port", "diff",
     "history", "restart", "start"}
)  # fmt: skip
_JOURNAL_WRITES = (
    "--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--smart-relinquish",
    "--setup-keys", "--update-catalog", "-D", "--directory", "--file", "--root",
)  # fmt: skip
_DMESG_WRITES = frozenset(
    {"-c", "-C", "--clear", "--read-clear", "-D", "-E", "-n", "--console-off", "--console-on",
     "--console-level"}
)  # fmt: skip
_TCPDUMP_WRITES = frozenset({"-w", "-W", "-z", "-Z", "-C", "-G", "-V", "--relinquish-privileges"})
_FIREWALL_LIST = re.compile(
    r"^(?:-[nvxLS]*[LS][nvxLS]*|--list|--list-rules|-n|-v|-x|--line-numbers)$"
)
_NAME = re.compile(r"^[A-Za-z0-9][\w.@:-]*$")
# Services that route the machine's traffic elsewhere (anonymising proxies, tunnels, VPNs):
# starting one is not a restart of the developer's own service.
_ROUTING_UNITS = re.compile(
    r"(?i)^(?:tor|i2pd?|privoxy|proxychains|cloudflared|ngrok|frpc|openvpn(?:@.*)?|"
    r"wg-quick@.*|tailscaled|zerotier-one|sshuttle|redsocks)(?:\.service)?$"
)


def _only_shows(inv: Invocation) -> bool:
    n, args = inv.name, inv.args
    positional = [a for a in args if not a.startswith("-")]
    if n in _SHOWS:
        return not (n == "lsof" and any(a.startswith("+") for a in args))
    if n == "dmesg":
        return not any(a in _DMESG_WRITES for a in args)
    if n == "journalctl":
        return not any(a.startswith(_JOURNAL_WRITES) for a in args)
    if n == "fdisk":
        return args[:1] == ["-l"] and len(args) <= 2
    if n == "tcpdump":  # a bounded capture printed, nothing written, no command run per file
        return any(a == "-c" or (a.startswith("-c") and a[2:].isdigit()) for a in args) and not any(
            a in _TCPDUMP_WRITES or a.startswith(("-w", "-z", "-Z")) for a in args
        )
    if n in ("iptables", "ip6tables"):
        flags = [a for a in args if a.startswith("-")]
        return any("L" in f or "S" in f or f.startswith("--list") for f in flags) and all(
            _FIREWALL_LIST.match(f) or f in ("-t", "--table") for f in flags
        ) and all(_NAME.match(a) for a in positional)  # fmt: skip
    if n == "nft":
        return positional[:1] == ["list"]
    if n == "ip":
        return len(positional) <= 2 and positional[:1] != [] and (
            positional[0] in ("addr", "a", "address", "route", "r", "link", "l", "neigh", "n")
        ) and positional[1:2] in ([], ["show"], ["list"], ["ls"])  # fmt: skip
    if n in ("systemctl", "service"):
        verbs = [a for a in positional if a in _SERVICE_VERBS]
        return (
            bool(verbs)
            and all(_NAME.match(a) for a in positional)
            and not any(_ROUTING_UNITS.match(a) for a in positional)
        )
    if n in ("docker", "podman", "crictl"):
        return positional[:1] != [] and positional[0] in _CONTAINER_LOOKS and not any(
            a in ("-H", "--host", "--context", "-c") or a.startswith(("--host=", "--context="))
            for a in args
        )  # fmt: skip
    return False


def plain_root_task(inv: Invocation, ctx: Context) -> bool:
    """A plain ``sudo`` whose command only shows the machine's state, restarts a service, or
    fixes the owner or mode of files inside the project (``sudo chown -R $USER ./node_modules``)."""
    if not _plain_sudo(inv):
        return False
    if inv.name in ("chown", "chgrp", "chmod"):
        operands = [a for a in inv.args if not a.startswith("-")][1:]  # after owner / mode
        return bool(operands) and all(
            classify(a, ctx.cwd, ctx.env) is Place.PROJECT for a in operands
        )
    return _only_shows(inv)


# Dates before this year are not a build's: reproducible builds stamp 1980-01-01 (the zip epoch)
# or SOURCE_DATE_EPOCH; a file dated 1970 is hiding its age.
_OLDEST_PLAIN_YEAR = 1980


_EPOCH_1980 = 315532800


_SYSTEM_PROGRAM = re.compile(r"^/(?:s?bin|usr|lib\w*|etc|opt|System|Library|Applications)/")


_EVASION_NAMES = frozenset({"touch", "SetFile", "setfile", "chflags", "shred", "trap"})


def _stamp_year(stamp: str) -> int | None:
    """The year of a ``touch -t`` stamp ``[[CC]YY]MMDDhhmm[.ss]``; None when it has none."""
    digits = stamp.split(".", 1)[0]
    if not digits.isdigit():
        return None
    if len(digits) == 12:
        return int(digits[:4])
    if len(digits) == 10:
        yy = int(digits[:2])
        return 1900 + yy if yy >= 69 else 2000 + yy
    return None


_OLD_YEAR = r"(?:1[0-8]\d\d|19[0-7]\d)"


# A year before 1980 inside a calendar date (a lone 4-digit number is a time of day for GNU date):
# 1970-01-01, 19700101, 01/01/1970, Jan 1 1970, 1 Jan 1970, 00:00:00 UTC 1970.
_OLD_DATE = re.compile(
    rf"(?<!\d)(?:{_OLD_YEAR}-\d\d?-\d\d?|{_OLD_YEAR}[01]\d[0-3]\d(?!\d)|"
    rf"\d\d?/\d\d?/{_OLD_YEAR}(?!\d))|"
    rf"[A-Za-z]{{3,}}\.?\s+\d\d?,?\s+{_OLD_YEAR}(?!\d)|"
    rf"(?<!\d)\d\d?\s+[A-Za-z]{{3,}}\.?,?\s+{_OLD_YEAR}(?!\d)|"
    rf"\d\d:\d\d(?::\d\d)?\s+(?:[A-Z]{{2,5}}\s+)?{_OLD_YEAR}(?!\d)"
)


def _date_is_old(text: str) -> bool:
    """A date string (touch -d, SetFile -m) naming a year before 1980 or an epoch before it."""
    m = re.fullmatch(r"\s*@(\d+)(?:\.\d*)?\s*", text)
    if m:
        return int(m.group(1)) < _EPOCH_1980
    return _OLD_DATE.search(text) is not None


def _touch_times(words: list[Word]) -> Iterator[tuple[str, Word]]:
    """(kind, value) for each time source of a touch: ``t`` stamp, ``d`` date, ``r`` file."""
    i = 0
    while i < len(words):
        t = words[i].text
        nxt = words[i + 1] if i + 1 < len(words) else None
        if t == "--":
            return
        if t.startswith("--"):
            name, eq, value = t.partition("=")
            kind = {"--date": "d", "--reference": "r"}.get(name)
            if kind and eq:
                yield kind, Word(value, words[i].literal, words[i].span)
            elif kind and nxt is not None:
                yield kind, nxt
                i += 1
        elif t.startswith("-") and len(t) > 1:
            for k, ch in enumerate(t[1:], start=1):
                if ch in "tdr":  # takes a value: the rest of the cluster or the next word
                    if t[k + 1 :]:
                        yield ch, Word(t[k + 1 :], words[i].literal, words[i].span)
                    elif nxt is not None:
                        yield ch, nxt
                        i += 1
                    break
        i += 1


@rule(programs=_EVASION_NAMES, args=True)
def _rule_evasion(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Covering tracks: backdated or borrowed file times, files hidden from the user, files
    shredded past recovery, a DEBUG trap that sees every command."""
    n = inv.name
    judged = inv.render()
    if n == "touch":
        for kind, w in _touch_times(inv.words[1:]):
            if not w.literal:
                continue
            if kind == "t" and (_stamp_year(w.text) or 9999) < _OLDEST_PLAIN_YEAR:
                msg = f"touch backdates files to {w.text}"
            elif kind == "d" and _date_is_old(w.text):
                msg = f"touch backdates files to {w.text!r}"
            elif kind == "r" and _SYSTEM_PROGRAM.match(w.text):
                msg = f"touch copies the times of system file {w.text}"
            else:
                continue
            yield Hit("cmd.evasion.timestomp", msg, w.span, judged)
            return
    elif n in ("SetFile", "setfile"):
        words = inv.words[1:]
        for i, w in enumerate(words[:-1]):
            value = words[i + 1]
            if w.text in ("-m", "-d") and value.literal and _date_is_old(value.text):
                yield Hit("cmd.evasion.timestomp", f"SetFile backdates files to {value.text!r}",
                          value.span, judged)  # fmt: skip
                return
            if w.text == "-a" and "V" in value.text:
                yield Hit("cmd.evasion.hidden_file", "SetFile makes files invisible",
                          value.span, judged)  # fmt: skip
                return
    elif n == "chflags":
        _, rest = opts(inv.words[1:])
        if rest and "hidden" in rest[0].text.split(","):
            yield Hit("cmd.evasion.hidden_file", "chflags hides files from the Finder",
                      rest[0].span, judged)  # fmt: skip
    elif n == "shred":
        _, targets = opts(inv.words[1:])
        places = [classify(t.text, ctx.cwd, ctx.env) for t in targets]
        disposal = all(  # shred -u /tmp/dump.sql: a named scratch file disposed of safely
            t.literal and not any(c in t.text for c in "*?[") and p in (Place.TEMP, Place.PROJECT)
            for t, p in zip(targets, places, strict=True)
        )
        if targets and not disposal and Place.DEVICE not in places:
            # A disk device is cmd.device_write (see _rule_rm); history and logs are
            # cmd.history_wipe, credentials a credential read (their own rules).
            yield Hit("cmd.evasion.shred", "shred overwrites files past recovery", inv.span,
                      judged)  # fmt: skip
    elif (
        n == "trap"
        and len(inv.words) > 2
        and inv.args[0] not in ("", "-", "-p", "-l")  # reset, ignore, print, list
        and "DEBUG" in (a.upper() for a in inv.args[1:])
    ):
        yield Hit("cmd.debug_trap", "a DEBUG trap runs code before every command (sees each "
                  "command line)", inv.span, judged)  # fmt: skip


@line_rule(facts=("non_ascii",))
def _rule_non_ascii(ctx: Context) -> Iterator[Hit]:
    """Invisible and bidi control characters (a name that reads as another)."""
    command = ctx.command
    if command.isascii():
        return
    for m in re.finditer(r"[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\u00ad]", command):
        yield Hit(
            "cmd.non_ascii_name",
            f"invisible or bidi control character U+{ord(m.group(0)):04X}",
            (m.start(), m.end()),
        )
