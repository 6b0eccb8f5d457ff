"""Rules about reconnaissance: searching the machine for secrets, collecting files, password
guessing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.paths import (
    HISTORY_FILES,
    Place,
    canonical_for_match,
    classify,
)
from domestique.guard.rules.common import (
    OUTSIDE_PLACES,
    cd_before,
    hint_automaton,
    opts,
    secret_root,
    system_wide,
)
from domestique.guard.rules.registry import Context, rule

_RECON_TOOLS = re.compile(
    r"(?i)\b(?:linenum|linpeas|linuxprivchecker|pspy\d*|mimipenguin|lazagne|les\.sh|"
    r"linux-exploit-suggester|unix-privesc-check|sudo_killer|beroot|traitor)\b"
)


# Lower-case fragments of the names above: a cheap test before the regex.
_RECON_TOOL_HINTS = ("lin", "pspy", "mimipenguin", "lazagne", "les.sh", "privesc", "sudo_killer",
                     "beroot", "traitor")  # fmt: skip


_RECON_PERM = re.compile(
    r"^[-/+]?(?:[0-7]?[1246]000|[ug]=s|[ug]\+s|u=s,g=s)$|^-?0*[2-7]?0*2$|^-222$|^-[24]$|^-o$"
)


_RECON_NAMES = re.compile(
    r"(?i)(?:id_[rd]sa|id_ecdsa|id_ed25519|authorized_keys|\.htpasswd|\.bash_history|"
    r"\.sudo_as_admin_successful|\.git-credentials|\.kdbx|wp-config\.php|\.pgpass|\.netrc|"
    r"shadow|credentials|msal_token_cache|accesstokens\.json|\.rhosts|hosts\.equiv|\.plan$)"
)


# Start-up and service folders: a file there not owned by root is a privilege-escalation lead.
_SERVICE_DIRS = re.compile(
    r"^/(?:etc/(?:init\.d|init|rc\.d|rc\d\.d|systemd|cron[^/]*|xinetd\.d)|(?:usr/)?lib/systemd|"
    r"usr/local/etc/rc\.d|Library/Launch(?:Agents|Daemons))(?:/|$)"
)


_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "strings"})


# Recursive listers of attributes (``ls -R`` and ``tree`` are plain looks, see _rule_recon's awk).
_RECURSIVE_LISTERS = {"getfacl": "R", "lsattr": "R", "xattr": "r"}


_PERMISSION_FILTER = re.compile(r"\$1\s*~\s*/[^/]*[ws]")


# Hidden files and backup copies: where a system-wide hunt finds keys, tokens and old shadows.
_HIDDEN_OR_BACKUP = re.compile(r"^\.\*|^\*?\.(?:bak|old|backup|orig|save|swp)\*?$|~$", re.I)


_OWNER_TESTS = frozenset({"-user", "-uid", "-group", "-gid"})
# The file-name databases: they list every matching file on the machine, any user's included.
_LOCATORS = frozenset({"locate", "plocate", "mlocate", "slocate"})
_KEY_FILE_PATTERN = re.compile(r"(?i)\.\(?(?:pem|key|kdbx|p12|pfx|ppk|jks|keystore|ovpn)\b|\.env\b")


_RECON_NAMES_GATE = (
    frozenset({"awk", "find"})
    | _GREPS
    | frozenset(_RECURSIVE_LISTERS)
    | SHELLS
    | set(INTERPRETERS)
    | _LOCATORS
)


@rule(programs=_RECON_NAMES_GATE, also=("slash",))
def _rule_recon(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Privilege-escalation and credential hunting, and enumeration of the whole system.

    SUID/writable/ownership searches, key and password hunts, recursive listings and content
    searches of ``/``, a system top folder or every home. The same searches inside the project,
    a temp folder or one's own home are ordinary work and stay quiet.
    """
    n = inv.name
    judged = inv.render()
    argv = " ".join((inv.words[0].text, *inv.args))
    low = argv.lower()
    if next(_RECON_HINT_SEARCH(low), None) is not None and _RECON_TOOLS.search(argv):
        yield Hit("cmd.recon", "runs a privilege-escalation enumeration tool", inv.span, judged)
        return
    if n in _GREPS:
        yield from _recon_grep(inv, ctx, judged)
        return
    if n in _LOCATORS:
        for a in inv.args:
            if not a.startswith("-") and (_RECON_NAMES.search(a) or _KEY_FILE_PATTERN.search(a)):
                yield Hit("cmd.recon", f"{n} hunts for credential files ({a})", inv.span, judged)
                return
        return
    if n in _RECURSIVE_LISTERS:
        flags, rest = opts(inv.words[1:])
        recursive = _RECURSIVE_LISTERS[n] in flags or "--recursive" in flags
        for w in rest if recursive else ():
            if secret_root(w.text, ctx.cwd, ctx.env):
                yield Hit("cmd.recon", f"{n} lists all of {w.text} recursively", w.span, judged)
                return
        return
    if n == "awk":
        program = " ".join(inv.args)
        ups = [ctx.invs[i] for i in inv.upstream]
        if _ROOT_UID_FILTER.search(program) and "/etc/passwd" in [
            *inv.args,
            *(a for u in ups for a in u.args),
        ]:
            yield Hit("cmd.recon", "awk lists the root-equivalent accounts", inv.span, judged)
        elif _PERMISSION_FILTER.search(program) and any(
            u.name == "ls" and "R" in opts(u.words[1:])[0]
            and any(system_wide(w.text, ctx.cwd, ctx.env) for w in opts(u.words[1:])[1])
            for u in ups
        ):  # fmt: skip
            yield Hit("cmd.recon", "awk picks writable or setuid entries from a system listing",
                      inv.span, judged)  # fmt: skip
        return
    if n != "find":
        return
    args = inv.args
    roots = ["."]
    for a in args:
        if not a.startswith(("-", "(", "!", "\\")):
            roots = [a]
            break
    # Every test in the loop needs one of the options in _FIND_RECON_TESTS and a wide root or a
    # system root: where the root points is worked out only for a find with such an option.
    if _FIND_RECON_TESTS.isdisjoint(args):
        place, wide, system = Place.PROJECT, False, False
    else:
        place = classify(roots[0], ctx.cwd, ctx.env)
        wide = place in (Place.ROOT, Place.SYSTEM, Place.HOME, Place.VARIABLE) or (
            place is Place.OUTSIDE
        )
        system = secret_root(roots[0], ctx.cwd, ctx.env)
    for i, a in enumerate(args if wide or system else ()):
        if a not in _FIND_RECON_TESTS:
            continue
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a == "-perm" and (_RECON_PERM.match(nxt) or nxt in ("-o", "-g")) and wide:
            yield Hit("cmd.recon", f"find searches for setuid or writable files ({nxt})",
                      inv.span, judged)  # fmt: skip
            return
        if a in ("-readable", "-nouser", "-nogroup") and wide and place is not Place.HOME:
            yield Hit("cmd.recon", f"find {a} over {roots[0]}", inv.span, judged)
            return
        if a in ("-writable",) and wide:
            yield Hit("cmd.recon", "find searches for writable files", inv.span, judged)
            return
        if wide and a in ("-name", "-iname", "-path") and _RECON_NAMES.search(nxt):
            yield Hit("cmd.recon", f"find hunts for credential files ({nxt})", inv.span, judged)
            return
        if not system:
            continue
        if a in _OWNER_TESTS:
            yield Hit("cmd.recon", f"find searches {roots[0]} by owner ({a} {nxt})", inv.span,
                      judged)  # fmt: skip
            return
        if a in ("-name", "-iname", "-path", "-wholename") and _HIDDEN_OR_BACKUP.search(nxt):
            yield Hit("cmd.recon", f"find hunts hidden or backup files ({nxt}) under {roots[0]}",
                      inv.span, judged)  # fmt: skip
            return
        if a in ("-exec", "-execdir") and nxt.rsplit("/", 1)[-1] in _GREPS:
            yield Hit("cmd.recon", f"find searches file contents across {roots[0]}", inv.span,
                      judged)  # fmt: skip
            return
    if _SERVICE_DIRS.match(roots[0]) and _OWNER_TESTS.intersection(args):
        yield Hit("cmd.recon", f"find searches {roots[0]} by owner", inv.span, judged)


