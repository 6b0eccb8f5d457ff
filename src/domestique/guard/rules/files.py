"""Rules about files and devices: deletes, writes, permissions, devices, system settings, data
stores.
"""

from __future__ import annotations

import operator
import posixpath
import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.names import SHELLS
from domestique.guard.paths import (
    ACCOUNT_FILES,
    CREDENTIAL_FILES,
    HISTORY_FILES,
    PERSISTENCE_FILES,
    SHELL_STARTUP_FILES,
    Place,
    canonical_for_match,
    classify,
    default_branch,
    normalize,
)
from domestique.guard.rules.common import (
    DB_CLIENTS,
    SHELL_ARG,
    cd_before,
    cred_hint,
    db_remote,
    opts,
    shadowed_tool,
    tunnelled,
)
from domestique.guard.rules.registry import Context, position, rule
from domestique.guard.rules.scoped import (
    container_data_verbs,
    dry_run,
    keeps_data,
    rsync_deploy,
    rsync_stays_local,
)
from domestique.guard.rules.startup import configures_shell
from domestique.guard.rules.vocab import DISK, DOWNLOADERS, READ_ONLY, TEMP_TOPS

_SETGID_MODE = re.compile(r"^(?:[gugoa]*\+[rwxXt]*s[rwxXt]*|0?[2-3][0-7]{3})$")


_WORLD_WRITABLE = re.compile(r"^(?:0?[0-7]?[0-7][0-7][2367]|[ugoa]*[+=][rwxXst]*w[rwxXst]*)$")


_SETUID_MODE = re.compile(r"^(?:[ua]*\+[rwxXt]*s[rwxXt]*|0?[4-7][0-7]{3})$")


# ------------------------------------------------------------------------ per-invocation rules


# Download caches in home that package managers rebuild by themselves (no ``..`` step out), and
# one named virtual environment of pipenv or virtualenvwrapper (recreated from the project).
_HOME_CACHES = re.compile(
    r"^(?!.*/\.\.(?:/|$))~/(?:\.cache(?:/[^/]+)*|\.npm/_(?:cacache|npx|logs)|\.cargo/registry/(?:cache|src)|"
    r"\.gradle/caches|\.m2/repository|Library/Caches/[^/]+|\.pnpm-store|\.yarn/cache|"
    r"go/pkg/mod/cache|\.bun/install/cache|\.nuget/packages|\.composer/cache|"
    r"Library/Developer/Xcode/DerivedData(?:/[^/]+)?|Library/Developer/CoreSimulator/Caches|"
    r"\.android/build-cache|\.gradle/build-cache-\d+|"
    r"\.local/share/virtualenvs/[^/.][^/]*|\.virtualenvs/[^/.][^/]*)/?$"
)


_RM_NAMES = frozenset({"rm", "unlink", "shred", "srm", "trash", "rmdir", "wipe"})


def _echoed_target(t: Word, ctx: Context) -> str:
    """``"$(echo ~)"``, ``$(printf %s "$HOME")``, ``$(eval echo ~$USER)``: the target is what
    the echo prints (the shell expands its words first); any other word is itself."""
    if len(t.subs) != 1 or not t.text.startswith(("$(", "`")):
        return t.text
    f = ctx.invs[t.subs[0]] if t.subs[0] < len(ctx.invs) else None
    if f is None or f.upstream:
        return t.text
    words = [w.text for w in f.words]
    if f.name == "mktemp" and all(w.literal for w in f.words):
        return "/tmp/tmp.mktemp"  # noqa: S108 - a new temporary file or folder, named for classify
    if f.name == "eval" and words[1:2] == ["echo"]:
        words = words[1:]
    if words[:1] == ["echo"] and len(words) == 2:
        printed = words[1]
    elif words[:2] == ["printf", "%s"] and len(words) == 3:
        printed = words[2]
    else:
        return t.text
    suffix = t.text[t.text.rindex(")") + 1 :] if ")" in t.text else ""
    if re.match(r"^~\$\{?(?:USER|LOGNAME)\}?$", printed):
        printed = "~"  # ~$USER: one's own home
    return printed + suffix


