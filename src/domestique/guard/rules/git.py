"""Rules about git: history rewrites, discards, pushes to protected branches, hooks and config."""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.paths import Place, classify
from domestique.guard.rules.common import cd_before, git_split, opts
from domestique.guard.rules.registry import Context, rule
from domestique.guard.rules.scoped import (
    only_lock_files,
    regenerated,
)
from domestique.guard.rules.vocab import PROTECTED_BRANCHES

_GIT_EXEC_KEYS = re.compile(
    r"(?i)^(?:alias\.[^=]+=\s*!|core\.(?:pager|sshcommand|fsmonitor|hookspath|editor|askpass|"
    r"gitproxy)|sequence\.editor|diff\.external|diff\.[^.]+\.(?:textconv|command)|"
    r"filter\.[^.]+\.(?:clean|smudge|process)|credential\.helper=\s*!|gpg\.(?:[^.]+\.)?program|"
    r"uploadpack\.packobjectshook|merge\.[^.]+\.driver|pager\.[^=]+|protocol\.ext\.allow|"
    r"remote\.[^.]+\.(?:uploadpack|receivepack)|url\.[^.]+\.insteadof|"
    r"init\.templatedir)"
)


_GIT_TLS_KEY = re.compile(r"(?i)^http\.(?:.+\.)?sslverify$")


def _repo_folder(inv: Invocation, ctx: Context) -> str | None:
    """The folder git works in: its last ``-C DIR``, else the folder a ``cd`` went to."""
    words = [w.text for w in inv.words]
    dirs = [words[i + 1] for i, t in enumerate(words[:-1]) if t == "-C"]
    return dirs[-1] if dirs else cd_before(inv, ctx)


