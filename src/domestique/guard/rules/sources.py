"""Round 8: commands that point a project's dependencies at another source.

``go mod edit -replace OLD=NEW`` with NEW another owner's module, ``npm pkg set
dependencies.X=URL`` (and pnpm's), ``git submodule add URL`` of a repository on a host that is
no public code host, or of another owner than the project's own ``origin``. Text written into
dependency files is judged in the unfold stage (:mod:`domestique.guard.buildfiles`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from domestique.guard import buildfiles
from domestique.guard.model import Hit, Invocation
from domestique.guard.rules.common import git_split, internal_host
from domestique.guard.rules.registry import Context, rule

_DEPENDENCY_KEYS = re.compile(
    r"^(?:dependencies|devDependencies|optionalDependencies|peerDependencies|overrides|"
    r"resolutions|pnpm\.overrides)\.[^=]+=(.+)$"
)
_REMOTE_DEPENDENCY = re.compile(
    r"(?i)^['\"]?(?:git\+\w+|git|https?|github|gitlab|bitbucket|gist|file\+https?):|^['\"]?[\w.-]+/[\w.-]+(?:#.*)?['\"]?$"
)
_CODE_HOSTS = frozenset(
    {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "git.sr.ht", "gitee.com",
     "salsa.debian.org", "gitlab.gnome.org", "invent.kde.org", "gitlab.freedesktop.org",
     "chromium.googlesource.com", "android.googlesource.com", "go.googlesource.com"}
)  # fmt: skip
_REPO_URL = re.compile(
    r"(?i)^(?:(?:https?|git|ssh)://(?:[^@/]+@)?([^/:]+)(?::\d+)?/|(?:[\w.-]+@)?([\w.-]+):(?!//))"
    r"([^/]+)"
)


@rule(programs={"go", "npm", "pnpm", "yarn", "bun", "git"}, args=True)
def _rule_dependency_source(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """A dependency pointed at another owner's code by a command (not a file edit)."""
    n, args = inv.name, inv.args
    judged = inv.render()
    if n == "go" and args[:2] == ["mod", "edit"]:
        for i, a in enumerate(args):
            value = args[i + 1] if a == "-replace" and i + 1 < len(args) else (
                a.split("=", 1)[1] if a.startswith("-replace=") else "")  # fmt: skip
            old, eq, new = value.partition("=")
            why = buildfiles.foreign_replace(old, new) if eq else None
            if why:
                yield Hit("cmd.untrusted_install", f"go mod edit {why}", inv.span, judged)
                return
    elif n in ("npm", "pnpm", "yarn", "bun") and args[:2] == ["pkg", "set"]:
        for a in args[2:]:
            m = _DEPENDENCY_KEYS.match(a)
            if m and _REMOTE_DEPENDENCY.match(m.group(1)):
                why = f"{n} pkg set makes a dependency {m.group(1)[:60]}"
                yield Hit("cmd.untrusted_install", why, inv.span, judged)
                return
    elif n == "git":
        rest = [w.text for w in git_split(inv.words)[1]]
        if rest[:2] == ["submodule", "add"]:
            urls = [t for t in rest[2:] if not t.startswith("-")][:1]
            why = _foreign_repository(urls[0], ctx) if urls else None
            if why:
                yield Hit("cmd.untrusted_install", f"git submodule add brings in {why}",
                          inv.span, judged)  # fmt: skip


def _owner(url: str) -> tuple[str, str] | None:
    m = _REPO_URL.match(url)
    if m is None:
        return None
    return (m.group(1) or m.group(2) or "").lower(), m.group(3).lower()


def _foreign_repository(url: str, ctx: Context) -> str | None:
    """Why a submodule URL is another party's code: a host that is no public code host and no
    company-internal one, or another owner on a code host than the project's ``origin``."""
    if url.startswith(("./", "../", "/")):
        return None  # a repository beside this one (relative to its own remote)
    owner = _owner(url)
    if owner is None:
        return None
    host, name = owner
    if host not in _CODE_HOSTS:
        if internal_host(host):
            return None
        return f"code from {host}, no public code host"
    origin = _origin_owner(ctx)
    if origin is not None and origin != owner:
        return f"{name}'s code from {host}, not the project's own ({origin[1]})"
    return None


_ORIGIN = re.compile(r'(?ms)^\[remote "origin"\][^\[]*?^\s*url\s*=\s*(\S+)')


def _origin_owner(ctx: Context) -> tuple[str, str] | None:
    """The host and owner of the project's ``origin`` remote (its .git/config), if readable."""
    read = ctx.env.read_file
    if read is None or not ctx.cwd:
        return None
    try:
        data = read(os.path.join(ctx.cwd, ".git", "config"))
    except OSError:
        return None
    if not data:
        return None
    m = _ORIGIN.search(data.decode("utf-8", "replace"))
    return _owner(m.group(1)) if m else None