@rule(programs=_RM_NAMES)
def _rule_rm(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    if n not in ("rm", "unlink", "shred", "srm", "trash", "rmdir", "wipe"):
        return
    flags, targets = opts(inv.words[1:])
    recursive = bool({"r", "R", "--recursive"} & flags) or n in ("srm", "wipe")
    judged = inv.render()
    if "--no-preserve-root" in flags:
        yield Hit("cmd.destructive.rm_root", "rm --no-preserve-root", inv.span, judged)
    if n == "rmdir":
        return
    if n == "shred" and not ({"u", "--remove"} & flags):
        for t in targets:
            if classify(t.text, ctx.cwd, ctx.env) in (Place.DEVICE,) and DISK.match(t.text):
                yield Hit("cmd.device_write", "shred overwrites a disk device", t.span, judged)
        return
    base = cd_before(inv, ctx) if ctx.invs[0] is not inv else None
    for t in targets:
        place = classify(_echoed_target(t, ctx), ctx.cwd, ctx.env)
        if base is not None and place is Place.PROJECT_ROOT:
            # `cd ~ && rm -rf .`: the folder the line went to, not the working folder
            moved = classify(
                posixpath.normpath(posixpath.join(normalize(base), t.text)), ctx.cwd, ctx.env
            )
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
        elif place is Place.HOME and _HOME_CACHES.match(
            canonical_for_match(t.text, ctx.cwd, ctx.env)
        ):
            continue  # a package manager's download cache: rebuilt on the next install
        elif place in (Place.SYSTEM, Place.HOME, Place.OUTSIDE):
            yield Hit(
                "cmd.destructive.rm_outside",
                f"deletes {t.text} outside the project",
                t.span,
                judged,
            )
        elif place is Place.DEVICE:
            if DISK.match(t.text):
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


@rule(programs={"find"}, when="find_deletes")
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
    base = cd_before(inv, ctx) if ctx.invs[0] is not inv else None
    for r in roots or [Word(".", True, inv.span)]:
        place = classify(r.text, ctx.cwd, ctx.env)
        if base is not None and place in (Place.PROJECT_ROOT, Place.PROJECT):
            # `cd ~ && find . -delete`: under the folder the line went to
            moved = classify(
                posixpath.normpath(posixpath.join(normalize(base), r.text)), ctx.cwd, ctx.env
            )
            place = moved if moved is not Place.VARIABLE else place
        if r.text.rstrip("/") in TEMP_TOPS:
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


_DEVICE_NAMES = frozenset(
    {"dd", "wipefs", "blkdiscard", "sgdisk", "zpool", "mdadm", "cryptsetup", "badblocks", "fdisk",
     "sfdisk", "parted", "gdisk", "cfdisk", "diskutil", "cp", "cat", "tee", "mv", "pv"}
)  # fmt: skip


_MKFS = ("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "newfs")


@rule(programs=_DEVICE_NAMES, prefixes=_MKFS, also=("redirects",))
def _rule_device(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    judged = inv.render()
    for r in inv.redirects:
        if r.writes and DISK.match(r.target.text):
            yield Hit("cmd.device_write", f"writes to {r.target.text}", r.target.span, judged)
        elif r.writes and r.target.text in ("/proc/sysrq-trigger",):
            yield Hit("cmd.destructive.shutdown", "sysrq trigger", r.target.span, judged)
    if n == "dd":
        for w in inv.words[1:]:
            if w.text.startswith("of=") and DISK.match(w.text[3:]):
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
    elif n in ("cp", "cat", "tee", "mv", "pv") and any(DISK.match(a) for a in inv.args[-1:]):
        yield Hit("cmd.device_write", f"{n} writes to a disk device", inv.span, judged)
    elif n == "mv" and inv.args[-1:] == ["/dev/null"]:
        yield Hit("cmd.destructive.rm_outside", "mv to /dev/null deletes", inv.span, judged)


@rule(programs=None, except_programs=READ_ONLY, also=("redirects", "find_deletes"))
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
        path = canonical_for_match(text, ctx.cwd, ctx.env)
        if path in seen:
            continue
        seen.add(path)
        guard, persistence, account, history = _path_marks(path, ctx.guard_re)
        other = default_branch(text)  # ${DOMESTIQUE_HOME:-~/.domestique}/x: the unset branch
        if other is not None and not guard:
            guard = _path_marks(canonical_for_match(other, ctx.cwd, ctx.env), ctx.guard_re)[0]
        if guard:
            yield Hit("cmd.guard_tamper", f"{n} changes {text}", t.span, judged)
        if n in ("cat", "grep", "ls") and not via_redirect:
            continue
        if persistence and n not in ("rm", "unlink", "shred") and not configures_shell(inv, t, ctx):
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
        if (via_redirect or n == "tee") and n not in DOWNLOADERS and "/" in text:
            tool = shadowed_tool(text, ctx.cwd, ctx.env)
            if tool:  # printf '#!/bin/sh …' > ~/.local/bin/sudo: a wrapper run as the real one
                yield Hit("cmd.persistence", f"{n} writes a program named {tool} in a PATH "
                          "folder", t.span, judged)  # fmt: skip
    if n in ("ln",) and args and args[0] in ("-s", "-sf", "-fs") and len(args) >= 3:
        dest = canonical_for_match(args[-1], ctx.cwd, ctx.env)
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


@rule(programs={"mv"}, args=True)
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
        if classify(w.text, ctx.cwd, ctx.env) is Place.ROOT and w.text.rstrip("/*") not in (
            "",
            ".",
        ):
            yield Hit("cmd.destructive.rm_root", f"mv moves {w.text} away", w.span, inv.render())
            return


@rule(programs={"chown", "chgrp"})
def _rule_chown_root(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``chown root …``: files handed to root (a step towards setuid tricks)."""
    _, rest = opts(inv.words[1:])
    if len(rest) >= 2 and rest[0].text.split(":", 1)[0].split(".", 1)[0] in ("root", "0"):
        yield Hit("cmd.privilege.permissions", f"{inv.name} gives files to root", inv.span,
                  inv.render())  # fmt: skip


def _appends(inv: Invocation, target: Word) -> bool:
    return any(r.target is target and r.op == ">>" for r in inv.redirects)


@rule(programs={"chown", "chgrp"}, args=True)
def _rule_chown(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """chown/chgrp on the root or a system folder, or recursively on the home folder."""
    flags, rest = opts(inv.words[1:])
    judged = inv.render()
    for t in rest[1:]:
        place = classify(t.text, ctx.cwd, ctx.env)
        if place in (Place.ROOT, Place.SYSTEM) or (
            place is Place.HOME and "R" in flags and t.text.rstrip("/") in ("~",)
        ):
            yield Hit("cmd.privilege.permissions", f"{inv.name} on {t.text}", t.span, judged)


@rule(programs={"chmod", "install"}, args=True)
def _rule_chmod(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Setuid/setgid modes; world-writable or recursive modes on system places or credentials."""
    flags, rest = opts(inv.words[1:])
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
        place = classify(t.text, ctx.cwd, ctx.env)
        if (place is Place.ROOT and (wide or recursive)) or (place is Place.SYSTEM and wide):
            yield Hit("cmd.privilege.permissions", f"chmod {mode} on {t.text}", t.span, judged)
        elif (
            place is Place.HOME
            and wide
            and CREDENTIAL_FILES.search(canonical_for_match(t.text, ctx.cwd, ctx.env))
        ):
            yield Hit("cmd.privilege.permissions", f"chmod {mode} opens {t.text}", t.span, judged)


# Service and storage CLIs whose destroying verbs delete data that is not in the project.
# (kind, minikube and k3d clusters live on this machine: deleting one is a dev reset.)
_DATA_CLIS = frozenset(
    {
        "aws", "gcloud", "gsutil", "az", "kubectl", "helm", "terraform", "pulumi", "vault", "op",
        "doppler", "rclone", "restic", "borg", "velero", "nats", "circleci", "gh", "glab",
        "rabbitmqctl", "rabbitmqadmin", "gitlab-runner", "heroku", "fly", "flyctl", "vercel",
        "netlify", "firebase", "supabase", "doctl", "hcloud", "openstack", "s3cmd", "mc", "consul",
        "etcdctl", "stripe", "redis-cli", "docker", "podman", "nomad", "kubeadm", "eksctl",
        "docker-compose", "linode-cli", "ibmcloud", "oci", "tsh", "argocd",
        "flux", "kafka-topics", "kafka-consumer-groups", "kafka-configs", "kafka-acls",
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


_DATA_NAMES = (
    _DATA_CLIS
    | DOWNLOADERS
    | {"gh", "rsync", "psql", "mysql", "sqlite3", "mongo", "mongosh", "cqlsh", "clickhouse-client",
       "dropdb", "dropuser", "mysqladmin"}
)  # fmt: skip


@rule(programs=_DATA_NAMES, prefixes=("kafka-",))
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
        if n in ("docker", "podman", "docker-compose"):
            remote = any(k in ("DOCKER_HOST", "DOCKER_CONTEXT") for k in inv.env)
            verbs = container_data_verbs(
                [*args, "-H"] if remote else args, compose=n == "docker-compose"
            )
        if n == "rclone" and {"sync", "move"} & set(args[:1]):
            verbs = args[:1]
        if n == "kubectl" and args[:1] == ["delete"]:
            verbs = [] if _pods_only(positional, args) else ["delete"]
        if (
            dry_run(args)
            or keeps_data(n, positional, args)
            or (n in DB_CLIENTS and _this_machine(inv, ctx))
        ):
            verbs = []
        if verbs:
            yield Hit("cmd.destructive.data", f"{n} {verbs[0]} deletes data outside the project",
                      inv.span, judged)  # fmt: skip
            return
    if n in DOWNLOADERS and any(_METADATA.search(a) for a in args):
        yield Hit("cmd.credential_read", "queries the cloud metadata service (credentials)",
                  inv.span, judged)  # fmt: skip
    if n in DOWNLOADERS or n == "gh":
        flat = " ".join(args)
        if (_HTTP_DELETE.search(flat) or (
            n in ("http", "https", "xh") and args[:1] and args[0].upper() == "DELETE"
        )) and not _loopback_only(inv, ctx):  # fmt: skip
            yield Hit("cmd.destructive.data", f"{n} sends an HTTP DELETE", inv.span, judged)
            return
    if n == "rsync" and any(a.startswith("--delete") for a in args):
        _, paths = opts(inv.words[1:])
        dest = paths[-1].text if len(paths) >= 2 else ""
        place = classify(dest, ctx.cwd, ctx.env) if dest and ":" not in dest else None
        if place is Place.ROOT:  # rsync -a --delete empty/ ~/: home made a copy of nothing
            yield Hit("cmd.destructive.rm_root", f"rsync --delete empties {dest}", inv.span,
                      judged)  # fmt: skip
            return
    if (
        n == "rsync"
        and any(a.startswith(("--delete", "--remove-source-files", "--remove-sent")) for a in args)
        and not dry_run(args, rsync=True)
        and not rsync_stays_local(args, ctx)
        and not rsync_deploy(args, ctx)
    ):
        yield Hit(
            "cmd.destructive.data", "rsync deletes files at the destination", inv.span, judged
        )
        return
    databases = ("psql", "mysql", "sqlite3", "mongo", "mongosh", "cqlsh", "clickhouse-client")
    if _this_machine(inv, ctx):
        return  # the developer's own local database (tests, dev data): theirs to reset
    if n in ("dropdb", "dropuser") or (n == "mysqladmin" and {"drop", "-f"} & set(args)):
        yield Hit("cmd.destructive.data", f"{n} drops a database or role", inv.span, judged)
        return
    if (n in databases and _SQL_DESTROY.search(" ".join([*args, *_sql_fed(inv, ctx)]))) or (
        n == "redis-cli" and {"flushall", "flushdb"} & {a.lower() for a in args}
    ):
        yield Hit("cmd.destructive.data", f"{n} drops or empties data", inv.span, judged)


# libpq/ODBC connection strings: `psql "host=db.prod dbname=app"`, `psql service=prod`,
# `--defaults-file`/`--login-path` (mysql): a host that is not this machine, or one not shown.
_CONNINFO_ELSEWHERE = re.compile(
    r"(?i)(?:^|\s)(?:host|hostaddr|server|service)\s*=\s*(?!(?:localhost|127\.[\d.]+|::1)\b)"
    r"|^--(?:defaults(?:-extra)?-file|login-path)\b"
)


def _this_machine(inv: Invocation, ctx: Context) -> bool:
    """A database client (or dropdb) that connects to this machine: no host, or a loopback host,
    named literally (``psql "$DATABASE_URL"`` may go anywhere), on a port the line does not
    forward elsewhere (``ssh -L 5433:prod-db:5432 … && psql -h localhost -p 5433``)."""
    n = inv.name
    if tunnelled(inv, ctx):
        return False
    if n not in DB_CLIENTS and n not in ("dropdb", "dropuser", "mysqladmin"):
        return n == "sqlite3"  # a file on this machine
    if any("$" in a or "`" in a or _CONNINFO_ELSEWHERE.search(a) for a in inv.args) or any(
        k in ("PGHOST", "MYSQL_HOST", "REDISCLI_URL", "PGSERVICE", "PGSERVICEFILE") for k in inv.env
    ):
        return False  # a host or service given another way: it may be anywhere
    if n in DB_CLIENTS:
        return db_remote(inv) is None
    host = next(
        (inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a in ("-h", "--host")),
        next((a.split("=", 1)[1] for a in inv.args if a.startswith("--host=")), ""),
    )
    return host in ("", "localhost", "::1") or host.startswith(("127.", "/"))


_URL_HOST = re.compile(r"(?i)^(?:https?://)?(?:[^@/\s]*@)?(\[[^\]]*\]|[^/:?#\s]+)")
# Every index or record at once (`/_all`, `/*`, `/logs-*`, a list): more than one named resource.
_WIDE_PATH = re.compile(
    r"(?i)/_all\b|\*|,|/_(?:data_stream|snapshot|delete_by_query)\b|/$|^(?::\d+)?$"
)
_LOOPBACK = re.compile(r"(?i)^(?:localhost|127(?:\.\d+){3}|\[::1\]|0\.0\.0\.0)$")


def _loopback_only(inv: Invocation, ctx: Context) -> bool:
    """Every address an HTTP client is given is this machine (``curl -X DELETE
    localhost:9200/idx``, a local dev service) and no port of the line is forwarded away."""
    urls = [a for a in inv.args if not a.startswith("-") and a.upper() != "DELETE"]
    urls = [u for u in urls if "/" in u or ":" in u or "localhost" in u.lower()]
    if not urls or tunnelled(inv, ctx):
        return False
    for u in urls:
        m = _URL_HOST.match(u)
        if m is None or not _LOOPBACK.match(m.group(1)) or _WIDE_PATH.search(u[m.end() :]):
            return False
    return not any(a in ("--connect-to", "--resolve", "-x", "--proxy") for a in inv.args)


def _sql_fed(inv: Invocation, ctx: Context) -> list[str]:
    """SQL a database client reads on stdin: a here-string or here-document, or what an
    ``echo``/``printf`` piped into it prints (``echo 'TRUNCATE users;' | psql -h db``)."""
    out = [inv.stdin_text] if inv.stdin_text else []
    for u in inv.upstream:
        if 0 <= u < len(ctx.invs) and ctx.invs[u].name in ("echo", "printf", "cat"):
            out += ctx.invs[u].args
    return out


def _pods_only(positional: list[str], args: list[str]) -> bool:
    """``kubectl delete pod NAME``: a named pod is recreated by its deployment (a restart);
    ``--all``, a selector or every namespace is not one pod."""
    kinds = positional[1:2]
    wide = {"--all", "-A", "--all-namespaces", "-l", "--selector", "--field-selector"}
    return (
        bool(kinds)
        and kinds[0].lower() in ("pod", "pods", "po")
        and len(positional) > 2
        and not wide & {a.split("=", 1)[0] for a in args}
    )


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


@rule(programs=_SETTINGS_NAMES, also=("redirects",))
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
        path = canonical_for_match(t.text, ctx.cwd, ctx.env)
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


@rule(programs=_MEMORY_NAMES | _LINE_EDITORS)
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
            if token and cred_hint(token) and CREDENTIAL_FILES.search(token):
                yield Hit("cmd.credential_read", f"{n} script opens {token}", inv.span, judged)
                return


_SCRIPT_TOKENS = re.compile(r"[\s,]+|\\n")


_SHELL_FILE_NAMES = frozenset(
    {"echo", "printf", "cat", "tee", "cp", "ln", "install", "rsync", "sed"}
)


@rule(programs=_SHELL_FILE_NAMES)
def _rule_shell_files(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Text that starts a shell written to a file or piped to a tool; shell binaries copied."""
    n = inv.name
    judged = inv.render()
    me = position(ctx, inv)
    feeds_other = any(me in o.upstream for o in ctx.invs)
    writes = any(r.writes and r.target.text not in ("/dev/null",) for r in inv.redirects)
    text: str | None = None
    if (writes or n == "tee") and not feeds_other and _inert_project_write(inv, ctx, me):
        return  # text kept in a project file nothing in the line uses: data (README, tests)
    if writes and not feeds_other and _only_shell_startup(inv, ctx):
        return  # text for ~/.bashrc and the like is judged as the shell code it is (unfold)
    if n in ("echo", "printf") and (writes or feeds_other):
        text = " ".join(w.text for w in inv.words[1:])
    elif n in ("cat", "tee") and inv.stdin_text is not None and (writes or n == "tee"):
        text = inv.stdin_text
    if text is not None:
        body = "\n".join(line for line in text.replace("\\n", "\n").split("\n")
                         if not line.lstrip().startswith("#!"))  # fmt: skip
        if SHELL_ARG.search(body) or re.search(
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


def _only_shell_startup(inv: Invocation, ctx: Context) -> bool:
    """Does ``inv`` write known text only into shell start-up files (judged there as code)?"""
    if inv.name in ("echo", "printf") and not all(w.literal for w in inv.words):
        return False  # the text is not known, so unfold cannot judge it
    targets = [r.target for r in inv.redirects if r.writes]
    return bool(targets) and all(
        t.literal and SHELL_STARTUP_FILES.search(canonical_for_match(t.text, ctx.cwd, ctx.env))
        for t in targets
    )


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
            or classify(t, ctx.cwd, ctx.env) is not Place.PROJECT
            or any(base in w for w in later)
            or not _DATA_FILE.search(t)
        ):
            return False
    return True


# Files that hold text for people or for tests, which no tool runs by itself (package.json,
# Gemfile, Makefile, makepkg.conf and other manifests do not match). A test file's strings are
# the cases it checks: the test runner runs the test's code, not the text it quotes.
_DATA_FILE = re.compile(
    r"(?i)\.(?:md|markdown|txt|rst|adoc|org|html?|csv|tsv|log|tex|ya?ml)$|"
    r"(?:^|/)(?:tests?|docs?|spec|__tests__|examples?|fixtures|testdata)/(?:[^/.][^/]*/)*"
    r"[^/]+\.[a-z]+$|"
    r"(?:block|deny|allow)[-_]?list[^/]*$|"
    r"(?:^|/)(?:test_[^/]+\.py|[^/]+_test\.(?:py|go|rb|exs?)|[^/]+\.(?:test|spec)\.[cm]?[jt]sx?|"
    r"[^/]+_spec\.rb|[^/]+Tests?\.(?:java|kt|swift|cs|php))$"
)


_SED_E_COMMAND = re.compile(r"(?:\d+|\$|/[^/]*/)?e(?:\s.*)?", re.S)


_SED_E_FLAG = re.compile(r"s/.*/.*/[gip]*e[gip]*$")