@rule(programs={"git"})
def _rule_git(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    if inv.name != "git":
        return
    judged = inv.render()
    configs, rest = git_split(inv.words)
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
        yield from _git_config(inv, args, judged)
        return
    if sub == "push":
        yield from _git_push(inv, rest, judged)
    elif sub == "reset" and ("--hard" in args or "--merge" in args):
        yield Hit("cmd.destructive.git_discard", "git reset --hard discards work", inv.span, judged)
    elif sub == "clean":
        flags, paths = opts(rest[1:])
        # -X removes only ignored files (build output); a pathspec of build folders is the same
        only_output = "X" in flags or (bool(paths) and all(regenerated(p.text, ctx) for p in paths))
        if (
            ("f" in flags or "--force" in flags)
            and not ({"n", "--dry-run"} & flags)
            and not only_output
        ):
            yield Hit("cmd.destructive.git_discard", "git clean -f deletes untracked files",
                      inv.span, judged)  # fmt: skip
            repo = _repo_folder(inv, ctx)
            if (
                "d" in flags
                and repo is not None
                and classify(repo, ctx.cwd, ctx.env) is (Place.ROOT)
            ):  # git -C ~ clean -ffdx: every untracked file and folder of home (or /)
                yield Hit("cmd.destructive.rm_root", f"git clean -d deletes all of {repo}",
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
    elif sub in ("checkout", "restore") and not only_lock_files(sub, args) and (
        ("--" in args and sub == "checkout" and args[args.index("--") + 1 :])
        or (sub == "checkout" and args in (["."], ["--", "."], ["-f"], ["--force"]))
        or (sub == "restore" and args and (
            ("--staged" not in args and "-S" not in args)
            or "--worktree" in args or "-W" in args
        ))
        or (sub == "checkout" and ("-f" in args or "--force" in args))
    ):  # fmt: skip
        yield Hit("cmd.destructive.git_discard", f"git {sub} discards uncommitted changes",
                  inv.span, judged)  # fmt: skip
    elif sub in ("reflog",) and "expire" in args and any("now" in a or "all" in a for a in args):
        yield Hit("cmd.destructive.git_discard", "git reflog expire drops history", inv.span,
                  judged)  # fmt: skip
    elif sub in ("filter-branch", "filter-repo"):
        yield Hit("cmd.destructive.git_discard", f"git {sub} rewrites history", inv.span, judged)
    elif (
        sub == "update-ref"
        and "-d" in args
        and not all(a.startswith("refs/remotes/") for a in args if not a.startswith("-"))
    ):  # a remote-tracking ref deleted is fetched again: only a branch or tag of one's own asks
        yield Hit("cmd.destructive.git_discard", "git update-ref -d", inv.span, judged)


def _git_config(inv: Invocation, args: list[str], judged: str) -> Iterator[Hit]:
    """``git config KEY VALUE``: TLS off, values that run a program, force-push aliases."""
    positional = [a for a in args if not a.startswith("-")]
    if positional:
        key = positional[0]
        value = positional[1] if len(positional) > 1 else ""
        if _GIT_TLS_KEY.match(key) and value.lower() in ("false", "0", "no", "off"):
            yield Hit("cmd.tls_off", f"git config {key} {value} turns certificate checks off",
                      inv.span, judged)  # fmt: skip
        runs = _GIT_EXEC_KEYS.match(f"{key}={value}") or _GIT_EXEC_KEYS.match(key)
        if runs is None and key.lower() == "credential.helper" and _TEMP_STORE.search(value):
            runs = _GIT_EXEC_KEYS.match("core.hookspath")  # passwords kept in a temp file
        if runs is None and key.lower() == "safe.directory" and value == "*":
            runs = _GIT_EXEC_KEYS.match("core.hookspath")  # every repository's hooks trusted
        if runs is None and _foreign_rewrite(key, value):
            runs = _GIT_EXEC_KEYS.match("url.x.insteadof")  # fetches rewritten elsewhere
        if runs and _plain_viewer(key, value):
            runs = None  # core.pager 'less -R', core.editor 'code --wait': the usual tools
        if runs and (len(positional) > 1 or "--add" in args):
            yield Hit("cmd.git.config_exec", f"git config {key} runs a program",
                      inv.span, judged)  # fmt: skip
        if key.lower().startswith("alias.") and re.search(
            r"push\s.*(?:-f\b|--force|--mirror|\+)", value
        ):
            yield Hit("cmd.git.force_push", f"alias {key} force-pushes", inv.span, judged)


# A published release tag (v2.3.1, refs/tags/1.4.0-rc1): moving it swaps what users install.
_RELEASE_TAG = re.compile(r"^(?:refs/tags/.+|v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?)$")


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
        elif delete and "xargs" in inv.via:
            # `git branch -r | xargs -n1 git push origin --delete`: refs from a list, many at once
            yield Hit("cmd.git.force_push", "git push --delete of refs read from a list",
                      inv.span, judged)  # fmt: skip
        return
    for r in refspecs:
        spec = r.text
        plus = spec.startswith("+")
        spec = spec.lstrip("+")
        dst = spec.split(":", 1)[1] if ":" in spec else spec
        src = spec.split(":", 1)[0] if ":" in spec else spec
        deleting = delete or (":" in spec and src == "")
        protected = bool(PROTECTED_BRANCHES.match(dst) or _RELEASE_TAG.match(dst)) or not r.literal
        if (force or plus) and protected:
            yield Hit("cmd.git.force_push", f"force push to {dst or spec}", r.span, judged)
        elif deleting and protected:
            yield Hit("cmd.git.force_push", f"deletes protected branch {dst}", r.span, judged)


# Pagers and editors people set in git config; with plain options only they run nothing else.
_VIEWERS = frozenset(
    {"less", "more", "most", "cat", "delta", "diff-so-fancy", "bat", "batcat", "vim", "nvim",
     "vi", "nano", "emacs", "emacsclient", "code", "code-insiders", "subl", "mate", "micro",
     "hx", "kak", "gedit", "kate", "cursor", "zed", "idea", "ydiff", "riff", "diff-highlight"}
)  # fmt: skip
_VIEWER_KEYS = frozenset({"core.pager", "core.editor", "sequence.editor"})
_PLAIN_VALUE = re.compile(r"[\w./=:,+ -]*")


def _plain_viewer(key: str, value: str) -> bool:
    """``core.pager 'less -R'``: a known pager or editor with plain options (no shell syntax)."""
    if key.lower() not in _VIEWER_KEYS and not key.lower().startswith("pager."):
        return False
    words = value.split()
    if key.lower().startswith("pager.") and value.lower() in _BOOLEANS:
        return True  # pager.branch false: no pager at all
    return bool(words) and words[0] in _VIEWERS and bool(_PLAIN_VALUE.fullmatch(value))


_TEMP_STORE = re.compile(r"--file[= ]\s*[\"']?/(?:tmp|var/tmp|dev/shm|private/tmp)/")
_BOOLEANS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


_URL_HOST = re.compile(r"^(?:[a-z][\w+.-]*://)?(?:[^@/]*@)?([^/:]+)", re.I)


def _foreign_rewrite(key: str, value: str) -> bool:
    """``url.https://evil/.insteadOf https://github.com/``: every fetch of the second goes to a
    different host (the same host by ssh instead of https is an everyday rewrite)."""
    k = key.lower()
    if not (k.startswith("url.") and k.endswith((".insteadof", ".pushinsteadof"))):
        return False
    a = _URL_HOST.match(key[4:].rsplit(".", 1)[0])
    b = _URL_HOST.match(value)
    return a is not None and b is not None and a.group(1).lower() != b.group(1).lower()