_ROOT_UID_FILTER = re.compile(r"\$3\s*==\s*\"?0")


_FIND_RECON_TESTS = frozenset(
    {"-perm", "-readable", "-nouser", "-nogroup", "-writable", "-name", "-iname", "-path",
     "-wholename", "-exec", "-execdir"}
) | _OWNER_TESTS  # fmt: skip


_PASSWORD_WORDS = re.compile(r"(?i)pass|secret|token|api.?key")


def _recon_grep(inv: Invocation, ctx: Context, judged: str) -> Iterator[Hit]:
    """Password hunts in system roots or history; any recursive search of a system root."""
    n = inv.name
    flags, rest = opts(inv.words[1:])
    paths = [w.text for w in rest[1:]] if not ({"e", "f"} & flags) else [w.text for w in rest]
    if _PASSWORD_WORDS.search(" ".join(inv.args)):
        hunted = paths + [
            u.args[0] for u in (ctx.invs[i] for i in inv.upstream) if u.name == "cat" and u.args
        ]
        for p in hunted:
            canon = canonical_for_match(p, ctx.cwd, ctx.env)
            if classify(p, ctx.cwd, ctx.env) is Place.ROOT or HISTORY_FILES.search(canon):
                yield Hit("cmd.recon", f"{n} hunts for passwords in {p}", inv.span, judged)
                return
    recursive = n in ("rg", "ag", "ack") or bool(
        {"r", "R", "--recursive", "--dereference-recursive"} & flags
    )
    if recursive:
        for p in paths:
            if secret_root(p, ctx.cwd, ctx.env):
                yield Hit("cmd.recon", f"{n} searches every file under {p}", inv.span, judged)
                return


