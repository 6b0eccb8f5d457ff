"""The project itself sent away: its files packed or dumped into a sender, copied whole to a
bucket or a new public repository, or its pushes redirected to another URL.

An agent works inside a repository; sending one file to a host is ``cmd.file_transfer`` already
(``scp``, ``curl -T``). These rules see the shapes that ship *the whole project* without naming
a file: an archive or dump of it written to standard output and piped into a sender
(``tar cf - . | ssh h 'cat > r.tar'``, ``git archive HEAD | nc h 9``, ``git log -p | curl
--data-binary @- …``), a recursive upload of the project folder (``rclone copy . remote:``,
``aws s3 sync . s3://b``, ``gsutil cp -r . gs://b``), ``gh repo create --source=. --push``, and
a push URL set to somewhere else (``git remote set-url --push``, ``remote.X.pushurl``). Each asks
(a deploy or backup can look the same); a paste or drop host denies as exfiltration.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard import flows
from domestique.guard.model import Hit, Invocation
from domestique.guard.names import INTERPRETERS
from domestique.guard.paths import Place, classify
from domestique.guard.rules.common import DROP_HOSTS, internal_host, span_of, storage_upload
from domestique.guard.rules.network import SENDERS
from domestique.guard.rules.registry import Context, line_rule, rule

_WHOLE = (Place.PROJECT_ROOT,)
_ARCHIVERS = frozenset({"tar", "bsdtar", "gtar", "zip", "7z", "7za", "git", "find", "cpio"})


def _whole_project(text: str, ctx: Context) -> bool:
    """``.``, ``./``, ``*``, the project folder by its path, ``$PWD``."""
    return classify(text, ctx.cwd, ctx.env) in _WHOLE


def _tar_to_stdout(args: list[str]) -> bool:
    first = args[0] if args else ""
    bundle = first.lstrip("-") if first and not first.startswith("--") else ""
    if "c" not in bundle and "--create" not in args and "-c" not in args:
        return False
    for i, a in enumerate(args):
        if a in ("-f", "--file") or (
            a.startswith("-") and not a.startswith("--") and a.endswith("f")
        ):
            return i + 1 < len(args) and args[i + 1] == "-"
        if a.startswith("--file="):
            return a == "--file=-"
    if bundle.endswith("f"):
        return len(args) > 1 and args[1] == "-"
    return True  # no -f: the archive goes to standard output


def dumps_project(inv: Invocation, ctx: Context) -> bool:
    """Does ``inv`` write the project's files (or its history) to standard output?"""
    n, args = inv.name, inv.args
    if n not in _ARCHIVERS or any(r.writes and r.fd in ("", "1") for r in inv.redirects):
        return False
    positional = [a for a in args if not a.startswith("-") or a == "-"]
    if n in ("tar", "bsdtar", "gtar"):
        return _tar_to_stdout(args) and any(_whole_project(p, ctx) for p in positional[1:] or [])
    if n == "zip":
        return (
            bool(positional)
            and positional[0] == "-"
            and any(_whole_project(p, ctx) for p in positional[1:])
        )
    if n in ("7z", "7za"):
        return "-so" in args and any(_whole_project(p, ctx) for p in positional[2:])
    if n == "find":
        return (
            bool(positional)
            and _whole_project(positional[0], ctx)
            and any(
                a == "-exec" and i + 1 < len(args) and args[i + 1] in ("cat", "tar", "zip")
                for i, a in enumerate(args)
            )
        )
    if n == "git" and positional:
        sub, rest = positional[0], args[args.index(positional[0]) + 1 :]
        if sub == "archive":
            return not any(a in ("-o", "--output") or a.startswith("--output=") for a in rest)
        if sub == "bundle":
            return rest[:1] == ["create"] and rest[1:2] == ["-"]
        if sub == "log":
            return any(a in ("-p", "--patch", "-u") for a in rest)
        if sub == "format-patch":
            return "--stdout" in rest
    return False


def _fed_by(ctx: Context, i: int) -> list[int]:
    """Every invocation whose output reaches invocation ``i`` through pipes (transitively)."""
    seen: list[int] = []
    todo = list(ctx.invs[i].upstream)
    while todo:
        u = todo.pop()
        if u in seen or not 0 <= u < len(ctx.invs):
            continue
        seen.append(u)
        todo.extend(ctx.invs[u].upstream)
    return seen


def _sends(inv: Invocation) -> bool:
    return (
        inv.name in SENDERS
        or (inv.code_network and inv.name in INTERPRETERS)
        or storage_upload(inv)
        or any("/dev/tcp/" in r.target.text or "/dev/udp/" in r.target.text for r in inv.redirects)
    )


def _local_only(inv: Invocation) -> bool:
    hosts = flows.hosts_of(inv.args)
    return bool(hosts) and all(flows.loopback(h) for h in hosts)


