"""Narrow allowances: operations that stay in the project, a temp or cache folder, or ship
build output (issue 17, everyday stops).

Each helper answers "does this command only touch what a tool rebuilds or the project owns?";
the rules in :mod:`.files`, :mod:`.git` and :mod:`.network` keep asking about everything else.
Pure functions of the words, ``cwd`` and the :class:`~domestique.guard.env.GuardEnv`.
"""

from __future__ import annotations

import re

from domestique.guard.model import Invocation, Word
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.paths import Place, classify
from domestique.guard.rules.common import REMOTE_PATH, build_output
from domestique.guard.rules.registry import Context
from domestique.guard.rules.vocab import NETWORK, RAW_NETWORK
from domestique.guard.supply import option_values


def container_data_verbs(args: list[str], *, compose: bool = False) -> list[str]:
    """The docker/podman verb that deletes data: volumes, or containers with their volumes.

    Images, build cache, networks and containers kept apart from their volumes are rebuilt or
    pulled again (``docker image prune``, ``docker rm api``, ``docker system prune``): routine.
    """
    pos = [a for a in args if not a.startswith("-")][:2]
    volumes = bool({"-v", "--volumes"} & set(args)) or any(
        a[:1] == "-" and a[1:2] != "-" and "v" in a for a in args
    )
    if pos[:1] == ["volume"] and pos[1:] in (["rm"], ["prune"], ["remove"]):
        return pos[:1]
    if (compose or pos[:1] == ["compose"]) and "down" in args and volumes:
        # The volumes the project's own compose file declares (its dev database), on this
        # machine's daemon: the project's to reset. Another daemon, or a compose file from
        # outside the project, names someone else's.
        if not _compose_elsewhere(args):
            return []
        return ["down -v" if compose else "compose down -v"]
    if (pos[:1] == ["rm"] or pos == ["container", "rm"] or pos[1:] == ["prune"]) and volumes:
        return pos[:1]
    return []


def _compose_elsewhere(args: list[str]) -> bool:
    for i, a in enumerate(args):
        flag, eq, value = a.partition("=")
        if flag in ("-H", "--host", "-c", "--context", "-p", "--project-name") or a.startswith(
            "-H"
        ):  # another daemon, or a project named by name (it may be another one)
            return True
        if flag in ("-f", "--file", "--project-directory"):
            path = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if path.startswith(("/", "~", "$")) or ".." in path.split("/"):
                return True
    return False


# Read-only or waiting kubectl verbs: a later word such as ``--for delete`` names no deletion.
_KUBECTL_LOOKS = frozenset(
    {"get", "describe", "logs", "wait", "explain", "top", "diff", "events", "api-resources"}
)


# Kubernetes contexts of a cluster on this machine (kind, minikube, k3d, Docker Desktop …): its
# namespaces and workloads are the developer's scratch space, rebuilt with one command.
_LOCAL_CLUSTER = re.compile(
    r"^(?:kind-[\w.-]+|k3d-[\w.-]+|minikube|docker-desktop|docker-for-desktop|rancher-desktop|"
    r"colima(?:-[\w.-]+)?|orbstack|microk8s)$"
)


def local_cluster(args: list[str]) -> bool:
    """``kubectl … --context kind-dev`` / ``helm … --kube-context minikube``: the command names
    a cluster that runs on this machine (only an explicit context counts: the default one may be
    production)."""
    named = option_values(args, ("--context", "--kube-context"))
    return bool(named) and all(_LOCAL_CLUSTER.match(c) for c in named)


def keeps_data(n: str, positional: list[str], args: list[str]) -> bool:
    """A verb that deletes only one's own local settings, a cache, a branch already merged, or
    objects in a cluster that runs on this machine."""
    head = positional[:2]
    if n in ("kubectl", "helm") and local_cluster(args):
        return True
    if n == "kubectl" and positional[:1] and positional[0] in _KUBECTL_LOOKS:
        return True
    if n == "gh" and (head[:1] in (["alias"], ["cache"]) or head == ["pr", "merge"]):
        return True  # gh aliases are local; an Actions cache is rebuilt; a merged branch is kept
    return n == "helm" and head in (["repo", "rm"], ["repo", "remove"])


def dry_run(args: list[str], *, rsync: bool = False) -> bool:
    """``--dry-run`` (or ``=client|server|true``), or rsync's ``-n`` in a bundle of flags."""
    for a in args:
        if a in ("--dry-run", "--dryrun") or a in (
            "--dry-run=client",
            "--dry-run=server",
            "--dry-run=true",
        ):  # ``--dryrun``: the AWS CLI's spelling (aws s3 rm/sync … --dryrun)
            return True
        if rsync and _RSYNC_DRY.fullmatch(a):
            return True
    return False