# Mail stores and login records: collected for what they say about people, not for the project.
_MAIL_STORES = re.compile(
    r"(?:^|/)(?:var/(?:spool/)?mail(?:/.*)?$|Library/(?:Mail|Messages)(?:/.*)?$|"
    r"\.thunderbird(?:/.*)?$|\.local/share/evolution/mail(?:/.*)?$)"
)


_LOGIN_RECORDS = re.compile(
    r"(?:^|/)var/(?:run|log|adm)/(?:[ubw]|\{[ubw,]+\})tmp(?:\.\d+)?$|(?:^|/)var/log/lastlog$"
)


_ACCOUNT_LISTS = re.compile(r"(?:^|/)etc/(?:passwd|group|master\.passwd)$")


_MAIL_HINTS = ("mail", "messages", "thunderbird", "evolution")


_ARCHIVERS = frozenset({"tar", "bsdtar", "gtar", "zip", "7z", "7za", "7zr", "rar", "cpio", "ditto"})


_CIPHER = re.compile(r"^-?(?:enc|aes|des|bf|camellia|chacha|cast|rc[24]|seed|sm4|aria)", re.I)


_COLLECT_NAMES = _ARCHIVERS | frozenset({"openssl", "gpg", "cp", "cat", "mkdir", "rsync", "mv"})


def _archive_inputs(inv: Invocation) -> tuple[bool, list[Word], bool]:
    """(creates an archive, the files it packs, encrypted with a password) for an archiver."""
    n = inv.name
    words = inv.words[1:]
    texts = [w.text for w in words]
    if n in ("tar", "bsdtar", "gtar"):
        first = texts[0] if texts else ""
        creates = any(
            t in ("--create", "-c") or (t.startswith("-") and not t.startswith("--") and "c" in t)
            for t in texts
        ) or (bool(first) and not first.startswith("-") and "c" in first and len(first) <= 8)
        inputs: list[Word] = []
        skip = False
        for i, w in enumerate(words):
            t = w.text
            if skip:
                skip = False
            elif t in ("-f", "--file", "-C", "--directory", "-T", "--files-from", "-X"):
                skip = True
            elif t.startswith("-") or (i == 0 and not t.startswith("-") and "f" in t and creates
                                       and len(t) <= 8 and "/" not in t):  # fmt: skip
                skip = t.endswith("f") and not t.startswith("--")
            else:
                inputs.append(w)
        return creates, inputs, False
    if n == "zip":
        _, rest = opts([w for w in words if w.text not in ("-P", "--password")])
        password = any(t in ("-e", "--encrypt", "-P", "--password") for t in texts)
        return True, rest[1:], password
    if n in ("7z", "7za", "7zr", "rar"):
        flags, rest = opts(words)
        creates = bool(rest) and rest[0].text in ("a", "u")
        password = any(t.startswith(("-p", "-hp")) for t in texts)
        return creates, rest[2:], password
    if n == "ditto":
        flags, rest = opts(words)
        return "c" in flags, rest[:-1], False
    return False, [], False


