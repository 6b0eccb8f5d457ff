"""The guard's rules: unfolded invocations -> hits with reason codes.

Each rule is a small function over one invocation (or the whole command line, for rules that
combine parts: exfiltration, credential flows, saved-then-executed downloads). The examples each
reason code must fire on and stay quiet on live in ``domestique.guard.examples`` and the test
suite runs every one of them. Vocabularies the rules share with other modules live beside them:
credential printers and provider hosts in ``flows``, package sources in ``supply``, PowerShell in
``pwsh``, interpreter code in ``interp``, ``pyast`` and ``jsast``.
"""

from __future__ import annotations

import operator
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ahocorasick

from domestique.guard import flows, supply
from domestique.guard.model import Hit, Invocation, Span, Word
from domestique.guard.paths import (
    ACCOUNT_FILES,
    CREDENTIAL_FILES,
    HISTORY_FILES,
    PERSISTENCE_FILES,
    SENSITIVE_FILES,
    Place,
    canonical_for_match,
    classify,
    guard_paths,
    normalize,
)
from domestique.guard.unfold import ENV_CLEARED, INTERPRETERS, SHELLS, WRAPPERS, Unfolded

DOWNLOADERS = frozenset(
    {
        "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "xhs", "lwp-download",
        "lwp-request", "get", "axel", "curlie", "httpie", "tftp", "ftp", "wget2", "lynx",
        "links", "w3m", "elinks", "invoke-webrequest", "iwr", "certutil", "nscurl",
    }
)  # fmt: skip
RAW_NETWORK = frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "cryptcat", "pwncat", "sbd", "gsocket", "gs-netcat"}
)
NETWORK = (
    DOWNLOADERS
    | RAW_NETWORK
    | frozenset(
        {
            "ssh", "scp", "sftp", "rsync", "dig", "nslookup", "host", "drill", "ping", "mail",
            "mailx", "sendmail", "mutt", "smbclient", "rclone", "gsutil", "s3cmd", "nmap",
            "whois", "ldapsearch", "mosquitto_pub", "openssl", "gh", "aws", "az", "gcloud",
            "kubectl", "docker", "git", "npm", "pip", "twine", "ngrok", "cloudflared", "irc",
        }
    )
)  # fmt: skip
DECODERS = frozenset(
    {
        "base64", "base32", "basenc", "xxd", "openssl", "gzip", "gunzip", "zcat", "bzip2",
        "bunzip2", "bzcat", "xz", "unxz", "xzcat", "zstd", "unzstd", "zstdcat", "lz4", "uudecode",
        "rev", "tr", "printf", "echo", "od", "gpg", "perl", "python", "ruby", "node", "php",
        "awk", "sed", "iconv", "recode", "uncompress", "lzma", "unlzma", "b64decode",
    }
)  # fmt: skip
# Programs that only look at a path; a credential or settings path in them is not a read/write.
LOOK_ONLY = frozenset(
    {
        "ls", "stat", "test", "[", "[[", "file", "chmod", "chown", "realpath", "readlink",
        "dirname", "basename", "which", "type", "du", "wc", "ssh", "ssh-add", "ssh-keygen",
        "ssh-copy-id", "echo", "printf", "touch", "mkdir", "namei", "lsattr", "getfacl",
    }
)  # fmt: skip
READ_ONLY = LOOK_ONLY | frozenset(
    {
        "cat", "less", "more", "head", "tail", "grep", "rg", "ag", "jq", "yq", "diff", "cmp",
        "md5sum", "sha1sum", "sha256sum", "shasum", "bat", "view", "nl", "od", "hexdump", "xxd",
        "strings", "find", "tree", "git", "code", "cursor", "python", "node", "wc", "sort",
        "uniq", "cut", "awk", "column", "fold", "source", ".",
    }
)  # fmt: skip
PROTECTED_BRANCHES = re.compile(
    r"^(?:refs/heads/)?(?:main|master|trunk|develop|development|dev|prod|production|stable|"
    r"release(?:[/-].*)?|releases/.*|hotfix/.*|gh-pages|HEAD)$"
)
SECURITY_UNITS = re.compile(
    r"(?i)(?:apparmor|auditd?|firewalld|ufw|selinux|falcon|crowdstrike|osquery|clamav|clamd|"
    r"freshclam|sysmon|wazuh|ossec|aide|fail2ban|sentinel|carbonblack|cbagent|cylance|eset|"
    r"sophos|mdatp|defender|rsyslog|syslog|journald|snort|suricata|tripwire|lynis|xagt|"
    r"elastic-agent|filebeat|auditbeat|splunk|qualys|tanium|cb-?psc|endpoint|xprotect|"
    r"com\.apple\.(?:alf|security|syspolicy|xprotect|mrt))"
)
_SETGID_MODE = re.compile(r"^(?:[gugoa]*\+[rwxXt]*s[rwxXt]*|0?[2-3][0-7]{3})$")
_WORLD_WRITABLE = re.compile(r"^(?:0?[0-7]?[0-7][0-7][2367]|[ugoa]*[+=][rwxXst]*w[rwxXst]*)$")
_SETUID_MODE = re.compile(r"^(?:[ua]*\+[rwxXt]*s[rwxXt]*|0?[4-7][0-7]{3})$")
_DISK = re.compile(
    r"^/dev/(?:[shv]d[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d|mapper/|loop\d|"
    r"sr\d|fd\d|root|block/|mem$|kmem$|port$|nbd\d|zd\d|sg\d)"
)


@dataclass(slots=True)
class Context:
    """Facts about the whole command line the per-invocation rules share."""

    cwd: str | None
    guard_re: re.Pattern[str]
    invs: list[Invocation]
    egress: list[int]
    cred_reads: list[tuple[int, Word]]
    index: dict[int, int]  # id(invocation) -> its position (filled on first use: _position)


def _position(ctx: Context, inv: Invocation) -> int:
    """The position of ``inv`` in the command line."""
    index = ctx.index
    if not index:
        index.update((id(v), i) for i, v in enumerate(ctx.invs))
    return index[id(inv)]


def _span_of(*spans: Span) -> Span:
    return (min(s[0] for s in spans), max(s[1] for s in spans))


def _opts(words: list[Word]) -> tuple[set[str], list[Word]]:
    """Short flags (split: -rf -> r, f), long options, and the other words."""
    flags: set[str] = set()
    rest: list[Word] = []
    done = False
    for w in words:
        t = w.text
        if done or not t.startswith("-") or t == "-":
            rest.append(w)
        elif t == "--":
            done = True
        elif t.startswith("--"):
            flags.add(t)
        else:
            flags.update(t[1:])
            flags.add(t)
    return flags, rest


def is_egress(inv: Invocation) -> bool:
    """Does this invocation reach the network?"""
    n = inv.name
    if inv.code_network:
        return True
    if inv.redirects and any(
        "/dev/tcp/" in r.target.text or "/dev/udp/" in r.target.text for r in inv.redirects
    ):
        return True
    if n not in NETWORK:
        return False
    args = inv.args
    if n == "git":
        return any(a in ("push", "clone", "fetch", "pull", "ls-remote", "send-email") for a in args)
    if n == "docker":
        return any(a in ("push", "login", "run", "pull") for a in args)
    if n in ("npm", "pip", "twine"):
        return any(a in ("publish", "upload", "install", "login", "adduser") for a in args)
    if n == "aws":
        return True
    if n == "rsync":
        return any(":" in a for a in args)
    if n == "openssl":
        return any(a in ("s_client", "s_server") for a in args)
    if n == "kubectl":
        return any(a in ("cp", "exec", "apply", "create") for a in args)
    return True


def _downloads(inv: Invocation) -> bool:
    if inv.name in DOWNLOADERS:
        return not {"-I", "--head", "--version", "-V"} & set(inv.args)
    if inv.name in ("git",) and "archive" in inv.args:
        return any(a.startswith("--remote") for a in inv.args)
    return inv.code_network and inv.name in INTERPRETERS


def _decodes(inv: Invocation) -> bool:
    n, args = inv.name, inv.args
    if n not in DECODERS:
        return False
    if n in ("base64", "base32", "basenc", "uudecode"):
        return bool({"-d", "--decode", "-D"} & set(args)) or any(
            a.startswith("-") and not a.startswith("--") and "d" in a for a in args
        )
    if n == "xxd":
        return any(a.startswith("-r") for a in args)
    if n == "openssl":
        return "-d" in args or "-base64" in args or "base64" in args or "enc" in args
    if n in ("gzip", "bzip2", "xz", "zstd", "lz4", "lzma"):
        return any(a in ("-d", "--decompress", "-dc", "-cd") for a in args)
    if n in ("echo", "printf"):
        return any(not w.literal for w in inv.words) or any("\\x" in a or "\\0" in a for a in args)
    if n in ("tr", "rev", "gunzip", "zcat", "bzcat", "bunzip2", "unxz", "xzcat", "unzstd"):
        return True
    if n in ("zstdcat", "iconv", "recode", "uncompress", "unlzma", "od", "gpg", "b64decode"):
        return True
    return n in ("perl", "python", "ruby", "node", "php", "awk", "sed")


def _saved_paths(inv: Invocation) -> list[str]:
    """Files a download or decode writes (-o/-O, > file, wget's default name)."""
    out = [r.target.text for r in inv.redirects if r.writes and r.fd in ("", "1")]
    words = inv.words
    urls = [w.text for w in words[1:] if _URL_START.match(w.text)]
    for i, w in enumerate(words[1:], start=1):
        t = w.text
        nxt = words[i + 1].text if i + 1 < len(words) else ""
        if t in ("-o", "--output", "-O", "--output-document") and nxt and nxt != "-":
            if not (inv.name == "curl" and t == "-O"):
                out.append(nxt)
        elif t.startswith(("--output=", "--output-document=")):
            out.append(t.split("=", 1)[1])
        elif t.startswith("-o") and len(t) > 2 and inv.name == "curl":
            out.append(t[2:])
        elif (
            inv.name == "curl"
            and t.startswith("-")
            and not t.startswith("--")
            and t.endswith("o")
            and nxt
            and nxt != "-"
        ):
            out.append(nxt)  # -Lo FILE, -sSLo FILE
    curl_remote_name = inv.name == "curl" and any(
        a == "--remote-name" or (a.startswith("-") and not a.startswith("--") and "O" in a)
        for a in inv.args
    )
    default_named = inv.name in ("wget", "wget2", "aria2c", "axel")
    if inv.name == "aria2c":  # -d DIR: the folder the files go to
        folder = [inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a in ("-d", "--dir")]
        if folder:
            names = [p for p in out if "/" not in p] or [
                posixpath.basename(u.split("?", 1)[0]) for u in urls
            ]
            out += [posixpath.join(folder[-1], p) for p in names]
    named = ("-O", "-qO-", "-O-", "-o") if inv.name in ("aria2c", "axel") else ("-O", "-qO-", "-O-")
    if (default_named and not any(a in named for a in inv.args)) or (curl_remote_name):
        out += [posixpath.basename(u.split("?", 1)[0]) or "index.html" for u in urls]
    return [_key(p) for p in out if p]


_URL_START = re.compile(r"(?i)^(?:https?|ftp)://")