# An rsync flag bundle with -n before any flag that takes a value (-e, -B, -f, -M, -T).
_RSYNC_DRY = re.compile(r"-[AC-DF-LN-SU-Zac-dg-z]*n[A-Za-z]*")

_LOCAL_PLACES = (Place.PROJECT, Place.TEMP)  # not the project root itself (rm -rf * asks)


def rsync_stays_local(args: list[str], ctx: Context) -> bool:
    """rsync deletes only in the project or a temp folder: a local destination there, and with
    ``--remove-source-files`` local sources there too (no ``host:``, no variable)."""
    operands = _rsync_operands(args)
    if len(operands) < 2:
        return False
    removes_sources = any(a.startswith(("--remove-source-files", "--remove-sent")) for a in args)
    judged = operands if removes_sources else operands[-1:]
    return all(
        ":" not in o
        and "$" not in o
        and "`" not in o
        and classify(o, ctx.cwd, ctx.env) in _LOCAL_PLACES
        for o in judged
    )


def rsync_deploy(args: list[str], ctx: Context) -> bool:
    """``rsync --delete dist/ deploy@web:/var/www/site/``: build output mirrored into a named
    folder on a host (not ``host:``, ``host:~``, ``host:/`` or a top folder such as ``/srv``)."""
    operands = _rsync_operands(args)
    if len(operands) < 2 or any(a.startswith("--remove-s") for a in args):
        return False
    *sources, dest = operands
    if not REMOTE_PATH.match(dest) or dest.startswith("rsync://") or "::" in dest:
        return False
    path = dest.split(":", 1)[1]
    if not path.strip("/.~") or any(c in path for c in "$`*?[") or ".." in path.split("/"):
        return False
    place = classify(path, None, ctx.env)
    return place in (Place.SYSTEM, Place.HOME, Place.PROJECT, Place.OUTSIDE) and all(
        build_output(s, ctx.cwd, ctx.env) for s in sources
    )


def _rsync_operands(args: list[str]) -> list[str]:
    """rsync's paths: the words that are neither options nor an option's value."""
    return [
        a
        for i, a in enumerate(args)
        if not a.startswith("-") and (i == 0 or args[i - 1] not in _RSYNC_VALUE_OPTS)
    ]


_RSYNC_VALUE_OPTS = frozenset(
    {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-B", "-M", "-T", "--temp-dir",
     "--files-from", "--port"}
)  # fmt: skip


# Folders a tool fills again by itself: dependencies and caches (git clean -xfd node_modules/).
_REFILLED_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
     ".ruff_cache", ".tox", ".nox", ".next", ".nuxt", ".parcel-cache", ".turbo", ".gradle",
     "coverage", "htmlcov", ".cache"}
)  # fmt: skip


def regenerated(path: str, ctx: Context) -> bool:
    """Build output, or a dependency or cache folder, inside the project."""
    if build_output(path, ctx.cwd, ctx.env):
        return True
    parts = path.removeprefix("./").split("/")
    return (
        parts[0] in _REFILLED_DIRS
        and ".." not in parts
        and classify(path, ctx.cwd, ctx.env) is Place.PROJECT
    )


# Lock files a package manager writes again from the manifest: discarding their changes loses
# nothing a person wrote.
_LOCK_FILES = frozenset(
    {"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock",
     "uv.lock", "Pipfile.lock", "Cargo.lock", "go.sum", "Gemfile.lock", "composer.lock",
     "bun.lock", "bun.lockb", "flake.lock", "mix.lock", "pubspec.lock", "Podfile.lock",
     "packages.lock.json"}
)  # fmt: skip


def only_lock_files(sub: str, args: list[str]) -> bool:
    """``git checkout -- package-lock.json``, ``git restore src/app.py``: lock files or files
    named one by one (not a folder, a glob or the whole tree)."""
    if sub == "checkout":
        if "--" not in args:
            return False
        paths = args[args.index("--") + 1 :]
    else:
        paths = [a for i, a in enumerate(args) if not a.startswith("-")
                 and args[i - 1] not in ("-s", "--source") and a != "--"]  # fmt: skip
    return bool(paths) and all(
        (p.rsplit("/", 1)[-1] in _LOCK_FILES or _NAMED_FILE.match(p)) and ".." not in p.split("/")
        for p in paths
    )


# One file named with its extension (`src/app.py`): an edit of that file undone, as an editor's
# revert would; `.`, a folder, a glob, `:/` or a magic pathspec discard more than the file named.
_NAMED_FILE = re.compile(r"^(?!:)(?:[\w@+-][\w.@+-]*/)*[\w@+-][\w@+-]*(?:\.[\w-]+)+$")