@rule(programs=_COLLECT_NAMES)
def _rule_collection(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Data packed or copied for removal: the kind of staging that comes before exfiltration.

    Archives of ``/``, a system top folder, the whole home, login records or mail stores;
    password-protected or encrypted archives of files outside the project; account lists copied
    to a file. Archives and encryption of project files stay quiet.
    """
    n = inv.name
    words = inv.words[1:]
    if not words:
        return
    judged = inv.render()
    flat = " ".join(w.text for w in words) + " " + " ".join(r.target.text for r in inv.redirects)
    if n != "cat" and any(map(flat.lower().__contains__, _MAIL_HINTS)):
        for w in [*words, *(r.target for r in inv.redirects)]:
            if _MAIL_STORES.search(canonical_for_match(w.text, ctx.cwd, ctx.env)):
                yield Hit("cmd.collection", f"{n} copies or changes a mail store ({w.text})",
                          w.span, judged)  # fmt: skip
                return
    if n in _ARCHIVERS:
        creates, inputs, password = _archive_inputs(inv)
        if n == "cpio" and "-o" in inv.args:
            creates = True
            inputs = [w for i in inv.upstream if ctx.invs[i].name == "find"
                      for w in ctx.invs[i].words[1:2]]  # fmt: skip
        if not creates:
            return
        base = cd_before(inv, ctx)
        for w in inputs:
            text = w.text
            if base and not text.startswith(("/", "~", "$")):
                text = posixpath.join(base, text)  # `cd /etc && tar czf - *`
            canon = canonical_for_match(text, ctx.cwd, ctx.env)
            if canon == "~" or system_wide(text, ctx.cwd, ctx.env) or _LOGIN_RECORDS.search(canon):
                yield Hit("cmd.collection", f"{n} packs {text}", w.span, judged)
                return
            if _HOME_CHILD_VARIABLE.fullmatch(canon):  # `$HOME/$USERNAME`: unset packs all home
                yield Hit("cmd.collection", f"{n} packs {text} (the whole home if the variable "
                          "is empty)", w.span, judged)  # fmt: skip
                return
            if password and classify(text, ctx.cwd, ctx.env) in OUTSIDE_PLACES:
                yield Hit("cmd.collection", f"{n} packs {text} under a password", w.span, judged)
                return
        return
    if n in ("openssl", "gpg"):
        args = inv.args
        if n == "openssl":
            encrypts = bool(args) and bool(_CIPHER.match(args[0])) and "-d" not in args
            sources = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-in"]
        else:
            encrypts = any(a in ("-c", "--symmetric", "-e", "--encrypt") for a in args)
            sources = [a for a in args[-1:] if not a.startswith("-")]
        for src in sources if encrypts else ():
            if classify(src, ctx.cwd, ctx.env) in OUTSIDE_PLACES:
                yield Hit("cmd.collection", f"{n} encrypts {src} from outside the project",
                          inv.span, judged)  # fmt: skip
                return
        return
    if n in ("cat", "cp") and ("passwd" in flat or "group" in flat):
        if not any(_ACCOUNT_LISTS.search(a) for a in inv.args):
            return
        copies = n == "cp" or any(r.writes and r.target.text != "/dev/null" for r in inv.redirects)
        if copies:
            yield Hit("cmd.collection", f"{n} copies the account list to a file", inv.span,
                      judged)  # fmt: skip


_HOME_CHILD_VARIABLE = re.compile(r"~/\$(?:\w+|\{\w+\})/?")


_PASSWORD_TOOLS = frozenset(
    {"hydra", "medusa", "ncrack", "patator", "crowbar", "john", "hashcat", "crackmapexec",
     "netexec", "nxc", "kerbrute", "sshpass", "thc-hydra", "ophcrack", "fcrackzip"}
)  # fmt: skip


_PASSWORD_OPTIONS = ("-p", "--password", "--pass")


def _password_values(args: list[str] | tuple[str, ...]) -> list[str]:
    """The values given to ``-p``/``--password`` (``-p PW``, ``-pPW``, ``--password=PW``)."""
    out: list[str] = []
    for i, a in enumerate(args):
        if a in _PASSWORD_OPTIONS:
            if i + 1 < len(args) and args[i + 1]:
                out.append(args[i + 1])
        elif a.startswith("-p") and not a.startswith("--") and len(a) > 2:
            out.append(a[2:])
        elif a.startswith(("--password=", "--pass=")):
            value = a.split("=", 1)[1]
            if value:
                out.append(value)
    return out


@rule(programs=_PASSWORD_TOOLS)
def _rule_password_attack(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Password guessing and cracking tools, and logins whose password is on the command line."""
    if inv.name == "sshpass":
        msg = "sshpass logs in with a password given on the command line or from a list"
    else:
        msg = f"{inv.name} guesses or cracks passwords"
    judged = inv.render()
    # The evidence shows the command, never the password in it (it reaches the audit log).
    values = _password_values(inv.args)
    if values:
        from domestique.keys import mask_preview

        for value in sorted(values, key=len, reverse=True):
            judged = judged.replace(value, mask_preview(value))
    yield Hit("cmd.password_attack", msg, inv.span, judged)


_RECON_HINT_SEARCH = hint_automaton(_RECON_TOOL_HINTS).iter