def _key(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    return posixpath.basename(p) if "/" not in p.lstrip("/") else p


def _executed_paths(inv: Invocation) -> list[Word]:
    """Files an invocation runs as code."""
    n = inv.name
    words = inv.words
    if not words:
        return []
    if "/" in words[0].text and n not in ("[",):
        return [words[0]]
    if n in ("source", ".") and len(words) > 1:
        return [words[1]]
    if n in SHELLS or n in INTERPRETERS:
        _, rest = _opts(words[1:])
        if any(w.text in ("-c", "-e", "-E", "-r") for w in words[1:]):
            return []
        return rest[:1]
    return []


# ------------------------------------------------------------------------ per-invocation rules


# Download caches in home that package managers rebuild by themselves.
_HOME_CACHES = re.compile(
    r"^~/(?:\.cache(?:/[^/]+)*|\.npm/_(?:cacache|npx|logs)|\.cargo/registry/(?:cache|src)|"
    r"\.gradle/caches|\.m2/repository|Library/Caches/[^/]+|\.pnpm-store|\.yarn/cache|"
    r"go/pkg/mod/cache|\.bun/install/cache|\.nuget/packages|\.composer/cache)/?$"
)
# Project folders and files that hold build output (nothing written by hand).
_OUTPUT_DIRS = frozenset(
    {"dist", "build", "target", "out", "release", "releases", "artifacts", "artefacts",
     "_build", "_site", "wheelhouse", "output"}
)  # fmt: skip
_ARTEFACT = re.compile(
    r"(?i)\.(?:tar\.gz|tgz|tar\.xz|tar\.bz2|zip|whl|jar|war|ear|deb|rpm|apk|dmg|msi|exe|"
    r"appimage|nupkg|gem|crate|img|iso)$"
)


def _build_output(path: str, cwd: str | None) -> bool:
    """Is ``path`` build output inside the project (``dist/x.whl``, ``target/release/app``)?"""
    if ".." in path.split("/") or classify(path, cwd) is not Place.PROJECT:
        return False
    if SENSITIVE_FILES.search(path) or CREDENTIAL_FILES.search(path):
        return False
    first = path.lstrip("./").split("/", 1)[0]
    return first in _OUTPUT_DIRS or bool(_ARTEFACT.search(path))


def _rule_rm(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    if n not in ("rm", "unlink", "shred", "srm", "trash", "rmdir", "wipe"):
        return
    flags, targets = _opts(inv.words[1:])
    recursive = bool({"r", "R", "--recursive"} & flags) or n in ("srm", "wipe")
    judged = inv.render()
    if "--no-preserve-root" in flags:
        yield Hit("cmd.destructive.rm_root", "rm --no-preserve-root", inv.span, judged)
    if n == "rmdir":
        return
    if n == "shred" and not ({"u", "--remove"} & flags):
        for t in targets:
            if classify(t.text, ctx.cwd) in (Place.DEVICE,) and _DISK.match(t.text):
                yield Hit("cmd.device_write", "shred overwrites a disk device", t.span, judged)
        return
    base = _cd_before(inv, ctx) if ctx.invs[0] is not inv else None
    for t in targets:
        place = classify(t.text, ctx.cwd)
        if base is not None and place is Place.PROJECT_ROOT:
            # `cd ~ && rm -rf .`: the folder the line went to, not the working folder
            moved = classify(posixpath.normpath(posixpath.join(normalize(base), t.text)), ctx.cwd)
            place = moved if moved is not Place.VARIABLE else place
        if not t.literal and place not in (Place.ROOT, Place.HOME, Place.TEMP, Place.PROJECT):
            place = Place.VARIABLE if t.text.startswith("$") else place
        if place is Place.ROOT:
            if recursive or t.text.rstrip("/*") in ("", "~"):
                yield Hit(
                    "cmd.destructive.rm_root", f"deletes {t.text} recursively", t.span, judged
                )
            else:
                yield Hit("cmd.destructive.rm_outside", f"deletes {t.text}", t.span, judged)
        elif place is Place.HOME and _HOME_CACHES.match(canonical_for_match(t.text, ctx.cwd)):
            continue  # a package manager's download cache: rebuilt on the next install
        elif place in (Place.SYSTEM, Place.HOME, Place.OUTSIDE):
            yield Hit(
                "cmd.destructive.rm_outside",
                f"deletes {t.text} outside the project",
                t.span,
                judged,
            )
        elif place is Place.DEVICE:
            if _DISK.match(t.text):
                yield Hit("cmd.device_write", f"deletes device {t.text}", t.span, judged)
        elif place is Place.VARIABLE and recursive:
            yield Hit(
                "cmd.destructive.rm_variable",
                f"deletes {t.text}: the variable may be empty or anywhere",
                t.span,
                judged,
            )
        elif place is Place.PROJECT_ROOT and recursive:
            yield Hit(
                "cmd.destructive.rm_project",
                f"deletes the whole working folder ({t.text})",
                t.span,
                judged,
            )


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _rule_find(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    if inv.name != "find":
        return
    args = inv.args
    deleting = "-delete" in args or (
        not _FIND_EXEC.isdisjoint(args)
        and any(
            a in _FIND_EXEC and i + 1 < len(args)
            and args[i + 1].rsplit("/", 1)[-1] in ("rm", "shred", "unlink")
            for i, a in enumerate(args)
        )
    )  # fmt: skip
    if not deleting:
        return
    roots = [w for w in inv.words[1:] if not w.text.startswith(("-", "(", "!"))][:1]
    base = _cd_before(inv, ctx) if ctx.invs[0] is not inv else None
    for r in roots or [Word(".", True, inv.span)]:
        place = classify(r.text, ctx.cwd)
        if base is not None and place in (Place.PROJECT_ROOT, Place.PROJECT):
            # `cd ~ && find . -delete`: under the folder the line went to
            moved = classify(posixpath.normpath(posixpath.join(normalize(base), r.text)), ctx.cwd)
            place = moved if moved is not Place.VARIABLE else place
        if r.text.rstrip("/") in _TEMP_TOPS:
            continue  # old files under /tmp: the scratch space `rm -rf /tmp/*` may clear too
        if place is Place.ROOT:
            yield Hit(
                "cmd.destructive.find_delete",
                f"find deletes under {r.text}",
                r.span,
                inv.render(),
            )
        elif place in (Place.SYSTEM, Place.HOME, Place.OUTSIDE):
            yield Hit("cmd.destructive.rm_outside", f"find deletes under {r.text}", r.span,
                      inv.render())  # fmt: skip
        elif place is Place.VARIABLE:
            yield Hit("cmd.destructive.rm_variable", f"find deletes under {r.text}", r.span,
                      inv.render())  # fmt: skip


_GIT_GLOBAL_ARG = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}
_GIT_EXEC_KEYS = re.compile(
    r"(?i)^(?:alias\.[^=]+=\s*!|core\.(?:pager|sshcommand|fsmonitor|hookspath|editor|askpass|"
    r"gitproxy)|sequence\.editor|diff\.external|diff\.[^.]+\.(?:textconv|command)|"
    r"filter\.[^.]+\.(?:clean|smudge|process)|credential\.helper=\s*!|gpg\.(?:[^.]+\.)?program|"
    r"uploadpack\.packobjectshook|merge\.[^.]+\.driver|pager\.[^=]+|protocol\.ext\.allow|"
    r"remote\.[^.]+\.(?:uploadpack|receivepack)|url\.[^.]+\.insteadof)"
)


_GIT_TLS_KEY = re.compile(r"(?i)^http\.(?:.+\.)?sslverify$")


def _git_split(words: list[Word]) -> tuple[list[tuple[str, Span]], list[Word]]:
    configs: list[tuple[str, Span]] = []
    i = 1
    while i < len(words):
        t = words[i].text
        if t == "-c" and i + 1 < len(words):
            configs.append((words[i + 1].text, words[i + 1].span))
            i += 2
        elif t in _GIT_GLOBAL_ARG:
            i += 2
        elif t.startswith("-"):
            i += 1
        else:
            break
    return configs, words[i:]


def _rule_git(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    if inv.name != "git":
        return
    judged = inv.render()
    configs, rest = _git_split(inv.words)
    for value, span in configs:
        if _GIT_EXEC_KEYS.match(value):
            yield Hit("cmd.git.config_exec", f"git -c {value.split('=')[0]} runs a program", span,
                      judged)  # fmt: skip
    for k, v in inv.env.items():
        if k in (
            "GIT_SSH_COMMAND",
            "GIT_SSH",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
            "GIT_EDITOR",
            "GIT_ASKPASS",
            "GIT_PROXY_COMMAND",
            "PAGER",
        ) and v not in ("cat", "less", ""):
            yield Hit("cmd.git.config_exec", f"{k} makes git run {v[:40]}", inv.span, judged)
    if not rest:
        return
    sub = rest[0].text
    args = [w.text for w in rest[1:]]
    for value, span in configs:
        key, _, val = value.partition("=")
        if _GIT_TLS_KEY.match(key) and val.lower() in ("false", "0", "no", "off"):
            yield Hit("cmd.tls_off", f"git -c {key}={val} turns certificate checks off", span,
                      judged)  # fmt: skip
    if sub == "config":
        positional = [a for a in args if not a.startswith("-")]
        if positional:
            key = positional[0]
            value = positional[1] if len(positional) > 1 else ""
            if _GIT_TLS_KEY.match(key) and value.lower() in ("false", "0", "no", "off"):
                yield Hit("cmd.tls_off", f"git config {key} {value} turns certificate checks off",
                          inv.span, judged)  # fmt: skip
            runs = _GIT_EXEC_KEYS.match(f"{key}={value}") or _GIT_EXEC_KEYS.match(key)
            if runs and (len(positional) > 1 or "--add" in args):
                yield Hit("cmd.git.config_exec", f"git config {key} runs a program",
                              inv.span, judged)  # fmt: skip
            if key.lower().startswith("alias.") and re.search(
                r"push\s.*(?:-f\b|--force|--mirror|\+)", value
            ):
                yield Hit("cmd.git.force_push", f"alias {key} force-pushes", inv.span, judged)
        return
    if sub == "push":
        yield from _git_push(inv, rest, judged)
    elif sub == "reset" and ("--hard" in args or "--merge" in args):
        yield Hit("cmd.destructive.git_discard", "git reset --hard discards work", inv.span, judged)
    elif sub == "clean":
        flags, paths = _opts(rest[1:])
        # -X removes only ignored files (build output); a pathspec of build folders is the same
        only_output = "X" in flags or (
            bool(paths) and all(_build_output(p.text, ctx.cwd) for p in paths)
        )
        if (
            ("f" in flags or "--force" in flags)
            and not ({"n", "--dry-run"} & flags)
            and not only_output
        ):
            yield Hit("cmd.destructive.git_discard", "git clean -f deletes untracked files",
                      inv.span, judged)  # fmt: skip
    elif sub == "stash" and args[:1] and args[0] in ("drop", "clear"):
        yield Hit("cmd.destructive.git_discard", f"git stash {args[0]}", inv.span, judged)
    elif sub == "branch" and any(
        a in ("-D", "--delete --force")
        or (a.startswith("-") and not a.startswith("--") and "D" in a)
        for a in args
    ):
        yield Hit("cmd.destructive.git_discard", "git branch -D deletes unmerged work",
                  inv.span, judged)  # fmt: skip
    elif sub in ("checkout", "restore") and (
        ("--" in args and sub == "checkout" and args[args.index("--") + 1 :])
        or (sub == "checkout" and args in (["."], ["--", "."], ["-f"], ["--force"]))
        or (sub == "restore" and "--staged" not in args and "-S" not in args and args)
        or (sub == "checkout" and ("-f" in args or "--force" in args))
    ):
        yield Hit("cmd.destructive.git_discard", f"git {sub} discards uncommitted changes",
                  inv.span, judged)  # fmt: skip
    elif sub in ("reflog",) and "expire" in args and any("now" in a or "all" in a for a in args):
        yield Hit("cmd.destructive.git_discard", "git reflog expire drops history", inv.span,
                  judged)  # fmt: skip
    elif sub in ("filter-branch", "filter-repo"):
        yield Hit("cmd.destructive.git_discard", f"git {sub} rewrites history", inv.span, judged)
    elif sub == "update-ref" and "-d" in args:
        yield Hit("cmd.destructive.git_discard", "git update-ref -d", inv.span, judged)


def _git_push(inv: Invocation, rest: list[Word], judged: str) -> Iterator[Hit]:
    force = False
    mirror = False
    delete = False
    all_refs = False
    positional: list[Word] = []
    skip = False
    for w in rest[1:]:
        t = w.text
        if skip:
            skip = False
            continue
        if t in ("--repo", "-o", "--push-option", "--receive-pack", "--exec"):
            skip = True
        elif (
            t.startswith("--force")
            or t == "-f"
            or (t.startswith("-") and not t.startswith("--") and "f" in t[1:])
        ):
            force = True
        elif t == "--mirror":
            mirror = True
        elif t in ("--delete", "-d"):
            delete = True
        elif t in ("--all", "--branches"):
            all_refs = True
        elif t == "--prune":
            delete = True
        elif not t.startswith("-"):
            positional.append(w)
    if mirror:
        yield Hit("cmd.git.force_push", "git push --mirror overwrites every ref", inv.span, judged)
        return
    refspecs = positional[1:]
    if not refspecs:
        if force and not delete:
            yield Hit(
                "cmd.git.force_push",
                "git push --force of the current branch" + (" (all branches)" if all_refs else ""),
                inv.span,
                judged,
            )
        elif delete and all_refs:
            yield Hit("cmd.git.force_push", "git push --prune deletes remote branches", inv.span,
                      judged)  # fmt: skip
        return
    for r in refspecs:
        spec = r.text
        plus = spec.startswith("+")
        spec = spec.lstrip("+")
        dst = spec.split(":", 1)[1] if ":" in spec else spec
        src = spec.split(":", 1)[0] if ":" in spec else spec
        deleting = delete or (":" in spec and src == "")
        protected = bool(PROTECTED_BRANCHES.match(dst)) or not r.literal
        if (force or plus) and protected:
            yield Hit("cmd.git.force_push", f"force push to {dst or spec}", r.span, judged)
        elif deleting and protected:
            yield Hit("cmd.git.force_push", f"deletes protected branch {dst}", r.span, judged)


def _rule_device(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    judged = inv.render()
    for r in inv.redirects:
        if r.writes and _DISK.match(r.target.text):
            yield Hit("cmd.device_write", f"writes to {r.target.text}", r.target.span, judged)
        elif r.writes and r.target.text in ("/proc/sysrq-trigger",):
            yield Hit("cmd.destructive.shutdown", "sysrq trigger", r.target.span, judged)
    if n == "dd":
        for w in inv.words[1:]:
            if w.text.startswith("of=") and _DISK.match(w.text[3:]):
                yield Hit("cmd.device_write", f"dd writes to {w.text[3:]}", w.span, judged)
    elif n.startswith(("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "newfs")) or n in (
        "wipefs", "blkdiscard", "sgdisk", "zpool", "mdadm", "cryptsetup", "badblocks",
    ):  # fmt: skip
        if n == "zpool" and not {"create", "destroy", "labelclear"} & set(inv.args):
            return
        if n == "cryptsetup" and not {"luksFormat", "erase", "luksErase"} & set(inv.args):
            return
        if n == "badblocks" and not {"-w"} & set(inv.args):
            return
        if n == "mdadm" and not {"--create", "-C", "--zero-superblock"} & set(inv.args):
            return
        if n == "sgdisk" and not any(
            a.startswith(("-o", "-Z", "-z", "--zap", "--clear", "-n", "-d")) for a in inv.args
        ):
            return
        yield Hit("cmd.device_write", f"{n} writes a file system or wipes a disk", inv.span,
                  judged)  # fmt: skip
    elif n in ("fdisk", "sfdisk", "parted", "gdisk", "cfdisk"):
        if not ({"-l", "--list", "print", "-s"} & set(inv.args)):
            yield Hit("cmd.device_write", f"{n} repartitions a disk", inv.span, judged)
    elif n == "diskutil" and {
        "eraseDisk", "eraseVolume", "partitionDisk", "zeroDisk", "randomDisk", "secureErase",
        "reformat",
    } & set(inv.args):  # fmt: skip
        yield Hit("cmd.device_write", "diskutil erases a disk", inv.span, judged)
    elif n in ("cp", "cat", "tee", "mv", "pv") and any(_DISK.match(a) for a in inv.args[-1:]):
        yield Hit("cmd.device_write", f"{n} writes to a disk device", inv.span, judged)
    elif n == "mv" and inv.args[-1:] == ["/dev/null"]:
        yield Hit("cmd.destructive.rm_outside", "mv to /dev/null deletes", inv.span, judged)


def _rule_net_shell(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    judged = inv.render()
    args = inv.args
    if n in ("nc", "ncat", "netcat", "cryptcat", "pwncat", "sbd"):
        flags, _ = _opts(inv.words[1:])
        if ("l" in flags or "--listen" in flags) and not (
            {"e", "c", "--exec", "--sh-exec", "--lua-exec"} & flags
        ):
            yield Hit("cmd.remote_access", f"{n} listens for connections", inv.span, judged)
        execs = any(a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in args) or (
            "e" in flags or "c" in flags
        )
        if execs:
            listen = "l" in flags or "--listen" in flags
            yield Hit(
                "cmd.bind_shell" if listen else "cmd.reverse_shell",
                f"{n} runs a program for the connection",
                inv.span,
                judged,
            )
    elif n == "socat":
        joined = " ".join(args).lower()
        if re.search(r"\b(?:exec|system):", joined):
            listen = "listen" in joined
            yield Hit("cmd.bind_shell" if listen else "cmd.reverse_shell",
                      "socat connects a program to a socket", inv.span, judged)  # fmt: skip
    net_redirect = [
        r for r in inv.redirects if "/dev/tcp/" in r.target.text or "/dev/udp/" in r.target.text
    ]
    if net_redirect and (n in SHELLS or n in ("exec", "cat", "sh") or inv.name in INTERPRETERS):
        yield Hit(
            "cmd.reverse_shell",
            "a shell's input or output is a network socket",
            net_redirect[0].target.span,
            judged,
        )
    if n in ("xterm",) and "-display" in args:
        yield Hit("cmd.reverse_shell", "xterm sends a terminal to a remote display", inv.span,
                  judged)  # fmt: skip


def _rule_writes(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Persistence, account, history and guard files written, moved, linked or deleted."""
    n = inv.name
    args = inv.args
    redirected: list[Word] = [r.target for r in inv.redirects if r.writes] if inv.redirects else []
    targets = list(redirected)
    modifies = n not in READ_ONLY or n in _CREATES
    if modifies:
        targets += [w for w in inv.words[1:] if not w.text.startswith("-") or "=" in w.text]
    if n == "find" and ("-delete" in args or any(map(_ENDS_RM, args))):
        targets += inv.words[1:2]
    if not targets and n != "ln":
        return  # nothing written (most finds and other read-only commands)
    judged = inv.render()
    seen: set[str] = set()
    for t in targets:
        if not t.text or not ("/" in t.text or t.text[0] in ".~$" or "=" in t.text):
            continue  # no path that could name a start-up, account, history or guard file
        via_redirect = bool(redirected) and any(t is r for r in redirected)
        text = t.text.split("=", 1)[1] if t.text.startswith(("of=", "--output=")) else t.text
        path = canonical_for_match(text, ctx.cwd)
        if path in seen:
            continue
        seen.add(path)
        guard, persistence, account, history = _path_marks(path, ctx.guard_re)
        if guard:
            yield Hit("cmd.guard_tamper", f"{n} changes {text}", t.span, judged)
        if n in ("cat", "grep", "ls") and not via_redirect:
            continue
        if persistence and n not in ("rm", "unlink", "shred"):
            yield Hit("cmd.persistence", f"{n} writes start-up file {text}", t.span, judged)
        elif account and n not in ("cat",):
            yield Hit("cmd.privilege.accounts", f"{n} changes {text}", t.span, judged)
        elif history and (
            (via_redirect and n != "tee" and not _appends(inv, t))
            or n in _WIPERS
            or (n in ("cp", "mv", "ln", "install") and t is targets[-1] and not via_redirect)
            or (n == "dd" and t.text.startswith("of="))
            or (n in ("sed", "perl") and any(a.startswith("-i") for a in args))
        ):
            yield Hit("cmd.history_wipe", f"{n} changes history or logs ({text})", t.span, judged)
    if n in ("ln",) and args and args[0] in ("-s", "-sf", "-fs") and len(args) >= 3:
        dest = canonical_for_match(args[-1], ctx.cwd)
        if args[-2] == "/dev/null" and HISTORY_FILES.search(dest):
            yield Hit("cmd.history_wipe", "history linked to /dev/null", inv.span, judged)


_ENDS_RM = operator.methodcaller("endswith", "rm")
_PATH_MARKS: dict[tuple[str, str], tuple[bool, bool, bool, bool]] = {}


def _path_marks(path: str, guard_re: re.Pattern[str]) -> tuple[bool, bool, bool, bool]:
    """(guard file, start-up file, account file, history or log) for a canonical path.

    Cached (bounded): a pure function of the path and the guard pattern, and paths repeat. The
    key holds the pattern's text, not the pattern (hashing a compiled pattern hashes its code).
    """
    key = (path, guard_re.pattern)
    marks = _PATH_MARKS.get(key)
    if marks is None:
        marks = (
            guard_re.search(path) is not None,
            PERSISTENCE_FILES.search(path) is not None,
            ACCOUNT_FILES.search(path) is not None,
            HISTORY_FILES.search(path) is not None,
        )
        if len(_PATH_MARKS) >= 4096:
            _PATH_MARKS.clear()
        _PATH_MARKS[key] = marks
    return marks


_WIPERS = frozenset({"rm", "unlink", "shred", "truncate", "srm", "wipe", "mv"})
_CREATES = frozenset({"touch", "mkdir"})  # look-only for reads, but they create files


def _rule_move_root(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``mv ~ /tmp/x``: home or a system root moved away is gone from where it was."""
    words = inv.words[1:]
    target_given = False
    sources: list[Word] = []
    skip = False
    for i, w in enumerate(words):
        t = w.text
        if skip:
            skip = False
        elif t in ("-t", "--target-directory", "-S", "--suffix"):
            target_given = target_given or t in ("-t", "--target-directory")
            skip = True
        elif t.startswith("--target-directory="):
            target_given = True
        elif not t.startswith("-") or t == "-":
            sources.append(w)
        elif t == "--":
            sources += words[i + 1 :]
            break
    if not target_given:
        sources = sources[:-1]
    for w in sources:
        if classify(w.text, ctx.cwd) is Place.ROOT and w.text.rstrip("/*") not in ("", "."):
            yield Hit("cmd.destructive.rm_root", f"mv moves {w.text} away", w.span, inv.render())
            return


def _rule_chown_root(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``chown root …``: files handed to root (a step towards setuid tricks)."""
    _, rest = _opts(inv.words[1:])
    if len(rest) >= 2 and rest[0].text.split(":", 1)[0].split(".", 1)[0] in ("root", "0"):
        yield Hit("cmd.privilege.permissions", f"{inv.name} gives files to root", inv.span,
                  inv.render())  # fmt: skip


_REMOTE_PATH = re.compile(r"^(?:[\w.+-]+@)?[\w.-]+:(?!//)")
_UPLOAD_FLAGS = frozenset({"-T", "--upload-file", "--post-file", "--body-file"})


def _rule_file_transfer(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Local files sent to another host: scp/rsync/sftp uploads, wget --post-file."""
    n = inv.name
    words = inv.words
    if n in ("scp", "rsync"):
        _, rest = _opts(words[1:])
        paths = [w.text for w in rest]
        local = [p for p in paths[:-1] if not _REMOTE_PATH.match(p)]
        if (
            len(paths) >= 2
            and _REMOTE_PATH.match(paths[-1])
            and local
            and not all(_build_output(p, ctx.cwd) for p in local)  # a deploy of build output
        ):
            yield Hit("cmd.file_transfer", f"{n} copies local files to {paths[-1].split(':')[0]}",
                      inv.span, inv.render())  # fmt: skip
        return
    if n == "sftp":
        if inv.stdin_text and re.search(r"(?m)^\s*(?:put|reput|mput)\b", inv.stdin_text):
            yield Hit("cmd.file_transfer", "sftp uploads files", inv.span, inv.render())
        return
    for i, w in enumerate(words[1:], start=1):
        t = w.text
        nxt = words[i + 1].text if i + 1 < len(words) else ""
        flag, _, value = t.partition("=")
        if flag in _UPLOAD_FLAGS and (value or nxt) not in ("", "-"):
            yield Hit("cmd.file_transfer", f"{n} {flag} sends a file", w.span, inv.render())
            return
        if (t in ("-F", "--form") and "=@" in nxt) or (t.startswith("--form=") and "=@" in t):
            yield Hit("cmd.file_transfer", f"{n} posts a file ({nxt or t})", w.span, inv.render())
            return


_PRIVILEGED_VIA = frozenset({"sudo", "doas", "su", "pkexec", "run0", "runuser"})
_TEMP_EXEC = ("/tmp/", "/var/tmp/", "/dev/shm/", "/private/tmp/", "$TMPDIR/")  # noqa: S108 - matched, never opened


def _rule_privileged(ctx: Context) -> Iterator[Hit]:
    """sudo and friends: the agent asks for root. Programs run straight from a temp folder."""
    said = False
    for inv in ctx.invs:
        if not said and not _PRIVILEGED_VIA.isdisjoint(inv.via):
            said = True
            yield Hit("cmd.privilege.sudo", f"{inv.name} runs with raised privileges", inv.span,
                      inv.render())  # fmt: skip
        if inv.words and inv.words[0].text.startswith(_TEMP_EXEC):
            yield Hit("cmd.temp_exec", f"runs {inv.words[0].text} from a temp folder", inv.span,
                      inv.render())  # fmt: skip


def _appends(inv: Invocation, target: Word) -> bool:
    return any(r.target is target and r.op == ">>" for r in inv.redirects)


def _rule_commands(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Commands whose name and arguments alone say what they do.

    Every branch that matches fires (``unset HISTFILE DOMESTIQUE_HOME`` is both a history wipe
    and guard tampering): the branches are independent tests, not a first-match chain.
    """
    n = inv.name
    args = inv.args
    a = set(args)
    judged = inv.render()
    sp = inv.span
    if (
        n == "crontab"
        and not ({"-l", "-r", "-u"} & a and "-" not in a and len(args) <= 2)
        and "-l" not in a
    ):
        yield Hit("cmd.persistence", "crontab installs scheduled jobs", sp, judged)
    if n in ("at", "batch") and "-l" not in a and "-r" not in a:
        yield Hit("cmd.persistence", f"{n} schedules a command", sp, judged)
    if n == "launchctl" and {"load", "bootstrap", "submit", "enable"} & a:
        yield Hit("cmd.persistence", "launchctl loads a launch agent", sp, judged)
    if (
        n == "launchctl"
        and {"unload", "bootout", "disable", "remove"} & a
        and SECURITY_UNITS.search(" ".join(args))
    ):
        yield Hit("cmd.security_disable", "launchctl stops a security agent", sp, judged)
    if (
        n in ("systemctl", "service", "launchctl", "rc-service", "sv")
        and "domestique" in " ".join(args).lower()
        and {"stop", "disable", "mask", "kill", "unload", "bootout", "remove"} & a
    ):
        yield Hit("cmd.guard_tamper", f"{n} stops Domestique", sp, judged)
    if n in ("systemctl", "service", "rc-service", "update-rc.d", "chkconfig", "sv", "rc-update"):
        units = " ".join(x for x in args if not x.startswith("-"))
        stopping = {"stop", "disable", "mask", "kill", "off", "del", "remove"} & a
        if n == "systemctl" and {"reboot", "poweroff", "halt", "kexec"} & a:
            yield Hit("cmd.destructive.shutdown", "systemctl stops or restarts the machine", sp,
                      judged)  # fmt: skip
        elif stopping and SECURITY_UNITS.search(units):
            yield Hit("cmd.security_disable", f"{n} stops security tooling", sp, judged)
        elif {"enable", "link", "on", "add", "defaults"} & a and n != "service":
            yield Hit("cmd.persistence", f"{n} enables a service at boot", sp, judged)
    if n == "systemd-run" and "--on-calendar" in " ".join(args):
        yield Hit("cmd.persistence", "systemd-run schedules a timer", sp, judged)
    if n in ("setenforce",) and args[:1] and args[0].lower() in ("0", "permissive"):
        yield Hit("cmd.security_disable", "SELinux set to permissive", sp, judged)
    if n == "ufw" and "disable" in a:
        yield Hit("cmd.security_disable", "ufw disable", sp, judged)
    if n in ("iptables", "ip6tables", "nft") and (
        {"-F", "--flush", "flush"} & a or re.search(r"-P\s+\w+\s+ACCEPT", " ".join(args))
    ):
        yield Hit("cmd.security_disable", f"{n} drops the firewall rules", sp, judged)
    if n == "pfctl" and "-d" in a:
        yield Hit("cmd.security_disable", "pfctl -d disables the firewall", sp, judged)
    if n == "spctl" and {"--master-disable", "--global-disable", "--disable"} & a:
        yield Hit("cmd.security_disable", "Gatekeeper disabled", sp, judged)
    if n == "csrutil" and "disable" in a:
        yield Hit("cmd.security_disable", "System Integrity Protection disabled", sp, judged)
    if n == "socketfilterfw" and any("off" in x for x in args):
        yield Hit("cmd.security_disable", "application firewall off", sp, judged)
    if n == "auditctl" and ({"-D"} & a or re.search(r"-e\s*0", " ".join(args))):
        yield Hit("cmd.security_disable", "audit rules removed or audit disabled", sp, judged)
    if n in ("kill", "pkill", "killall") and SECURITY_UNITS.search(" ".join(args)):
        yield Hit("cmd.security_disable", f"{n} stops security tooling", sp, judged)
    if n == "sysctl" and re.search(
        r"randomize_va_space\s*=\s*0|ptrace_scope\s*=\s*0", " ".join(args)
    ):
        yield Hit("cmd.security_disable", "kernel hardening turned off", sp, judged)
    if n == "xattr" and "com.apple.quarantine" in a and ({"-d", "-c", "-dr", "-rd"} & a):
        yield Hit("cmd.security_disable", "Gatekeeper quarantine removed", sp, judged)
    if n == "defaults" and re.search(
        r"LSQuarantine|com\.apple\.alf|LoginHook|LogoutHook", " ".join(args)
    ):
        code = "cmd.persistence" if "Hook" in " ".join(args) else "cmd.security_disable"
        yield Hit(code, "defaults write changes a security or login setting", sp, judged)
    if n == "history" and ({"-c", "-d"} & a or any(x.startswith("-d") for x in args)):
        yield Hit("cmd.history_wipe", "history is cleared", sp, judged)
    if n == "set" and "+o" in a and "history" in a:
        yield Hit("cmd.history_wipe", "history recording turned off", sp, judged)
    if n == "unset" and {"HISTFILE", "HISTSIZE", "HISTFILESIZE"} & a:
        yield Hit("cmd.history_wipe", "history variables unset", sp, judged)
    if n == "unset" and not _CONTROL_VARIABLES.isdisjoint(a):
        names = ", ".join(sorted(_CONTROL_VARIABLES & a))
        yield Hit("cmd.guard_tamper", f"{names} unset", sp, judged)
    if n == "journalctl" and any(x.startswith(("--vacuum", "--rotate", "--flush")) for x in args):
        yield Hit("cmd.history_wipe", "system journal vacuumed", sp, judged)
    if n == "log" and "erase" in a:
        yield Hit("cmd.history_wipe", "unified log erased", sp, judged)
    if n in ("chmod",) or (n == "install" and "-m" in a):
        yield from _chmod(inv, ctx)
    if n in ("chown", "chgrp"):
        flags, rest = _opts(inv.words[1:])
        for t in rest[1:]:
            place = classify(t.text, ctx.cwd)
            if place in (Place.ROOT, Place.SYSTEM) or (
                place is Place.HOME and "R" in flags and t.text.rstrip("/") in ("~",)
            ):
                yield Hit("cmd.privilege.permissions", f"{n} on {t.text}", t.span, judged)
    if (
        n in ("insmod", "modprobe", "kextload", "kmutil")
        and args
        and not ({"-r", "--remove", "-n", "--dry-run", "showloaded", "inspect", "-l"} & a)
    ):
        yield Hit("cmd.privilege.kernel", f"{n} loads a kernel module", sp, judged)
    # systemctl reboot: the systemctl branch above
    if n in ("shutdown", "reboot", "halt", "poweroff") and not ({"-c", "--help", "-k"} & a):
        yield Hit("cmd.destructive.shutdown", f"{n} stops or restarts the machine", sp, judged)
    if (
        n == "security"
        and args[:1]
        and (
            args[0] in ("dump-keychain", "export")
            or (args[0].startswith("find-") and "password" in args[0])
        )
    ):
        yield Hit("cmd.credential_read", f"security {args[0]} reads the keychain", sp, judged)
    if (
        n in ("update-ca-certificates", "update-ca-trust")
        or (n == "security" and args[:1] in (["add-trusted-cert"], ["import"]))
        or (n == "trust" and "anchor" in a)
    ):
        yield Hit("cmd.security_disable", f"{n} changes the trusted certificate authorities", sp,
                  judged)  # fmt: skip
    if n == "nmap" and "--interactive" in a:
        yield Hit("cmd.interactive_shell", "nmap --interactive offers !sh", sp, judged)
    if n == "tmutil" and {"disable", "delete", "deletelocalsnapshots"} & a:
        yield Hit("cmd.security_disable", "tmutil turns off or deletes backups", sp, judged)
    if (
        (n in ("code", "code-insiders") and "tunnel" in a)
        or n in ("devtunnel", "ngrok", "bore", "chisel", "frpc", "lt", "localtunnel")
        or (n == "cloudflared" and "tunnel" in a)
        or (n == "kickstart" and "-activate" in a)
    ):
        yield Hit("cmd.remote_access", f"{n} opens this machine to remote access", sp, judged)
    if n == "ssh" and (
        {"-R", "-D"} & a or any(x.startswith(("-R", "-D")) and len(x) > 2 for x in args)
    ):
        yield Hit("cmd.remote_access", "ssh opens a reverse tunnel or SOCKS proxy", sp, judged)
    if n == "pw" and args[:1] and args[0] in ("useradd", "usermod", "groupadd", "userdel"):
        yield Hit("cmd.privilege.accounts", f"pw {args[0]} changes accounts", sp, judged)
    if n == "dsenableroot":
        yield Hit("cmd.privilege.accounts", "dsenableroot enables the root account", sp, judged)
    if n in ("setcap",):
        yield Hit("cmd.privilege.setuid", "setcap grants capabilities", sp, judged)
    if n in _ACCOUNT_TOOLS and not (n == "passwd" and not args):
        yield Hit("cmd.privilege.accounts", f"{n} changes accounts or groups", sp, judged)
    if n == "dscl" and any(x in ("-create", "-append", "-passwd", "-delete") for x in args):
        yield Hit("cmd.privilege.accounts", "dscl changes directory accounts", sp, judged)
    if n in ("domestique",) and args[:1] and args[0] in ("uninstall", "install"):
        yield Hit("cmd.guard_tamper", f"domestique {args[0]} changes the hooks", sp, judged)
    if n == "domestique" and (args[:1] == ["allow"] or args[:2] == ["policy", "init"]):
        # an agent loosening the policy it is judged by (domestique allow refuses agents too)
        yield Hit("cmd.guard_tamper", f"domestique {' '.join(args[:2])} changes the policy", sp,
                  judged)  # fmt: skip
    if n in ("pip", "pip3", "pipx", "uv") and "uninstall" in a and "domestique" in a:
        yield Hit("cmd.guard_tamper", "uninstalls Domestique", sp, judged)
    if n == "export" and "-n" in a and not _CONTROL_VARIABLES.isdisjoint(a):
        yield Hit("cmd.guard_tamper", "a control variable is no longer exported", sp, judged)
    if ENV_CLEARED in inv.env and n in _AGENT_PROGRAMS:
        yield Hit("cmd.guard_tamper", f"{n} starts with an emptied environment", sp, judged)
    if n in ("export", "declare", "typeset", "local", "readonly"):
        nameref = n != "export" and any(x.startswith("-") and "n" in x for x in args)
        for x in args:
            name, eq, value = x.partition("=")
            if nameref and value in _CONTROL_VARIABLES:
                yield Hit("cmd.guard_tamper", f"{name} is made a reference to {value}", sp, judged)
            if eq:  # `export HTTPS_PROXY` alone exports the value it has: nothing changes
                yield from _assignment_hit(name, value, sp, judged)
    for k, v in inv.env.items():
        if k != ENV_CLEARED:
            yield from _assignment_hit(k, v, sp, judged, exported=False, program=n)


# Variables that point agents at the firewall (or hold the guard's state): changing or unsetting
# them for an agent routes model traffic around the controls.
_CONTROL_VARIABLES = frozenset(
    {"DOMESTIQUE_HOME", "ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL",
     "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
     "OPENAI_BASE_URL", "OPENAI_API_BASE", "GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL",
     "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
     "all_proxy", "no_proxy"}
)  # fmt: skip
_PROXY_VARIABLES = frozenset(
    {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy",
     "all_proxy", "no_proxy"}
)  # fmt: skip
# Agent command-line tools: a control variable set for one of them routes its model traffic.
_AGENT_PROGRAMS = frozenset(
    {"claude", "codex", "gemini", "aider", "cursor-agent", "copilot", "cline", "windsurf",
     "opencode", "goose", "amp", "qwen", "crush", "llm", "continue", "plandex", "openhands"}
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


def _assignment_hit(
    name: str, value: str, span: Span, judged: str, *, exported: bool = True, program: str = ""
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
    elif name in _CONTROL_VARIABLES and (
        exported
        or name not in _PROXY_VARIABLES  # a model endpoint only matters to a model client
        or program in _AGENT_PROGRAMS
        or program in SHELLS
    ):
        yield Hit("cmd.guard_tamper", f"{name} changed: model traffic or the guard's state moves",
                  span, judged)  # fmt: skip
    elif name in _TLS_OFF_VARIABLES and value.strip("'\"") in _TLS_OFF_VARIABLES[name]:
        yield Hit("cmd.tls_off", f"{name}={value} turns certificate checks off", span, judged)
    elif (
        name in ("LD_PRELOAD", "DYLD_INSERT_LIBRARIES")
        and value
        and (exported or classify(value, None) not in (Place.PROJECT, Place.PROJECT_ROOT))
    ):
        yield Hit("cmd.privilege.setuid", f"{name} injects a library into later commands", span,
                  judged)  # fmt: skip


def _chmod(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    flags, rest = _opts(inv.words[1:])
    judged = inv.render()
    if inv.name == "install":
        words = inv.words
        modes = [words[i + 1].text for i, w in enumerate(words[:-1]) if w.text == "-m"]
        if any(_SETUID_MODE.match(m) for m in modes):
            yield Hit("cmd.privilege.setuid", "install sets the setuid bit", inv.span, judged)
        return
    if not rest:
        return
    mode = rest[0].text
    dirs = any("dirs" in v for v in inv.via) or any(
        "-type d" in " ".join(u.argv) for u in (ctx.invs[i] for i in inv.upstream)
    )
    for part in mode.split(","):
        if _SETUID_MODE.match(part) or (_SETGID_MODE.match(part) and not dirs):
            yield Hit("cmd.privilege.setuid", f"chmod {mode} sets setuid/setgid", rest[0].span,
                      judged)  # fmt: skip
            break
    wide = any(_WORLD_WRITABLE.match(p) for p in mode.split(",")) or mode in ("777", "0777", "666")
    recursive = bool({"R", "--recursive"} & flags)
    for t in rest[1:]:
        place = classify(t.text, ctx.cwd)
        if (place is Place.ROOT and (wide or recursive)) or (place is Place.SYSTEM and wide):
            yield Hit("cmd.privilege.permissions", f"chmod {mode} on {t.text}", t.span, judged)
        elif (
            place is Place.HOME
            and wide
            and CREDENTIAL_FILES.search(canonical_for_match(t.text, ctx.cwd))
        ):
            yield Hit("cmd.privilege.permissions", f"chmod {mode} opens {t.text}", t.span, judged)


def _rule_shell_escape(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A tool given a shell to start (GTFOBins): ``-TT 'sh #'``, ``:!/bin/sh``, ``exec=/bin/sh``."""
    n = inv.name
    if n in SHELLS or n in _SHELL_ESCAPE_OK or n in WRAPPERS:
        return
    if not inv.env and "sh" not in "\n".join(inv.args):
        return  # _SHELL_ARG needs "sh" in a word (cheap first: this rule runs on most commands)
    texts = [(w.text if w.literal else _SUBST.sub(" ", w.text), w.span) for w in inv.words[1:]]
    texts += [(f"{k}={v}", inv.span) for k, v in inv.env.items()]
    previous = ""
    for text, span in texts:
        if previous in ("completion", "completions", "-s", "--shell") and text in SHELLS:
            previous = text
            continue  # `gh completion -s bash`: names a shell, starts none
        previous = text
        if "sh" in text and _SHELL_ARG.search(text):
            yield Hit("cmd.shell_escape", f"{n} is told to start a shell ({text[:40]})", span,
                      inv.render())  # fmt: skip
            return


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
_SHELL_ARG = re.compile(
    r"(?:^|[=!:'\"(\s,;{`%])(?:/usr)?(?:/local)?(?:/bin/)?(?:ba|da|z|k|c|tc|a|mk)?sh"
    r"(?:\s+-[a-z]*[ip][a-z]*)?(?:\s*$|\s*[#'\";)}&|,`]|\s+-[a-z]*[ips]\b|\s+\d?[<>])"
)


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


# Service and storage CLIs whose destroying verbs delete data that is not in the project.
_DATA_CLIS = frozenset(
    {
        "aws", "gcloud", "gsutil", "az", "kubectl", "helm", "terraform", "pulumi", "vault", "op",
        "doppler", "rclone", "restic", "borg", "velero", "nats", "circleci", "gh", "glab",
        "rabbitmqctl", "rabbitmqadmin", "gitlab-runner", "heroku", "fly", "flyctl", "vercel",
        "netlify", "firebase", "supabase", "doctl", "hcloud", "openstack", "s3cmd", "mc", "consul",
        "etcdctl", "stripe", "redis-cli", "docker", "podman", "nomad", "kubeadm", "eksctl",
        "minikube", "kind", "linode-cli", "ibmcloud", "oci", "tsh", "argocd", "flux",
        "kafka-topics", "kafka-consumer-groups", "kafka-configs", "kafka-acls",
        "kafka-delete-records", "java",
        "aws-vault", "sops", "gopass", "pass", "bw", "lpass", "kubectx", "k9s", "virsh", "vagrant",
        "multipass", "lxc", "incus", "zfs", "btrfs", "lvremove", "vgremove", "pvremove",
    }
)  # fmt: skip
_DATA_VERBS = re.compile(
    r"(?i)^(?:delete|del|destroy|purge|rm|rb|rdelete|repo-delete|forget|prune|compact|"
    r"deletefile|rmdir|rmdirs|cleanup|unsubscribe|purge[-_][\w-]+|"
    r"unregister|uninstall|terminate|drop|disable|revoke|archive|flushall|flushdb|"
    r"delete[-_][\w-]+|remove[-_][\w-]+|terminate[-_][\w-]+|deregister[-_]?[\w-]*|"
    r"clear_permissions|clear[-_]\w+|wipe|reset|nuke|undeploy|teardown|"
    r"update-secret|put-secret-value|rotate-secret|--delete|--remove|--delete-config|"
    r"--force-delete[\w-]*|--delete-[\w-]+|--purge|rmi|--volumes)$"
)
_METADATA = re.compile(
    r"169\.254\.169\.254|169\.254\.170\.2|metadata\.google\.internal|fd00:ec2::254"
)
_SQL_DESTROY = re.compile(
    r"(?i)\b(?:drop\s+(?:table|database|schema|index|user)|truncate\s+(?:table\s+)?\w|"
    r"delete\s+from\s+\w+\s*(?:;|$)|dropDatabase|flushall)"
)
_HTTP_DELETE = re.compile(
    r"(?i)(?:-X\s*|--request[= ]\s*|--method[= ]\s*)DELETE\b|_delete_by_query|/doDelete\b"
)


def _rule_data(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Deletes data in services, buckets, databases, backups or sync destinations."""
    n = inv.name
    args = inv.args
    judged = inv.render()
    if n.startswith("kafka-") or n in _DATA_CLIS:
        positional = [a for a in args if not a.startswith("-")]
        verbs = [a for a in positional[:4] if _DATA_VERBS.match(a)]
        verbs += [a for a in args if a.startswith("--") and _DATA_VERBS.match(a)]
        if n.startswith("kafka-") and "delete" in n:
            verbs.append(n)
        if n in ("docker", "podman"):
            pos = [a for a in args if not a.startswith("-")][:2]
            forced = bool({"-f", "--force", "-a", "--all", "-v", "--volumes"} & set(args))
            destroys = (pos[:1] in (["rm"], ["rmi"]) and forced) or (
                len(pos) == 2 and pos[0] in ("system", "volume", "image", "container", "network",
                                             "builder") and pos[1] in ("prune", "rm")
            )  # fmt: skip
            verbs = pos[:1] if destroys else []
        if n == "rclone" and {"sync", "move"} & set(args[:1]):
            verbs = args[:1]
        if n == "kubectl" and args[:1] == ["delete"]:
            verbs = ["delete"]
        if verbs:
            yield Hit("cmd.destructive.data", f"{n} {verbs[0]} deletes data outside the project",
                      inv.span, judged)  # fmt: skip
            return
    if n in DOWNLOADERS and any(_METADATA.search(a) for a in args):
        yield Hit("cmd.credential_read", "queries the cloud metadata service (credentials)",
                  inv.span, judged)  # fmt: skip
    if n in DOWNLOADERS or n == "gh":
        flat = " ".join(args)
        if _HTTP_DELETE.search(flat) or (
            n in ("http", "https", "xh") and args[:1] and args[0].upper() == "DELETE"
        ):  # fmt: skip
            yield Hit("cmd.destructive.data", f"{n} sends an HTTP DELETE", inv.span, judged)
            return
    if n == "rsync" and any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        yield Hit(
            "cmd.destructive.data", "rsync deletes files at the destination", inv.span, judged
        )
        return
    databases = ("psql", "mysql", "sqlite3", "mongo", "mongosh", "cqlsh", "clickhouse-client")
    if (n in databases and _SQL_DESTROY.search(" ".join(args))) or (
        n == "redis-cli" and {"flushall", "flushdb"} & {a.lower() for a in args}
    ):
        yield Hit("cmd.destructive.data", f"{n} drops or empties data", inv.span, judged)


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
            if src and classify(src, ctx.cwd) in (Place.ROOT, Place.HOME, Place.SYSTEM):
                yield Hit("cmd.privilege.container", f"{n} mounts the host's {src}", inv.span,
                          judged)  # fmt: skip
                return
        if a in ("--privileged", "--pid=host", "--userns=host", "security.privileged=true") or (
            a.startswith("source=/") and a in ("source=/",)
        ):
            yield Hit("cmd.privilege.container", f"{n} {a}", inv.span, judged)
            return
    if n in ("lxc", "incus") and any(x in ("source=/", "security.privileged=true") for x in args):
        yield Hit("cmd.privilege.container", f"{n} shares the host's root", inv.span, judged)


def _system_wide(text: str, cwd: str | None) -> bool:
    """``/``, a system top folder (``/etc``, ``/var``, ``/usr/*``) or every home (``/home``).

    The user's own home (``~``) and the temp roots are not: a search there is ordinary work.
    """
    if classify(text, cwd) is not Place.ROOT:
        return False
    canon = canonical_for_match(text, cwd)
    return canon.startswith("/") and canon.rstrip("/*") not in _TEMP_TOPS


def _secret_root(text: str, cwd: str | None) -> bool:
    """``/``, ``/etc``, ``/var``, ``/srv`` or every home: where a blind search finds secrets."""
    canon = canonical_for_match(text, cwd)
    return canon.startswith("/") and (canon.rstrip("/*") or "/") in _SECRET_ROOTS


_SECRET_ROOTS = frozenset(
    {"/", "/etc", "/home", "/Users", "/root", "/var", "/srv", "/private", "/private/etc",
     "/private/var"}
)  # fmt: skip
# Start-up and service folders: a file there not owned by root is a privilege-escalation lead.
_SERVICE_DIRS = re.compile(
    r"^/(?:etc/(?:init\.d|init|rc\.d|rc\d\.d|systemd|cron[^/]*|xinetd\.d)|(?:usr/)?lib/systemd|"
    r"usr/local/etc/rc\.d|Library/Launch(?:Agents|Daemons))(?:/|$)"
)
_TEMP_TOPS = frozenset({"/tmp", "/var/tmp", "/private/tmp", "/private/var/tmp", "/dev/shm"})  # noqa: S108 - matched, never opened
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "strings"})
# Recursive listers of attributes (``ls -R`` and ``tree`` are plain looks, see _rule_recon's awk).
_RECURSIVE_LISTERS = {"getfacl": "R", "lsattr": "R", "xattr": "r"}
_PERMISSION_FILTER = re.compile(r"\$1\s*~\s*/[^/]*[ws]")
# Hidden files and backup copies: where a system-wide hunt finds keys, tokens and old shadows.
_HIDDEN_OR_BACKUP = re.compile(r"^\.\*|^\*?\.(?:bak|old|backup|orig|save|swp)\*?$|~$", re.I)
_OWNER_TESTS = frozenset({"-user", "-uid", "-group", "-gid"})


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
    if n in _RECURSIVE_LISTERS:
        flags, rest = _opts(inv.words[1:])
        recursive = _RECURSIVE_LISTERS[n] in flags or "--recursive" in flags
        for w in rest if recursive else ():
            if _secret_root(w.text, ctx.cwd):
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
            u.name == "ls" and "R" in _opts(u.words[1:])[0]
            and any(_system_wide(w.text, ctx.cwd) for w in _opts(u.words[1:])[1])
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
        place = classify(roots[0], ctx.cwd)
        wide = place in (Place.ROOT, Place.SYSTEM, Place.HOME, Place.VARIABLE) or (
            place is Place.OUTSIDE
        )
        system = _secret_root(roots[0], ctx.cwd)
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
    flags, rest = _opts(inv.words[1:])
    paths = [w.text for w in rest[1:]] if not ({"e", "f"} & flags) else [w.text for w in rest]
    if _PASSWORD_WORDS.search(" ".join(inv.args)):
        hunted = paths + [
            u.args[0] for u in (ctx.invs[i] for i in inv.upstream) if u.name == "cat" and u.args
        ]
        for p in hunted:
            canon = canonical_for_match(p, ctx.cwd)
            if classify(p, ctx.cwd) is Place.ROOT or HISTORY_FILES.search(canon):
                yield Hit("cmd.recon", f"{n} hunts for passwords in {p}", inv.span, judged)
                return
    recursive = n in ("rg", "ag", "ack") or bool(
        {"r", "R", "--recursive", "--dereference-recursive"} & flags
    )
    if recursive:
        for p in paths:
            if _secret_root(p, ctx.cwd):
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
        _, rest = _opts([w for w in words if w.text not in ("-P", "--password")])
        password = any(t in ("-e", "--encrypt", "-P", "--password") for t in texts)
        return True, rest[1:], password
    if n in ("7z", "7za", "7zr", "rar"):
        flags, rest = _opts(words)
        creates = bool(rest) and rest[0].text in ("a", "u")
        password = any(t.startswith(("-p", "-hp")) for t in texts)
        return creates, rest[2:], password
    if n == "ditto":
        flags, rest = _opts(words)
        return "c" in flags, rest[:-1], False
    return False, [], False


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
            if _MAIL_STORES.search(canonical_for_match(w.text, ctx.cwd)):
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
        base = _cd_before(inv, ctx)
        for w in inputs:
            text = w.text
            if base and not text.startswith(("/", "~", "$")):
                text = posixpath.join(base, text)  # `cd /etc && tar czf - *`
            canon = canonical_for_match(text, ctx.cwd)
            if canon == "~" or _system_wide(text, ctx.cwd) or _LOGIN_RECORDS.search(canon):
                yield Hit("cmd.collection", f"{n} packs {text}", w.span, judged)
                return
            if _HOME_CHILD_VARIABLE.fullmatch(canon):  # `$HOME/$USERNAME`: unset packs all home
                yield Hit("cmd.collection", f"{n} packs {text} (the whole home if the variable "
                          "is empty)", w.span, judged)  # fmt: skip
                return
            if password and classify(text, ctx.cwd) in _OUTSIDE_PLACES:
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
            if classify(src, ctx.cwd) in _OUTSIDE_PLACES:
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


_OUTSIDE_PLACES = (Place.HOME, Place.ROOT, Place.SYSTEM, Place.OUTSIDE)
_HOME_CHILD_VARIABLE = re.compile(r"~/\$(?:\w+|\{\w+\})/?")


def _cd_before(inv: Invocation, ctx: Context) -> str | None:
    """The folder of the last literal ``cd`` earlier in the line (None: the working folder)."""
    me = _position(ctx, inv)
    for c in reversed(ctx.invs[:me]):
        if c.name in ("cd", "pushd") and not c.args:
            return "~"  # cd alone goes home
        if c.name in ("cd", "pushd") and (
            c.words[1].literal
            or c.args[0].startswith(("$HOME", "${HOME}"))
            or _USER_HOME.match(c.args[0])
        ):
            return c.args[0] if c.args[0] != "-" else None
    return None


# /home/$USER, /Users/${LOGNAME}: one's own home folder named through a variable
_USER_HOME = re.compile(r"^/(?:home|Users)/\$\{?(?:USER|LOGNAME|USERNAME)\}?/?$")


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


_CLOCK_NAMES = frozenset({"date", "timedatectl", "hwclock", "systemsetup", "gdate"})
_DATE_VALUE_OPTS = frozenset({"-d", "--date", "-r", "--reference", "-f", "--file", "-z"})


def _rule_clock(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """The system clock set or its time sync turned off (log times and certificates go wrong)."""
    n = inv.name
    args = inv.args
    sets = False
    if n in ("date", "gdate"):
        if "-j" in args:  # BSD: parse only, never set
            return
        skip = False
        for a in args:
            if skip:
                skip = False
            elif a in _DATE_VALUE_OPTS:
                skip = True
            elif a in ("-s", "--set") or a.startswith("--set="):
                sets = True
            else:  # `date 0101000019` (MMDDhhmm[[CC]YY]) sets the clock
                sets = sets or (not a.startswith(("-", "+")) and len(a) >= 8
                                and a.replace(".", "").isdigit())  # fmt: skip
    elif n == "timedatectl":
        sets = bool(args) and (
            args[0] == "set-time"
            or (args[0] == "set-ntp" and args[1:2] in (["false"], ["0"], ["no"], ["off"]))
        )
    elif n == "hwclock":
        sets = any(a in ("--set", "-s", "--hctosys") for a in args)
    elif n == "systemsetup":
        low = [a.lower() for a in args]
        sets = bool({"-setdate", "-settime", "-setnetworktimeserver"} & set(low)) or (
            "-setusingnetworktime" in low and "off" in low
        )
    if sets:
        yield Hit("cmd.clock_change", f"{n} sets the system clock", inv.span, inv.render())


_HOSTS_OR_DNS = re.compile(r"(?:^|/)etc/(?:hosts|resolv\.conf)$")
_CA_STORES = re.compile(
    r"(?:^|/)(?:usr/local/share/(?:ca-certificates|certs)|usr/share/ca-certificates|"
    r"etc/(?:pki/ca-trust/source|pki/trust/anchors|ssl/certs|ca-certificates|pki/tls/certs))"
    r"(?:/.*)?$"
)
_FILE_WRITERS = frozenset({"cp", "mv", "install", "ln", "tee", "rsync", "dd", "sed"})
_SETTINGS_NAMES = (
    _FILE_WRITERS
    | _CLOCK_NAMES
    | frozenset(
        {
            "networksetup",
            "gsettings",
            "certctl",
            "ldapadd",
            "ldapmodify",
            "ldapdelete",
            "ldappasswd",
            "ldapmodrdn",
        }
    )
)


def _rule_system_settings(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Machine-wide settings: name resolution, proxies, trusted CAs, directory accounts."""
    n = inv.name
    judged = inv.render()
    args = inv.args
    targets = [r.target for r in inv.redirects if r.writes]
    if n in _FILE_WRITERS and (n != "sed" or any(a.startswith("-i") for a in args)):
        targets += [w for w in inv.words[1:] if not w.text.startswith("-")][-1:]
    for t in targets:
        if "etc/" not in t.text and "share/" not in t.text:
            continue
        path = canonical_for_match(t.text, ctx.cwd)
        if _HOSTS_OR_DNS.search(path):
            yield Hit("cmd.network_config", f"{n} changes {t.text}", t.span, judged)
            return
        if _CA_STORES.search(path):
            yield Hit("cmd.security_disable", f"{n} adds to the trusted certificate authorities "
                      f"({t.text})", t.span, judged)  # fmt: skip
            return
    if n in _CLOCK_NAMES:
        yield from _rule_clock(inv, ctx)
    elif n == "networksetup" and any(
        a.lower().startswith(("-set", "-remove", "-delete", "-add")) for a in args
    ):
        yield Hit("cmd.network_config", "networksetup changes the network settings", inv.span,
                  judged)  # fmt: skip
    elif n == "gsettings" and args[:1] in (["set"], ["reset"]) and "proxy" in " ".join(args):
        yield Hit("cmd.network_config", "gsettings changes the system proxy", inv.span, judged)
    elif n == "certctl" and args[:1] and args[0] in ("rehash", "trust", "untrust"):
        yield Hit("cmd.security_disable", "certctl changes the trusted certificate authorities",
                  inv.span, judged)  # fmt: skip
    elif n.startswith("ldap") and args:
        yield Hit("cmd.privilege.accounts", f"{n} changes directory (LDAP) entries", inv.span,
                  judged)  # fmt: skip


_MEMORY = re.compile(r"(?:^|[=/])proc/[^/\s]+/mem$")
_MEMORY_NAMES = frozenset({"dd", "cat", "strings", "xxd", "hexdump", "od", "head", "tail", "cp"})
_LINE_EDITORS = frozenset({"ed", "red", "ex"})


def _rule_memory_and_scripts(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Another process's memory read; a line editor's script that opens a credential file."""
    n = inv.name
    judged = inv.render()
    if n in _MEMORY_NAMES:
        for w in [*inv.words[1:], *(r.target for r in inv.redirects if r.reads)]:
            if "/mem" in w.text and _MEMORY.search(w.text.removeprefix("if=")):
                yield Hit("cmd.credential_read", f"{n} reads process memory ({w.text})", w.span,
                          judged)  # fmt: skip
                return
        return
    texts = [inv.stdin_text or ""]
    texts += [" ".join(ctx.invs[i].args) for i in inv.upstream]
    for text in texts:
        for token in _SCRIPT_TOKENS.split(text):
            if token and _cred_hint(token) and CREDENTIAL_FILES.search(token):
                yield Hit("cmd.credential_read", f"{n} script opens {token}", inv.span, judged)
                return


_SCRIPT_TOKENS = re.compile(r"[\s,]+|\\n")
_FILE_SERVERS = frozenset({"python", "php", "ruby", "busybox"})
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def _rule_file_server(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A built-in web server that publishes a folder outside the project (``/``, home, /tmp).

    Serving the project (a site preview) is ordinary work; a server bound to loopback only is too.
    """
    n = inv.name
    args = inv.args
    folder: str | None = None
    if n == "python" and any(a in ("http.server", "SimpleHTTPServer") for a in args):
        pairs = zip(args, [*args[1:], ""], strict=True)
        folder = next((v for a, v in pairs if a in ("-d", "--directory")), None)
        if any(a in ("-b", "--bind") and v in _LOOPBACK for a, v in zip(args, [*args[1:], ""],
                                                                        strict=True)):  # fmt: skip
            return
    elif n == "php" and "-S" in args:
        if any(a.startswith(tuple(_LOOPBACK)) for a in args[args.index("-S") + 1 :][:1]):
            return
        folder = next((v for a, v in zip(args, [*args[1:], ""], strict=True) if a == "-t"), None)
    elif n == "ruby" and "httpd" in " ".join(args) and any(a.startswith("-run") for a in args):
        pass
    elif n == "busybox" and args[:1] == ["httpd"]:
        folder = next((v for a, v in zip(args, [*args[1:], ""], strict=True) if a == "-h"), None)
    else:
        return
    if folder is None:
        folder = _cd_before(inv, ctx)
    if folder is not None and classify(folder, ctx.cwd) in (*_OUTSIDE_PLACES, Place.VARIABLE):
        yield Hit("cmd.remote_access", f"{n} serves {folder} to the network", inv.span,
                  inv.render())  # fmt: skip


_SHELL_ESCAPE_OK = frozenset(
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


def _rule_shell_files(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Text that starts a shell written to a file or piped to a tool; shell binaries copied."""
    n = inv.name
    judged = inv.render()
    me = _position(ctx, inv)
    feeds_other = any(me in o.upstream for o in ctx.invs)
    writes = any(r.writes and r.target.text not in ("/dev/null",) for r in inv.redirects)
    text: str | None = None
    if (writes or n == "tee") and not feeds_other and _inert_project_write(inv, ctx, me):
        return  # text kept in a project file nothing in the line uses: data (README, tests)
    if n in ("echo", "printf") and (writes or feeds_other):
        text = " ".join(w.text for w in inv.words[1:])
    elif n in ("cat", "tee") and inv.stdin_text is not None and (writes or n == "tee"):
        text = inv.stdin_text
    if text is not None:
        body = "\n".join(line for line in text.replace("\\n", "\n").split("\n")
                         if not line.lstrip().startswith("#!"))  # fmt: skip
        if _SHELL_ARG.search(body) or re.search(
            r"(?:^|[\s;'\"])(?:exec\s+)?/bin/(?:ba|da|z)?sh\b", body
        ):
            yield Hit("cmd.shell_escape", "writes text that starts a shell for a tool to run",
                      inv.span, judged)  # fmt: skip
            return
    if n in ("cp", "ln", "install", "rsync") and any(
        w.text.startswith(("/bin/", "/usr/bin/", "/usr/local/bin/"))
        and w.text.rsplit("/", 1)[-1] in SHELLS
        for w in inv.words[1:-1]
    ):  # fmt: skip
        yield Hit("cmd.shell_escape", f"{n} copies a shell binary", inv.span, judged)
        return
    if n == "sed" and any(
        _SED_E_COMMAND.fullmatch(a) or _SED_E_FLAG.search(a)
        for a in inv.args
    ):  # fmt: skip
        yield Hit("cmd.shell_escape", "sed's e command runs shell commands", inv.span, judged)


def _inert_project_write(inv: Invocation, ctx: Context, me: int) -> bool:
    """Does ``inv`` only write files inside the project that no later command in the line names?

    A dot-file (``.lessfilter``, ``.npmrc``) is configuration a tool reads by itself: not inert.
    Running such a file later in the line is judged on its own (written text is remembered).
    """
    targets = [r.target.text for r in inv.redirects if r.writes]
    if inv.name == "tee":
        targets += [a for a in inv.args if not a.startswith("-")]
    if not targets:
        return False
    later = [w.text for o in ctx.invs[me + 1 :] for w in o.words]
    for t in targets:
        base = posixpath.basename(t.rstrip("/"))
        if (
            not base
            or base.startswith(".")
            or classify(t, ctx.cwd) is not Place.PROJECT
            or any(base in w for w in later)
            or not _DATA_FILE.search(t)
        ):
            return False
    return True


# Files that hold text for people or for tests, which no tool runs by itself (package.json,
# Gemfile, Makefile, makepkg.conf and other manifests do not match).
_DATA_FILE = re.compile(
    r"(?i)\.(?:md|markdown|txt|rst|adoc|org|html?|csv|tsv|log|tex|ya?ml)$|"
    r"(?:^|/)(?:tests?|docs?|spec|__tests__|examples?|fixtures|testdata)/[^/]+\.[a-z]+$|"
    r"(?:block|deny|allow)[-_]?list[^/]*$"
)


_SED_E_COMMAND = re.compile(r"(?:\d+|\$|/[^/]*/)?e(?:\s.*)?", re.S)
_SED_E_FLAG = re.compile(r"s/.*/.*/[gip]*e[gip]*$")


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
        _, rest = _opts(inv.words[1:])
        if rest and "hidden" in rest[0].text.split(","):
            yield Hit("cmd.evasion.hidden_file", "chflags hides files from the Finder",
                      rest[0].span, judged)  # fmt: skip
    elif n == "shred":
        _, targets = _opts(inv.words[1:])
        if targets and not any(classify(t.text, ctx.cwd) is Place.DEVICE for t in targets):
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


def _rule_non_ascii(command: str) -> Iterator[Hit]:
    if command.isascii():
        return
    for m in re.finditer(r"[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\u00ad]", command):
        yield Hit(
            "cmd.non_ascii_name",
            f"invisible or bidi control character U+{ord(m.group(0)):04X}",
            (m.start(), m.end()),
        )


# ------------------------------------------------------------------------ whole-line rules


def _rule_exec_data(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    for inv in invs:
        if not inv.exec_data:
            continue
        feeders = [invs[i] for i in inv.exec_data if 0 <= i < len(invs)]
        span = _span_of(inv.span, *(f.span for f in feeders))
        judged = " | ".join(f.render() for f in feeders) + " -> " + inv.render()
        if any(_downloads(f) for f in feeders):
            yield Hit("cmd.pipe_to_shell", f"{inv.name} runs downloaded content", span, judged)
        elif any(f.name in RAW_NETWORK or is_egress(f) for f in feeders):
            yield Hit("cmd.reverse_shell", f"{inv.name} runs what the network sends", span, judged)
        elif any(_decodes(f) for f in feeders):
            yield Hit("cmd.decode_exec", f"{inv.name} runs decoded text", span, judged)
        elif any(not _judged_feeder(f) and not _env_generator(f) for f in feeders):
            yield Hit("cmd.opaque_command", f"{inv.name} runs generated text", span, judged)
    names = {inv.name for inv in invs}
    if {"mkfifo", "mknod"} & names and names & (RAW_NETWORK | {"openssl"}):
        fifo = next(inv for inv in invs if inv.name in ("mkfifo", "mknod"))
        yield Hit("cmd.reverse_shell", "a named pipe wired to a network tool (shell or relay)",
                  fifo.span, " ; ".join(i.render() for i in invs[:6]))  # fmt: skip
    # A shell in the same pipeline as a raw network tool: mkfifo/nc/telnet reverse shells.
    for inv in invs:
        if inv.name in SHELLS or inv.name in INTERPRETERS:
            up = set(inv.upstream)
            partners = [invs[i] for i in inv.upstream]
            partners += [o for o in invs if up and set(o.upstream) >= up and o is not inv]
            me = _position(ctx, inv)
            partners += [o for o in invs if me in o.upstream]
            for p in partners:
                if p.name in RAW_NETWORK or (p.name == "openssl" and "s_client" in p.args):
                    listen = any(a.startswith("-l") or a in ("--listen", "-lvp") for a in p.args)
                    yield Hit(
                        "cmd.bind_shell" if listen else "cmd.reverse_shell",
                        f"{inv.name} wired to {p.name}",
                        _span_of(inv.span, p.span),
                        p.render() + " <-> " + inv.render(),
                    )
                    break


# Tools whose output is shell set-up code meant to be eval'd: `eval "$(ssh-agent -s)"`.
_ENV_GENERATORS = frozenset(
    {"ssh-agent", "pyenv", "rbenv", "nodenv", "goenv", "jenv", "direnv", "starship", "zoxide",
     "conda", "brew", "poetry", "opam", "fnm", "mise", "rtx", "thefuck", "gh", "kubectl", "npm",
     "rustup", "helm", "dircolors", "keychain", "gpg-agent", "luarocks", "pipenv", "uv", "deno",
     "docker-machine", "minikube", "oh-my-posh", "atuin", "fzf", "register-python-argcomplete",
     "nvm", "sdk", "asdf", "jump", "scmpuff", "hub", "devbox", "nix", "flox", "tmuxifier",
     "pip", "ng", "hugo", "cobra-cli", "terraform", "vault", "pulumi", "az", "aws_completer"}
)  # fmt: skip


def _env_generator(inv: Invocation) -> bool:
    return inv.name in _ENV_GENERATORS and not _downloads(inv)


def _judged_feeder(inv: Invocation) -> bool:
    if inv.name in ("echo", "printf") and all(w.literal for w in inv.words):
        return True
    if inv.name == "cat" and all(w.literal for w in inv.words):
        return True
    return inv.name in ("true", ":", "yes")


def _fetched(inv: Invocation) -> tuple[list[str], list[str]]:
    """(files, folders) another tool fetches from elsewhere: aria2c, scp/rsync/sftp from a
    host, git/hg/svn clone, gh repo clone."""
    n, args = inv.name, inv.args
    _, rest = _opts(inv.words[1:])
    paths = [w.text for w in rest]
    if n == "aria2c":
        named = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--out")]
        named += [a.split("=", 1)[1] for a in args if a.startswith("--out=")]
        urls = [a for a in args if _URL_START.match(a)]
        return named or [posixpath.basename(u.split("?", 1)[0]) for u in urls], []
    if n in ("scp", "rsync") and len(paths) >= 2 and not _REMOTE_PATH.match(paths[-1]):
        sources = [p for p in paths[:-1] if _REMOTE_PATH.match(p)]
        if not sources:
            return [], []
        dest = paths[-1]
        if dest in (".", "./") or dest.endswith("/"):
            base = "" if dest in (".", "./") else dest
            return [base + posixpath.basename(p.split(":", 1)[1]) for p in sources], []
        return [dest], []
    if (n in ("git", "hg") and args[:1] == ["clone"]) or (n == "svn" and args[:1] in (
        ["checkout"], ["co"],
    )) or (n == "gh" and args[:2] == ["repo", "clone"]):  # fmt: skip
        positional = [a for a in args[1:] if not a.startswith("-") and a not in ("clone",)]
        if n == "git":
            positional = []
            skip = False
            for t in [w.text for w in _git_split(inv.words)[1][1:]]:
                if skip:
                    skip = False
                elif t in _CLONE_VALUE_OPTIONS:
                    skip = True
                elif not t.startswith("-"):
                    positional.append(t)
        if not positional:
            return [], []
        if len(positional) >= 2:
            return [], [positional[1].rstrip("/")]
        name = posixpath.basename(positional[0].rstrip("/").split(":")[-1])
        return [], [name.removesuffix(".git")]
    return [], []


_CLONE_VALUE_OPTIONS = frozenset(
    {"--depth", "-b", "--branch", "-o", "--origin", "--reference", "-c", "--config",
     "--template", "-j", "--jobs", "--filter", "--separate-git-dir", "-u", "--upload-pack",
     "--shallow-since", "--shallow-exclude", "--reference-if-able", "--server-option"}
)  # fmt: skip


def _rule_saved_exec(ctx: Context) -> Iterator[Hit]:
    saved: dict[str, tuple[str, Invocation]] = {}
    folders: dict[str, Invocation] = {}
    shadows: dict[str, Invocation] = {}  # a downloaded program put in a PATH folder, by name
    inside: str | None = None  # the fetched folder a `cd` entered
    for inv in ctx.invs:
        if inv.name == "cd" and inv.args:
            target = inv.args[0].rstrip("/")
            inside = target if target in folders else None
        for w in _executed_paths(inv):
            key = _key(w.text)
            folder = next((f for f in folders if key.startswith(f + "/")), None)
            if inside and not w.text.startswith(("/", "~", "$")):
                folder = folder or inside
            if key in saved:
                kind, src = saved[key]
                code = "cmd.pipe_to_shell" if kind == "download" else "cmd.decode_exec"
                yield Hit(
                    code,
                    f"{w.text} is {kind}ed, then run",
                    _span_of(src.span, inv.span),
                    src.render() + " ; " + inv.render(),
                )
            elif folder is not None:
                src = folders[folder]
                yield Hit(
                    "cmd.pipe_to_shell",
                    f"{w.text} comes from {src.name} {folder}, then runs",
                    _span_of(src.span, inv.span),
                    src.render() + " ; " + inv.render(),
                )
        words = inv.words
        if words and inv.name in shadows and "/" not in words[0].text:
            src = shadows[inv.name]
            yield Hit(
                "cmd.pipe_to_shell",
                f"{inv.name} was downloaded into a PATH folder, then run",
                _span_of(src.span, inv.span),
                src.render() + " ; " + inv.render(),
            )
        if _downloads(inv):
            for p in _saved_paths(inv):
                saved[p] = ("download", inv)
                tool = shadowed_tool(p, ctx.cwd)
                if tool:
                    shadows[tool] = inv
        elif _decodes(inv) and inv.name not in ("echo", "printf"):
            for p in _saved_paths(inv):
                saved[p] = ("decode", inv)
        elif inv.name in _FETCHERS:
            files, dirs = _fetched(inv)
            for p in files:
                saved[_key(p)] = ("download", inv)
            for d in dirs:
                folders[_key(d)] = inv


# Fragments (lower case) one of which every credential path in CREDENTIAL_FILES contains. One
# Aho-Corasick pass finds any of them (a substring test per fragment costs a scan per fragment,
# a case-blind regex alternation more).
_CRED_HINTS = (
    "ssh", "aws", "gcloud", "azure", "kube", "docker", "netrc", "credential", "npmrc", "pypirc",
    "pgpass", "my.cnf", "gh/", "gnupg", "password", "shadow", "passwd", "sudoers", "vault",
    "terraform", "keychain", "logins", "login data", "cookie", "keyring", "hub", "rclone",
    "serviceaccount", ".oci", "id_", ".pem", ".key", ".env", "environ", "key3.db", "key4.db",
    "signons", "web data", "local state",
)  # fmt: skip


def _hint_automaton(hints: tuple[str, ...]) -> Any:
    automaton = ahocorasick.Automaton()
    for hint in hints:
        automaton.add_word(hint, hint)
    automaton.make_automaton()
    return automaton


_CRED_HINT_SEARCH = _hint_automaton(_CRED_HINTS).iter


def _cred_hint(text: str) -> bool:
    """Does ``text`` (any case) contain one of ``_CRED_HINTS``?"""
    return next(_CRED_HINT_SEARCH(text.lower()), None) is not None


_RECON_HINT_SEARCH = _hint_automaton(_RECON_TOOL_HINTS).iter
_SPLIT_PIECES = re.compile(r"[=@,:]")


def _cred_words(inv: Invocation, ctx: Context) -> list[Word]:
    """Credential files this invocation reads."""
    out: list[Word] = []
    look_only = inv.name in LOOK_ONLY
    if look_only and not inv.redirects:
        return out
    # One search over every word decides whether any single word could name a credential.
    if not _cred_hint("\n".join([*inv.args, *(r.target.text for r in inv.redirects)])):
        return out
    candidates = [r.target for r in inv.redirects if r.reads]
    # A look-only program still reads what is redirected into it (ssh host 'cat > x' < key).
    words = [] if look_only else inv.words[1:]
    skip_next = False
    for i, w in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        if w.text in ("-i", "--identity", "--key", "--cert", "-k") and inv.name in (
            "ssh", "scp", "sftp", "rsync", "git", "curl", "ansible", "ansible-playbook",
        ):  # fmt: skip
            skip_next = True
            continue
        if inv.name == "git" and i == 0:
            continue
        candidates.append(w)
    for w in candidates:
        if not _cred_hint(w.text):
            continue
        for piece in (w.text, *_SPLIT_PIECES.split(w.text)):
            if piece and CREDENTIAL_FILES.search(canonical_for_match(piece, ctx.cwd)):
                out.append(w)
                break
    return out


# Options whose value is a key or certificate used to authenticate, not data sent.
_KEY_OPTIONS = frozenset(
    {"-i", "-E", "--cert", "--key", "--cacert", "--capath", "-e", "--rsh", "--identity",
     "--ssh-key", "--private-key", "--client-cert", "--client-key", "-k"}
)  # fmt: skip


_DROP_HOSTS = re.compile(
    r"(?i)(?:^|[/@.])(?:file\.io|transfer\.sh|0x0\.st|temp\.sh|paste\.ee|pastebin\.com|"
    r"hastebin\.com|termbin\.com|webhook\.site|requestbin\.\w+|pipedream\.net|"
    r"discord(?:app)?\.com/api/webhooks|hooks\.slack\.com|api\.telegram\.org|"
    r"anonfiles\.com|gofile\.io|oast\.\w+|interact\.sh|burpcollaborator\.net|ngrok\.io|"
    r"ngrok-free\.app|trycloudflare\.com)"
)
_UPLOAD_OPTS = re.compile(
    r"^(?:-F|--form|-T|--upload-file|-d|--data(?:-binary|-raw|-urlencode)?|--post-file|"
    r"--post-data|--body-file)(?:=.*)?$|^-[A-Za-z]*[FTd]$"
)


def _rule_egress_shapes(ctx: Context) -> Iterator[Hit]:
    """Exfiltration by shape: uploads to drop sites, data in DNS names, home archives sent away."""
    invs = ctx.invs
    for e in ctx.egress:
        inv = invs[e]
        judged = inv.render()
        args = inv.args
        if any(_DROP_HOSTS.search(a) for a in args) and (
            any(_UPLOAD_OPTS.match(a) for a in args) or inv.upstream
        ):
            yield Hit(
                "cmd.exfiltration", "uploads data to a drop or webhook site", inv.span, judged
            )
            return
        if inv.name in ("dig", "nslookup", "host", "drill", "ping") and any(
            _decodes(invs[i]) or invs[i].name in ("base64", "base32", "xxd", "od", "cat", "head")
            for w in inv.words[1:]
            for i in w.subs
        ):
            yield Hit("cmd.exfiltration", "encodes data into a DNS name", inv.span, judged)
            return
        for i in inv.upstream:
            f = invs[i]
            if f.name in ("tar", "zip", "7z", "cpio", "rsync", "cat", "find", "gzip") and any(
                classify(w.text, ctx.cwd) is Place.ROOT for w in f.words[1:]
                if not w.text.startswith("-")
            ):  # fmt: skip
                yield Hit("cmd.exfiltration", f"{f.name} of a home or system root is sent away",
                          _span_of(f.span, inv.span), f.render() + " -> " + judged)  # fmt: skip
                return


def _dumps_environment(inv: Invocation) -> bool:
    """``env``, ``printenv``, ``set``, ``export -p``, ``declare -x``: every variable printed."""
    n, args = inv.name, inv.args
    if n in ("env", "printenv", "set", "export"):
        return not args or args in (["-p"], ["-0"])
    if n in ("declare", "typeset"):
        return bool(args) and all(a.startswith("-") and set(a[1:]) <= set("xpg") for a in args)
    return False


_SENSITIVE_PIECES = re.compile(r"[=@,:\s<]")


def _rule_credentials(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    if ctx.egress:
        egress_span = invs[ctx.egress[0]].span
        reported = False
        for idx, w in ctx.cred_reads:
            yield Hit(
                "cmd.exfiltration",
                f"reads {w.text} and the command line reaches the network",
                _span_of(w.span, egress_span),
                invs[idx].render() + " ; " + invs[ctx.egress[0]].render(),
            )
            reported = True
        if reported:
            return
        # Weaker sources (.env, env dumps, keys by extension) only count when they feed egress.
        for e in ctx.egress:
            inv = invs[e]
            feeders = [invs[i] for i in inv.upstream] + [inv]
            feeders += [invs[s] for w in inv.words for s in w.subs]
            for f in feeders:
                words = [
                    w
                    for i, w in enumerate(f.words[1:], start=1)
                    if f.words[i - 1].text not in _KEY_OPTIONS
                    and w.text not in _KEY_OPTIONS
                    and not w.text.startswith("ssh ")  # rsync -e "ssh -i key": auth, not data
                ]
                for w in [*words, *(r.target for r in f.redirects if r.reads)]:
                    for piece in _SENSITIVE_PIECES.split(w.text):
                        if piece and SENSITIVE_FILES.search(canonical_for_match(piece, ctx.cwd)):
                            if f.name in ("ssh", "scp", "git") and f is inv and f.name != "scp":
                                continue
                            yield Hit(
                                "cmd.exfiltration",
                                f"sends {w.text} to the network",
                                _span_of(w.span, inv.span),
                                f.render() + " -> " + inv.render(),
                            )
                            return
                if f is not inv and (_dumps_environment(f) or f.code_dumps_env):
                    yield Hit(
                        "cmd.exfiltration",
                        "sends the environment to the network",
                        _span_of(f.span, inv.span),
                        f.render() + " -> " + inv.render(),
                    )
                    return
        return
    for idx, w in ctx.cred_reads:
        yield Hit("cmd.credential_read", f"reads credential file {w.text}", w.span,
                  invs[idx].render())  # fmt: skip


_PYTHON_NAMES = frozenset(n for n, lang in INTERPRETERS.items() if lang == "python")
_SUPPLY_NAMES = supply.NAMES | _PYTHON_NAMES | {"twine"}


def _rule_supply(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Installs and runs of packages from URLs, repositories and other indexes; setup.py."""
    n = inv.name
    args = inv.args
    judged = inv.render()
    if n in _PYTHON_NAMES:
        if supply.setup_py_install(args):
            yield Hit("cmd.untrusted_install", "setup.py install runs the project's install script",
                      inv.span, judged)  # fmt: skip
            return
        module_args = supply.pip_module_args(args)
        if module_args is None:
            return
        n, args = "pip", module_args
    why = supply.untrusted_install(n, args)
    if why:
        yield Hit("cmd.untrusted_install", why, inv.span, judged)
    where = supply.foreign_publish(n, args)
    if where:
        yield Hit("cmd.file_transfer", f"{n} publishes the project to {where[:60]}", inv.span,
                  judged)  # fmt: skip
    if n in ("npm", "pnpm", "yarn"):
        verbs = [a for a in args if not a.startswith("-")]
        if (verbs[:3] == ["config", "set", "strict-ssl"] and verbs[3:4] in (["false"], ["0"])) or (
            verbs[:3] == ["set", "strict-ssl", "false"]
        ):
            yield Hit("cmd.tls_off", f"{n} strict-ssl false turns certificate checks off",
                      inv.span, judged)  # fmt: skip


# Folders on a usual PATH, and the programs an agent or a person runs by bare name from them.
_PATH_HINT = re.compile(r"bin/|shims/")
_PATH_DIRS = re.compile(
    r"^(?:~/\.local/bin|~/bin|~/\.cargo/bin|~/go/bin|~/\.npm-global/bin|~/\.bun/bin|"
    r"~/\.deno/bin|/usr/local/s?bin|/usr/s?bin|/s?bin|/opt/homebrew/s?bin|/opt/local/bin|"
    r"~/\.pyenv/shims|~/\.volta/bin|~/\.nvm/versions/node/[^/]+/bin)/([^/]+)$"
)
_COMMON_TOOLS = frozenset(
    {"git", "ls", "cat", "cp", "mv", "rm", "sh", "bash", "zsh", "python", "python3", "pip",
     "pip3", "node", "npm", "npx", "yarn", "pnpm", "ssh", "scp", "sudo", "su", "curl", "wget",
     "make", "gcc", "cc", "go", "cargo", "rustc", "java", "docker", "kubectl", "gh", "grep",
     "find", "sed", "awk", "env", "which", "tar", "gzip", "openssl", "gpg", "claude", "codex",
     "gemini", "cursor", "code", "vim", "nano", "less", "more", "head", "tail", "ps", "kill",
     "id", "whoami", "uv", "poetry", "ruby", "perl", "php", "bun", "deno", "pytest", "tsc",
     "domestique", "aws", "gcloud", "az", "terraform", "helm", "chmod", "chown", "ln", "date",
     "touch", "mkdir", "echo", "printf", "test", "tr", "sort", "xargs"}
)  # fmt: skip
_ACCOUNT_TOOLS = frozenset(
    {"visudo", "vipw", "vigr", "chpasswd", "passwd", "usermod", "useradd", "adduser", "userdel",
     "groupadd", "gpasswd", "sysadminctl", "dseditgroup", "newusers", "deluser", "addgroup"}
)  # fmt: skip
_TAMPER_NAMES = frozenset(
    {"kill", "pkill", "killall", "mv", "chmod", "rm", "cp", "ln", "install", "unlink", "chattr",
     "truncate", "shred", "chflags"}
)  # fmt: skip


def shadowed_tool(path: str, cwd: str | None) -> str | None:
    """The common program a file at ``path`` would shadow on PATH, or None."""
    m = _PATH_DIRS.match(canonical_for_match(path, cwd))
    return m.group(1) if m and m.group(1) in _COMMON_TOOLS else None


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
            named = bool(ctx.guard_re.search(canonical_for_match(w.text, ctx.cwd)))
        if named:
            yield Hit("cmd.guard_tamper", f"{n} targets Domestique ({w.text[:60]})", w.span,
                      judged)  # fmt: skip
            return
    if n in ("ln", "cp", "mv", "install") and len(words) >= 2:
        dest = words[-1]
        tool = shadowed_tool(dest.text, ctx.cwd)
        if tool and n == "ln" and any(w.text.startswith("-") and "s" in w.text for w in words):
            yield Hit("cmd.persistence", f"a link in a PATH folder shadows {tool}", dest.span,
                      judged)  # fmt: skip
        elif tool and n != "ln" and not words[-2].text.startswith(("/usr/", "/bin/", "/opt/")):
            yield Hit("cmd.persistence", f"{n} puts a program named {tool} in a PATH folder",
                      dest.span, judged)  # fmt: skip


# Programs that send what they are given to a host named in their arguments (the provider's own
# command-line tools, such as docker login or helm, are not here: they talk to their own service).
_SENDERS = (
    DOWNLOADERS
    | RAW_NETWORK
    | frozenset(
        {"ssh", "scp", "sftp", "rsync", "mail", "mailx", "sendmail", "mutt", "dig", "nslookup",
         "host", "drill", "ping", "smbclient", "openssl", "ftp", "telnet", "rclone", "s3cmd",
         "mosquitto_pub", "irc", "swaks"}
    )
)  # fmt: skip
_KEY_PATTERN = re.compile(
    r"(?i)AKIA|ASIA|sk-|sk_live|ghp_|gho_|ghs_|github_pat|glpat|xox[abpr]|AIza|BEGIN.{0,20}PRIVATE|"
    r"PRIVATE.KEY|passw|secret|api.?key|token|aws_secret|bearer|credential"
)
_GREP_NAMES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "git", "zgrep", "find"})


def _raw_socket(inv: Invocation) -> bool:
    return any(
        r.writes and ("/dev/tcp/" in r.target.text or "/dev/udp/" in r.target.text)
        for r in inv.redirects
    )


def _feeders(inv: Invocation, invs: list[Invocation]) -> list[Invocation]:
    """The invocations whose output ``inv`` receives: pipe feeders and substitutions."""
    out = [invs[i] for i in inv.upstream if 0 <= i < len(invs)]
    out += [invs[i] for w in inv.words for i in w.subs if 0 <= i < len(invs)]
    out += [invs[i] for r in inv.redirects for i in r.target.subs if 0 <= i < len(invs)]
    return out


def _rule_flows(ctx: Context) -> Iterator[Hit]:
    """Credentials that are not files, and whole repositories, sent to a host not their own.

    Sources: a command that prints a credential (``gh auth token``), a secret-named variable
    (``$OPENAI_API_KEY``), a search for key patterns (``grep -r AKIA``). Senders: ``_SENDERS``,
    interpreter code that talks to the network, any redirect to ``/dev/tcp``/``/dev/udp``.
    """
    invs = ctx.invs
    added_remotes: set[str] = set()
    for inv in invs:
        if inv.name == "git" and inv.args[:2] in (["remote", "add"], ["remote", "set-url"]):
            added_remotes.update(inv.args[2:3])
    for inv in invs:
        raw = _raw_socket(inv)
        judged = inv.render()
        if raw:
            yield Hit("cmd.exfiltration", "writes to a raw network socket (/dev/tcp, /dev/udp)",
                      inv.span, judged)  # fmt: skip
        raw = raw or _publishes(inv)
        if inv.name == "git" and "push" in inv.args:
            yield from _foreign_push(inv, added_remotes, judged)
        sender = raw or inv.name in _SENDERS or (inv.code_network and inv.name in INTERPRETERS)
        if not sender:
            continue
        raw = raw or inv.name in RAW_NETWORK
        hosts = flows.hosts_of(inv.args)
        feeders = _feeders(inv, invs)
        for f in [*feeders, inv]:
            provider = flows.printed_credential(f.name, f.args)
            if (
                provider is not None
                and (f is not inv or raw)
                and (
                    raw or not hosts or not all(flows.host_is_provider(h, provider) for h in hosts)
                )
            ):
                yield Hit(
                    "cmd.exfiltration",
                    f"{f.name} prints a credential that is sent away",
                    _span_of(f.span, inv.span),
                    f.render() + " -> " + judged,
                )
                return
            if f is not inv and f.name in _GREP_NAMES and any(_KEY_PATTERN.search(a)
                                                              for a in f.args):  # fmt: skip
                yield Hit("cmd.exfiltration", "a search for keys or passwords is sent away",
                          _span_of(f.span, inv.span), f.render() + " -> " + judged)  # fmt: skip
                return
        names = flows.secret_variables(
            [*inv.args, *(a for f in feeders if f.name in ("echo", "printf") for a in f.args)]
        ) + [n for n in inv.code_env if flows.is_secret_name(n)]
        for name in dict.fromkeys(names):
            provider = flows.variable_provider(name)
            if not raw and hosts and all(flows.host_is_provider(h, provider) for h in hosts):
                continue
            if raw or provider or any(_DROP_HOSTS.search(h) for h in hosts):
                yield Hit("cmd.exfiltration", f"${name} is sent to a host that is not its own",
                          inv.span, judged)  # fmt: skip
            else:
                yield Hit("cmd.secret_env_egress", f"${name} is sent to {', '.join(hosts)[:80]}",
                          inv.span, judged)  # fmt: skip
            return


def _publishes(inv: Invocation) -> bool:
    """``gh gist create``, ``gh issue create``, ``gh api … -f``: what it is given becomes public
    (or a third party's), whatever the host: no credential belongs there."""
    if inv.name != "gh" or not inv.args:
        return False
    a = inv.args
    return (
        a[:2] in (["gist", "create"], ["gist", "edit"], ["issue", "create"], ["issue", "comment"],
                  ["pr", "comment"], ["pr", "create"], ["release", "upload"])
        or a[0] == "api"
    )  # fmt: skip


def _foreign_push(inv: Invocation, added: set[str], judged: str) -> Iterator[Hit]:
    """``git push`` of every branch or tag to a URL or to a remote added in the same line."""
    _, rest = _git_split(inv.words)
    args = [w.text for w in rest[1:]] if rest and rest[0].text == "push" else []
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        return
    remote = positional[0]
    foreign = remote in added or "://" in remote or bool(_REMOTE_PATH.match(remote))
    if not foreign:
        return
    everything = bool({"--all", "--mirror", "--tags", "--branches"} & set(args)) or any(
        p.startswith(("refs/", "+refs/", "*")) for p in positional[1:]
    )
    if everything:
        yield Hit("cmd.exfiltration", f"pushes the whole repository to {remote[:60]}", inv.span,
                  judged)  # fmt: skip
    else:
        yield Hit("cmd.file_transfer", f"pushes to a remote added here ({remote[:60]})", inv.span,
                  judged)  # fmt: skip


_COMMAND_NAMES = frozenset(
    {
        "crontab", "at", "batch", "launchctl", "systemctl", "service", "rc-service",
        "update-rc.d", "chkconfig", "sv", "rc-update", "systemd-run", "setenforce", "ufw",
        "iptables", "ip6tables", "nft", "pfctl", "spctl", "csrutil", "socketfilterfw", "auditctl",
        "kill", "pkill", "killall", "sysctl", "xattr", "defaults", "history", "set", "unset",
        "journalctl", "log", "chmod", "install", "chown", "chgrp", "insmod", "modprobe",
        "kextload", "kmutil", "shutdown", "reboot", "halt", "poweroff", "security",
        "update-ca-certificates", "update-ca-trust", "trust", "nmap", "tmutil", "code",
        "code-insiders", "devtunnel", "ngrok", "bore", "chisel", "frpc", "lt", "localtunnel",
        "cloudflared", "kickstart", "ssh", "pw", "dsenableroot", "setcap", "visudo", "vipw",
        "vigr", "chpasswd", "passwd", "usermod", "useradd", "adduser", "userdel", "groupadd",
        "gpasswd", "sysadminctl", "dseditgroup", "newusers", "deluser", "addgroup", "dscl",
        "domestique", "pip", "pip3", "pipx", "uv", "export", "declare", "typeset", "local",
        "readonly",
    }
)  # fmt: skip
_DEVICE_NAMES = frozenset(
    {"dd", "wipefs", "blkdiscard", "sgdisk", "zpool", "mdadm", "cryptsetup", "badblocks", "fdisk",
     "sfdisk", "parted", "gdisk", "cfdisk", "diskutil", "cp", "cat", "tee", "mv", "pv"}
)  # fmt: skip
_NET_SHELL_NAMES = frozenset(
    {"nc", "ncat", "netcat", "cryptcat", "pwncat", "sbd", "socat", "xterm"}
)
_DATA_NAMES = (
    _DATA_CLIS
    | DOWNLOADERS
    | {"gh", "rsync", "psql", "mysql", "sqlite3", "mongo", "mongosh", "cqlsh", "clickhouse-client"}
)
_RECON_NAMES_GATE = (
    frozenset({"awk", "find"}) | _GREPS | frozenset(_RECURSIVE_LISTERS) | SHELLS | set(INTERPRETERS)
)
_SHELL_FILE_NAMES = frozenset(
    {"echo", "printf", "cat", "tee", "cp", "ln", "install", "rsync", "sed"}
)
_CONTAINER_NAMES = frozenset({"docker", "podman", "nerdctl", "lxc", "incus", "ctr"})
_RM_NAMES = frozenset({"rm", "unlink", "shred", "srm", "trash", "rmdir", "wipe"})
_MKFS = ("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "newfs")

_TRANSFER_NAMES = frozenset({"scp", "rsync", "sftp", "curl", "wget", "wget2", "http", "xh"})

_SHELL_ESCAPE_SKIP = SHELLS | _SHELL_ESCAPE_OK | WRAPPERS
_ENDS_DELETER = operator.methodcaller("endswith", ("rm", "shred", "unlink"))


def _find_may_delete(inv: Invocation) -> bool:
    """Could a find delete (``-delete``, or an argument naming rm, shred or unlink)?

    What ``_rule_find`` (``-exec rm``…) and ``_rule_writes`` (an argument ending in ``rm``)
    need before they look further: without it, neither can fire on a find.
    """
    args = inv.args
    return "-delete" in args or any(map(_ENDS_DELETER, args))


def _mentions_sh(inv: Invocation, n: str) -> bool:
    """Could ``_rule_shell_escape`` fire on the arguments (it needs ``sh`` in one of them)?"""
    return n not in _SHELL_ESCAPE_SKIP and "sh" in "\n".join(inv.args)


# (rule, gate): a rule runs on an invocation only when its cheap gate says it could fire.
PER_INVOCATION: tuple[tuple[Any, Any], ...] = (
    (_rule_rm, lambda inv, n: n in _RM_NAMES),
    (_rule_find, lambda inv, n: n == "find" and _find_may_delete(inv)),
    (_rule_git, lambda inv, n: n == "git"),
    (_rule_device, lambda inv, n: n in _DEVICE_NAMES or inv.redirects or n.startswith(_MKFS)),
    (_rule_net_shell, lambda inv, n: n in _NET_SHELL_NAMES or inv.redirects),
    (
        _rule_writes,
        lambda inv, n: (
            inv.redirects or n not in READ_ONLY or (n == "find" and _find_may_delete(inv))
        ),
    ),
    (_rule_commands, lambda inv, n: n in _COMMAND_NAMES or inv.env),
    (_rule_shell_escape, lambda inv, n: inv.env or (len(inv.words) > 1 and _mentions_sh(inv, n))),
    (
        _rule_shell_subcommand,
        lambda inv, n: len(inv.words) > 1 and n not in SHELLS and inv.words[1].text == "shell",
    ),
    (_rule_tui_shell_key, lambda inv, n: n in _TUI_SHELL_KEY),
    (_rule_unsafe_mode, lambda inv, n: n in _UNSAFE_MODE_NAMES and len(inv.words) > 1),
    (_rule_package_file, lambda inv, n: n in _PACKAGE_NAMES and len(inv.words) > 1),
    (_rule_recon, lambda inv, n: n in _RECON_NAMES_GATE or "/" in inv.words[0].text),
    (_rule_data, lambda inv, n: n in _DATA_NAMES or n.startswith("kafka-")),
    (_rule_container, lambda inv, n: n in _CONTAINER_NAMES),
    (_rule_shell_files, lambda inv, n: n in _SHELL_FILE_NAMES),
    (_rule_chown_root, lambda inv, n: n in ("chown", "chgrp")),
    (_rule_file_transfer, lambda inv, n: n in _TRANSFER_NAMES),
    (_rule_collection, lambda inv, n: n in _COLLECT_NAMES),
    (_rule_password_attack, lambda inv, n: n in _PASSWORD_TOOLS),
    (_rule_system_settings, lambda inv, n: n in _SETTINGS_NAMES or inv.redirects),
    (_rule_memory_and_scripts, lambda inv, n: n in _MEMORY_NAMES or n in _LINE_EDITORS),
    (_rule_file_server, lambda inv, n: n in _FILE_SERVERS and len(inv.words) > 1),
    (_rule_evasion, lambda inv, n: n in _EVASION_NAMES and len(inv.words) > 1),
    (_rule_supply, lambda inv, n: n in _SUPPLY_NAMES and len(inv.words) > 1),
    (_rule_controls, lambda inv, n: n in _TAMPER_NAMES and len(inv.words) > 1),
    (_rule_move_root, lambda inv, n: n == "mv" and len(inv.words) > 2),
)


def judge_unfolded(
    command: str, unfolded: Unfolded, *, cwd: str | None, domestique_home: str | None
) -> tuple[list[Hit], bool]:
    """Every hit for the unfolded command line, and whether it reaches the network."""
    invs = unfolded.invocations
    egress: list[int] = []
    ctx = Context(
        cwd=cwd,
        guard_re=_guard_re(domestique_home),
        invs=invs,
        egress=egress,
        cred_reads=[],
        index={},
    )
    hits = list(unfolded.hits)
    # One pass: the per-invocation rules (none reads the egress list or the credential reads),
    # and the facts the line rules share or that decide whether they can fire at all.
    names: set[str] = set()
    texts: list[str] = []
    exec_data = False
    code_creds = False
    privileged = False
    for i, inv in enumerate(invs):
        n = inv.name
        names.add(n)
        texts += inv.args
        if inv.redirects:
            texts += [r.target.text for r in inv.redirects]
            if is_egress(inv):
                egress.append(i)
        elif (n in NETWORK or inv.code_network) and is_egress(inv):
            egress.append(i)
        if inv.exec_data:
            exec_data = True
        if inv.code_creds:
            code_creds = True
        words = inv.words
        if (inv.via and not _PRIVILEGED_VIA.isdisjoint(inv.via)) or (
            words and words[0].text.startswith(_TEMP_EXEC)
        ):
            privileged = True
        if not words:
            continue
        for rule in _rules_for(inv):
            hits.extend(rule(inv, ctx))
    for name, value in unfolded.assignments:
        hits.extend(_assignment_hit(name, value.text, value.span, f"{name}={value.text}"))
    # One test over every word first: most command lines name no credential file at all.
    if _cred_hint("\n".join(texts)):
        for i, inv in enumerate(invs):
            ctx.cred_reads += [(i, w) for w in _cred_words(inv, ctx)]
            if inv.code_creds:
                ctx.cred_reads += [(i, Word(c, True, inv.span)) for c in inv.code_creds]
    elif code_creds:
        for i, inv in enumerate(invs):
            if inv.code_creds:
                ctx.cred_reads += [(i, Word(c, True, inv.span)) for c in inv.code_creds]
    # The line rules run only when a name or fact they need is present (most lines: none).
    if exec_data or not names.isdisjoint(_EXEC_DATA_NAMES):
        hits.extend(_rule_exec_data(ctx))
    if not names.isdisjoint(_SAVED_EXEC_NAMES):
        hits.extend(_rule_saved_exec(ctx))
    if egress or ctx.cred_reads:
        hits.extend(_rule_credentials(ctx))
    if egress:
        hits.extend(_rule_flows(ctx))
    if egress:
        hits.extend(_rule_egress_shapes(ctx))
    if not command.isascii():
        hits.extend(_rule_non_ascii(command))
    if privileged:
        hits.extend(_rule_privileged(ctx))
    return hits, bool(egress)


# _rule_exec_data fires only with exec_data, a fifo maker, or a shell or interpreter in the line.
_EXEC_DATA_NAMES = frozenset({"mkfifo", "mknod"}) | SHELLS | frozenset(INTERPRETERS)
# _rule_saved_exec saves a path only for a download (a downloader, git archive, interpreter code
# that reaches the network) or a decode other than echo/printf: no such name, nothing to find.
_FETCHERS = frozenset({"aria2c", "scp", "rsync", "git", "hg", "svn", "gh"})
_SAVED_EXEC_NAMES = (
    DOWNLOADERS | (DECODERS - {"echo", "printf"}) | _FETCHERS | frozenset(INTERPRETERS)
)
_RULES_FOR: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _rules_for(inv: Invocation) -> tuple[Any, ...]:
    """The rules whose gate passes for ``inv``, in ``PER_INVOCATION`` order.

    Every gate reads only the program name, whether there are redirections or environment
    assignments, whether there are arguments, whether the command word has a slash, whether the
    first argument is ``shell``, whether an argument contains ``sh`` (for the names
    ``_rule_shell_escape`` does not skip) and whether a find may delete, so the selection is
    cached on those eight facts (bounded). The last three keep rules that would otherwise run
    on almost every invocation (or every find), only to return at once, from running.
    """
    words = inv.words
    n = inv.name
    many = len(words) > 1
    key = (
        n,
        bool(inv.redirects),
        bool(inv.env),
        many,
        "/" in words[0].text,
        many and words[1].text == "shell",
        many and n not in _SHELL_ESCAPE_SKIP and "sh" in "\n".join(inv.args),
        n == "find" and _find_may_delete(inv),
    )
    rules = _RULES_FOR.get(key)
    if rules is None:
        rules = tuple(rule for rule, gate in PER_INVOCATION if gate(inv, n))
        if len(_RULES_FOR) >= 4096:
            _RULES_FOR.clear()
        _RULES_FOR[key] = rules
    return rules


_GUARD_RE: dict[str | None, re.Pattern[str]] = {}


def _guard_re(home: str | None) -> re.Pattern[str]:
    pattern = _GUARD_RE.get(home)
    if pattern is None:
        pattern = _GUARD_RE[home] = guard_paths(home)
    return pattern
