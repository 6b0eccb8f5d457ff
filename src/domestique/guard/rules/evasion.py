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
        ):
            said = True
            yield Hit("cmd.privilege.sudo", f"{inv.name} runs with raised privileges", inv.span,
                      inv.render())  # fmt: skip
        if inv.words and inv.words[0].text.startswith(TEMP_EXEC):
            yield Hit("cmd.temp_exec", f"runs {inv.words[0].text} from a temp folder", inv.span,
                      inv.render())  # fmt: skip


# System package managers and the verbs that install or refresh packages by name from the
# repositories the machine already trusts (signed indexes, set up by its administrator).
_SYSTEM_PM = {
    "apt-get": ("install", "update"), "apt": ("install", "update"), "dnf": ("install",),
    "yum": ("install",), "microdnf": ("install",), "zypper": ("install", "in", "refresh"),
    "apk": ("add", "update"), "pacman": ("-S", "-Sy", "--sync", "--needed"),
}  # fmt: skip
_PM_PLAIN_OPTS = frozenset(
    {"-y", "--yes", "--assume-yes", "-q", "-qq", "--quiet", "--no-install-recommends",
     "--no-install-suggests", "--noconfirm", "--needed", "--no-cache", "-n", "--non-interactive",
     "--update", "--refresh", "--setopt=install_weak_deps=False", "-qy", "-yq", "--fix-missing",
     "--no-upgrade", "--only-upgrade"}
)  # fmt: skip
_PACKAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_:=~*-]*$")
_PLAIN_SUDO_ENV = frozenset({"DEBIAN_FRONTEND", "NEEDRESTART_MODE", "NEEDRESTART_SUSPEND"})


def system_package_install(inv: Invocation) -> bool:
    """``sudo apt-get install -y jq``: packages installed by name from the configured system
    repositories through a plain ``sudo`` (no options, no other wrapper, no preserved
    environment). Everyday set-up; ``./x.deb``, URLs, ``-o`` hooks, other config files and
    unsigned-package switches are not names and still ask."""
    verbs = _SYSTEM_PM.get(inv.name)
    if verbs is None or inv.via not in (("sudo",), ("doas",)) or len(inv.wrapped) != 1:
        return False
    given = inv.wrapped[0][1]
    if len(given) != len(inv.words) or any(k not in _PLAIN_SUDO_ENV for k in inv.env):
        return False  # sudo's own options (-E, -u, -s …) before the command
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
        if targets and not any(classify(t.text, ctx.cwd, ctx.env) is Place.DEVICE for t in targets):
            # A disk device is cmd.device_write (see _rule_rm).
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