@line_rule(facts=("egress",))
def _rule_project_piped_out(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    for e in ctx.egress:
        s = invs[e]
        if not _sends(s) or _local_only(s):
            continue
        for u in _fed_by(ctx, e):
            if dumps_project(invs[u], ctx):
                hosts = flows.hosts_of(s.args)
                code = (
                    "cmd.exfiltration"
                    if any(DROP_HOSTS.search(h) for h in hosts)
                    else "cmd.file_transfer"
                )
                yield Hit(
                    code,
                    f"{invs[u].name} packs the project and {s.name} sends it to another host",
                    span_of(invs[u].span, s.span),
                    invs[u].render() + " | " + s.render(),
                )
                return


_UPLOADERS = frozenset({"rclone", "aws", "gsutil", "gcloud", "az", "azcopy", "s3cmd", "gh", "git"})


def _recursive_copy_of_project(inv: Invocation, ctx: Context) -> bool:
    n, args = inv.name, inv.args
    positional = [a for a in args if not a.startswith("-")]
    if n == "rclone":
        return (
            positional[:1] in (["copy"], ["sync"], ["move"], ["copyto"])
            and len(positional) >= 3
            and _whole_project(positional[1], ctx)
            and ":" in positional[2]  # the destination (later words may be option values)
        )
    if n == "aws":
        return (
            (
                positional[:1] == ["s3"]
                and positional[1:2] in (["sync"], ["cp"])
                and (positional[1] == "sync" or "--recursive" in args)
                and any(p.startswith("s3://") for p in positional)
                and _whole_project(positional[2], ctx)
            )
            if len(positional) > 2
            else False
        )
    if n in ("gsutil", "gcloud", "s3cmd", "azcopy") and storage_upload(inv):
        recursive = bool({"-r", "-R", "--recursive"} & set(args))
        sources = [p for p in positional if "://" not in p and p not in (
            "s3", "cp", "sync", "mv", "storage", "put", "copy")]  # fmt: skip
        return recursive and any(_whole_project(p, ctx) for p in sources)
    return False


@rule(programs=_UPLOADERS)
def _rule_project_uploaded(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    judged = inv.render()
    args = inv.args
    if _recursive_copy_of_project(inv, ctx):
        yield Hit("cmd.file_transfer", f"{inv.name} copies the whole project to a bucket",
                  inv.span, judged)  # fmt: skip
        return
    if inv.name == "gh" and args[:2] == ["repo", "create"] and "--push" in args and any(
        a in ("--source=.", "--source=./") or (a == "--source" and i + 1 < len(args)
                                                and _whole_project(args[i + 1], ctx))
        or (a.startswith("--source=") and _whole_project(a.split("=", 1)[1], ctx))
        for i, a in enumerate(args)
    ):  # fmt: skip
        yield Hit("cmd.file_transfer", "gh repo create --push publishes the project to a new "
                  "repository", inv.span, judged)  # fmt: skip
        return
    if inv.name == "git":
        positional = [a for a in args if not a.startswith("-")]
        if positional[:2] == ["remote", "set-url"] and "--push" in args:
            yield Hit("cmd.file_transfer", "git remote set-url --push sends later pushes "
                      "elsewhere", inv.span, judged)  # fmt: skip
        elif (
            positional[:1] == ["config"]
            and len(positional) >= 3
            and positional[1].lower().startswith("remote.")
            and positional[1].lower().endswith(".pushurl")
        ):
            yield Hit("cmd.file_transfer", f"git config {positional[1]} sends later pushes "
                      "elsewhere", inv.span, judged)  # fmt: skip


# Anonymous, throw-away image registries: anyone pulls what is pushed there, no account needed.
_DROP_REGISTRIES = re.compile(
    r"(?i)^(?:ttl\.sh|registry\.ngrok\.\w+|"
    r"[\w.-]+\.(?:ngrok\.io|ngrok-free\.app|trycloudflare\.com|loca\.lt|serveo\.net))(?::\d+)?$"
)
_PUBLIC_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")


def _pushed_images(inv: Invocation) -> list[str]:
    """The image references a container tool pushes: ``docker push REF``, ``buildx build
    --push -t REF``, ``skopeo copy SRC docker://REF``, ``crane push TAR REF``."""
    n, args = inv.name, inv.args
    positional = [a for a in args if not a.startswith("-")]
    if n in ("docker", "podman", "nerdctl", "buildah") and positional[:1] == ["push"]:
        return positional[1:]
    if n in ("docker", "podman") and "--push" in args:
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--tag")]
    if n == "skopeo" and positional[:1] == ["copy"]:
        return [p.split("://", 1)[1] for p in positional[2:] if p.startswith("docker://")]
    if n == "crane" and positional[:1] in (["push"], ["copy"]):
        return positional[2:3]
    return []


@rule(programs={"docker", "podman", "nerdctl", "buildah", "skopeo", "crane"}, args=True)
def _rule_image_pushed(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """An image pushed to an anonymous registry (``ttl.sh``) or to a bare public address: the
    project's files in it leave for a place no company runs. A push to a named registry is the
    everyday deploy (the guard cannot tell the company's from another: docs/known-escapes.md)."""
    for ref in _pushed_images(inv):
        registry = ref.split("/", 1)[0] if "/" in ref else ""
        if not registry or internal_host(registry) or flows.loopback(registry.split(":")[0]):
            continue
        if _DROP_REGISTRIES.match(registry):
            yield Hit("cmd.exfiltration", f"{inv.name} pushes an image to an anonymous registry "
                      f"({registry[:60]})", inv.span, inv.render())  # fmt: skip
            return
        if _PUBLIC_IP.match(registry):
            yield Hit("cmd.file_transfer", f"{inv.name} pushes an image to a bare address "
                      f"({registry[:60]})", inv.span, inv.render())  # fmt: skip
            return