# Options of scp and rsync whose value is the next word (a port, key, jump host, remote shell).
_TRANSFER_VALUE_OPTS = {
    "scp": frozenset("cDFiJlmoPSX"),
    "rsync": frozenset("eBfMT"),
}
_RSYNC_LONG_VALUES = frozenset(
    {"--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from",
     "--include-from", "--files-from", "--temp-dir", "--port", "--password-file", "--chmod",
     "--chown", "--log-file", "--partial-dir", "--backup-dir", "--suffix", "--compare-dest",
     "--copy-dest", "--link-dest", "--bwlimit", "--timeout", "--contimeout", "--iconv"}
)  # fmt: skip


def transfer_operands(n: str, words: list[Word]) -> list[str]:
    """The paths of an scp or rsync command, without the values of its options."""
    takes = _TRANSFER_VALUE_OPTS[n]
    out: list[str] = []
    skip = False
    done = False
    for w in words[1:]:
        t = w.text
        if skip:
            skip = False
        elif done or not t.startswith("-") or t == "-":
            out.append(t)
        elif t == "--":
            done = True
        elif t.startswith("--"):
            skip = n == "rsync" and t in _RSYNC_LONG_VALUES
        else:
            # in a bundle, the first flag that takes a value takes the rest or the next word
            for k, c in enumerate(t[1:], start=1):
                if c in takes:
                    skip = k == len(t) - 1
                    break
    return out


CONTAINER_TOOLS = frozenset({"docker", "podman", "nerdctl", "docker-compose", "podman-compose"})


def container_env_file(inv: Invocation, i: int) -> bool:
    """``docker run --env-file .env``: word ``i`` is the file the engine loads (not sent)."""
    if inv.name not in CONTAINER_TOOLS or not plain_container_run(inv):
        return False
    return inv.words[i - 1].text == "--env-file" or inv.words[i].text.startswith("--env-file=")


# A container command that could print or send the environment it was given.
_CONTAINER_SENDERS = (
    NETWORK
    | RAW_NETWORK
    | SHELLS
    | frozenset(INTERPRETERS)
    | {
        "env",
        "printenv",
        "cat",
        "set",
        "export",
    }
)


def plain_container_run(inv: Invocation) -> bool:
    """``docker compose --env-file .env.dev up``: the project's compose file decides what the
    values feed, and no word of the line names a shell, interpreter, network tool or an
    environment dump. ``docker run --env-file .env IMAGE`` is not one: the values go to
    whatever program an image (perhaps someone else's) runs, so that stays a credential read."""
    compose = inv.name.endswith("-compose") or (inv.args[:1] == ["compose"])
    if not compose:
        return False
    for w in inv.words[1:]:
        for token in w.text.replace(";", " ").replace("|", " ").split():
            if token.rsplit("/", 1)[-1] in _CONTAINER_SENDERS or "/dev/tcp" in token:
                return False
    return True


# A dotenv file: one NAME=value per line (a PEM key has lines without "=", printed whole by cut).
_DOTENV = re.compile(r"(?:^|/)(?:\.env(?:\.[\w-]+)?|[\w-]+\.env)$")


def _drops_values(inv: Invocation) -> bool:
    """``cut -d= -f1``, ``awk -F= '{print $1}'``, ``sed 's/=.*//'``: only what is before the
    first ``=`` of each line comes out (the names of a ``.env`` file, not its values)."""
    args = inv.args
    if inv.name == "cut":
        joined = " ".join(args)
        return bool(_CUT_NAMES.fullmatch(joined))
    if inv.name in ("awk", "gawk", "mawk"):
        program = args[1:2] if args[:1] == ["-F="] else args[2:3] if args[:2] == ["-F", "="] else []
        return bool(program) and program[0].replace(" ", "") == "{print$1}"
    if inv.name == "sed":
        return len(args) in (1, 2) and args[0] in ("s/=.*//", "s/=.*$//")
    return False


_CUT_NAMES = re.compile(r"(?:-d ?['\"]?=['\"]? -f ?1|-f ?1 -d ?['\"]?=['\"]?)(?: \S+)?")


def names_only(ctx: Context, idx: int, path: str) -> bool:
    """Is what ``invs[idx]`` reads from the dotenv file ``path`` cut down to the names before ``=``
    (by the command itself or by every stage it pipes into), and written nowhere?"""
    inv = ctx.invs[idx]
    if not _DOTENV.search(path) or any(r.writes for r in inv.redirects):
        return False
    if _drops_values(inv):
        return True
    downstream = [o for o in ctx.invs if idx in o.upstream]
    return bool(downstream) and all(_drops_values(o) for o in downstream)
