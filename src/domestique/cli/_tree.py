"""The files ``domestique scan DIR`` and ``scan --staged`` read.

Inside a git work tree the list comes from git itself (``git ls-files``: tracked files and
untracked ones that ``.gitignore``, ``.git/info/exclude`` and the global excludes do not
ignore; ``--staged``: the index's version of each added, copied, modified or renamed file).
Outside one, the directory is walked, ``.git``/``.hg``/``.svn`` are skipped and every
``.gitignore`` met on the way is honoured (the common syntax: globs, ``**``, a leading or inner
``/`` anchoring to the file's folder, a trailing ``/`` for folders only, ``!`` to re-include).

Symbolic links are not followed (a link can point outside the tree). A file with a NUL byte in
its first 8 KiB is binary and skipped; so is one larger than :data:`MAX_FILE_BYTES`. Both are
counted, never silently dropped.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 20 * 1024 * 1024
_SNIFF = 8192
_VCS_DIRS = frozenset({".git", ".hg", ".svn"})
_GIT_TIMEOUT_S = 60


class TreeError(Exception):
    """The file list could not be made (git failed, not a repository for --staged)."""


@dataclass
class Skipped:
    """Files not scanned, by why."""

    binary: list[str] = field(default_factory=list)
    too_large: list[str] = field(default_factory=list)


def _git(args: list[str], cwd: Path) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TreeError(f"git could not run ({type(exc).__name__})") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TreeError(f"git {args[0]} failed: {message[0] if message else done.returncode}")
    return done.stdout


def _no_git_entry_above(directory: Path) -> bool:
    """True when git could not find a work tree for ``directory``: no ``.git`` (folder, or the
    file of a linked worktree or submodule) in it or any parent, and no ``GIT_DIR`` or
    ``GIT_WORK_TREE`` pointing elsewhere. Then asking git (a process) is skipped."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return False
    try:
        here = directory.resolve()
        return not any(os.path.lexists(p / ".git") for p in (here, *here.parents))
    except OSError:
        return False  # ask git


def git_root(directory: Path) -> Path | None:
    """The top of the git work tree holding ``directory``; None outside one (or no git)."""
    if _no_git_entry_above(directory):
        return None
    try:
        out = _git(["rev-parse", "--show-toplevel"], directory)
    except TreeError:
        return None
    text = out.decode("utf-8", "surrogateescape").strip()
    return Path(text) if text else None


def is_binary(head: bytes) -> bool:
    """A NUL byte in the first bytes: what git and grep call binary."""
    return b"\0" in head[:_SNIFF]


# -- the .gitignore fallback ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool


def _compile(line: str) -> _Pattern | None:
    text = line.rstrip("\n").rstrip("\r")
    if not text.strip() or text.startswith("#"):
        return None
    if not text.endswith("\\ "):
        text = text.rstrip(" ")
    negate = text.startswith("!")
    if negate:
        text = text[1:]
    text = text.removeprefix("\\")
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    text = text.lstrip("/")
    if not text:
        return None
    # "**/" any leading folders, "/**" everything inside, "*" and "?" never cross "/".
    parts: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif text.startswith("/**", i) and i + 3 == len(text):
            parts.append("/.*")
            i += 3
        elif text.startswith("**", i):
            parts.append(".*")
            i += 2
        elif text[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif text[i] == "?":
            parts.append("[^/]")
            i += 1
        elif text[i] == "[":
            close = text.find("]", i + 1)
            if close < 0:
                parts.append(re.escape(text[i]))
                i += 1
            else:
                inner = text[i + 1 : close].replace("\\", "\\\\")
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                parts.append(f"[{inner}]")
                i = close + 1
        else:
            parts.append(re.escape(text[i]))
            i += 1
    try:
        regex = re.compile("".join(parts) + r"\Z")
    except re.error:
        return None
    return _Pattern(regex, negate, dir_only, anchored)


def _ignored(rel: str, is_dir: bool, rules: list[tuple[str, list[_Pattern]]]) -> bool:
    """Whether ``rel`` (relative to the walk's top) is ignored; the last match decides."""
    result = False
    for base, patterns in rules:
        if base and not rel.startswith(base + "/"):
            continue
        local = rel[len(base) + 1 :] if base else rel
        name = local.rsplit("/", 1)[-1]
        for p in patterns:
            if p.dir_only and not is_dir:
                continue
            target = local if p.anchored else name
            if p.regex.match(target):
                result = not p.negate
    return result


def _read_gitignore(path: Path) -> list[_Pattern]:
    try:
        text = path.read_text("utf-8", "surrogateescape")
    except OSError:
        return []
    return [p for line in text.splitlines() if (p := _compile(line)) is not None]


def walk(top: Path) -> Iterator[Path]:
    """Every regular file under ``top`` that no ``.gitignore`` met on the way ignores."""
    rules: list[tuple[str, list[_Pattern]]] = []

    def visit(directory: Path, rel: str) -> Iterator[Path]:
        ignore = directory / ".gitignore"
        added = False
        if ignore.is_file():
            rules.append((rel, _read_gitignore(ignore)))
            added = True
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name in _VCS_DIRS or _ignored(child, True, rules):
                    continue
                yield from visit(Path(entry.path), child)
            elif entry.is_file(follow_symlinks=False) and not _ignored(child, False, rules):
                yield Path(entry.path)
        if added:
            rules.pop()

    yield from visit(top, "")


# -- the lists ----------------------------------------------------------------------------------


def files_in(directory: Path) -> list[Path]:
    """The files ``scan DIR`` reads, sorted: git's list inside a work tree, else a walk."""
    root = git_root(directory)
    if root is None:
        return list(walk(directory))
    out = _git(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."], directory
    )
    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    paths: list[Path] = []
    for name in dict.fromkeys(names):
        path = directory / name
        # Deleted but still tracked, a submodule (a folder), a link: nothing to read here.
        if path.is_symlink() or not path.is_file():
            continue
        paths.append(path)
    return sorted(paths)


def staged_files(directory: Path) -> list[tuple[str, bytes]]:
    """``(path relative to the repository top, staged bytes)`` for each staged file that has
    content (added, copied, modified, renamed; deletions have none)."""
    root = git_root(directory)
    if root is None:
        raise TreeError(f"{directory} is not inside a git repository (--staged reads the index)")
    out = _git(
        ["diff", "--cached", "--name-only", "-z", "--no-renames", "--diff-filter=ACMR"], root
    )
    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    staged: list[tuple[str, bytes]] = []
    for name in names:
        mode = _git(["ls-files", "-s", "-z", "--", name], root).split(b" ", 1)[0]
        if mode in (b"120000", b"160000"):  # a link's target, a submodule commit: not text
            continue
        staged.append((name, _git(["show", f":{name}"], root)))
    return staged


def read_text_file(path: Path, skipped: Skipped, shown: str) -> str | None:
    """The text of ``path`` (undecodable bytes kept as surrogates); None when skipped."""
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_FILE_BYTES:
            skipped.too_large.append(shown)
            return None
        data = fh.read(MAX_FILE_BYTES + 1)
    return text_of(data, skipped, shown)


def text_of(data: bytes, skipped: Skipped, shown: str) -> str | None:
    """``data`` as text, or None (and counted) when it is binary or too large."""
    if len(data) > MAX_FILE_BYTES:
        skipped.too_large.append(shown)
        return None
    if is_binary(data):
        skipped.binary.append(shown)
        return None
    return data.decode("utf-8", "surrogateescape")
