"""Links between the steps of a line: a file fetched (curl -o, wget, aria2c, scp, rsync, git
clone, docker cp, pip download, a copy of any of those) or decoded, then run (``bash x``,
``./x``, ``source x``, ``cat x | sh``, ``sh < x``, ``make -f x``, a bare name put in a PATH
folder), is remote code run (``cmd.pipe_to_shell``) or decoded code run (``cmd.decode_exec``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.paths import canonical_for_match
from domestique.guard.rules.common import (
    PATH_DIRS,
    REMOTE_PATH,
    URL_START,
    decodes,
    downloads,
    git_split,
    opts,
    shadowed_tool,
    span_of,
)
from domestique.guard.rules.registry import Context, line_rule
from domestique.guard.rules.vocab import DECODERS, DOWNLOADERS, FETCHERS


def _saved_paths(inv: Invocation) -> list[str]:
    """Files a download or decode writes (-o/-O, > file, wget's default name)."""
    out = [r.target.text for r in inv.redirects if r.writes and r.fd in ("", "1")]
    words = inv.words
    urls = [w.text for w in words[1:] if URL_START.match(w.text)]
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
        elif inv.name in ("wget", "wget2") and t.startswith("-") and not t.startswith("--"):
            if t.endswith("O") and nxt and nxt != "-":
                out.append(nxt)  # -qO FILE, -nvO FILE
            elif "O" in t[1:-1] and not t.endswith(("O-", "O")):
                out.append(t[t.index("O", 1) + 1 :])  # -O/tmp/x, -qO/tmp/x
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
    if inv.name == "tftp":  # tftp HOST -c get REMOTE [LOCAL]
        args = inv.args
        if "get" in args:
            got = [a for a in args[args.index("get") + 1 :] if not a.startswith("-")]
            out += got[-1:]
    default_named = inv.name in ("wget", "wget2", "aria2c", "axel")
    if inv.name == "aria2c":  # -d DIR: the folder the files go to
        folder = [inv.args[i + 1] for i, a in enumerate(inv.args[:-1]) if a in ("-d", "--dir")]
        if folder:
            names = [p for p in out if "/" not in p] or [
                posixpath.basename(u.split("?", 1)[0]) for u in urls
            ]
            out += [posixpath.join(folder[-1], p) for p in names]
    named = ("-O", "-qO-", "-O-", "-o") if inv.name in ("aria2c", "axel") else ("-O", "-qO-", "-O-")
    wget_named = inv.name in ("wget", "wget2") and any(
        a.startswith("-") and not a.startswith("--") and "O" in a for a in inv.args
    )
    if (default_named and not wget_named and not any(a in named for a in inv.args)) or (
        curl_remote_name
    ):
        out += [posixpath.basename(u.split("?", 1)[0]) or "index.html" for u in urls]
    return [_key(p) for p in out if p]


def _key(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    return posixpath.basename(p) if "/" not in p.lstrip("/") else p


def _path_dir_program(path: str, ctx: Context) -> str | None:
    """The bare name a file saved in a PATH folder (``~/.local/bin/x``) is run by."""
    m = PATH_DIRS.match(canonical_for_match(path, ctx.cwd, ctx.env))
    return m.group(1) if m else None


def _stdin_files(inv: Invocation, ctx: Context) -> list[Word]:
    """Files a shell or interpreter reads its code from on stdin: ``sh < x``, ``cat x | sh``."""
    if inv.name not in SHELLS and inv.name not in INTERPRETERS:
        return []
    words = inv.words[1:]
    if any(w.text in ("-c", "-e", "-E", "-r") for w in words):
        return []
    _, rest = opts(words)
    if rest and rest[0].text not in ("-", "/dev/stdin"):
        return []
    out = [r.target for r in inv.redirects if r.op == "<" and r.fd in ("", "0")]
    for i in inv.upstream:
        f = ctx.invs[i]
        if f.name == "cat":
            out += [w for w in f.words[1:] if not w.text.startswith("-")]
    return [w for w in out if w.literal]


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
    if n in ("make", "gmake", "bmake"):  # make -f FILE runs FILE's recipes
        return [words[i + 1] for i, w in enumerate(words[:-1]) if w.text in ("-f", "--file")]
    if n in SHELLS or n in INTERPRETERS:
        _, rest = opts(words[1:])
        if any(w.text in ("-c", "-e", "-E", "-r") for w in words[1:]) or (
            n in INTERPRETERS and any(w.text == "-m" for w in words[1:])
        ):
            return []  # inline code, or a module (python -m pytest): no file of the line
        return rest[:1]
    return []


def _cat_run(inv: Invocation, ctx: Context) -> list[Word]:
    """Files whose text is run as code through a substitution: ``bash -c "$(cat x)"``,
    ``eval "$(cat x)"``."""
    out: list[Word] = []
    for i in inv.exec_data:
        if 0 <= i < len(ctx.invs) and ctx.invs[i].name == "cat":
            out += [w for w in ctx.invs[i].words[1:] if w.literal and not w.text.startswith("-")]
    return out


# Files a tool runs by convention, without being named: `curl -o Makefile URL && make`.
_CONVENTIONAL = {
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "gmake": ("Makefile", "makefile", "GNUmakefile"),
    "pytest": ("conftest.py",),
    "py.test": ("conftest.py",),
    "npm": ("package.json",),
    "yarn": ("package.json",),
    "pnpm": ("package.json",),
    "bun": ("package.json",),
    "rake": ("Rakefile", "rakefile"),
    "just": ("justfile", "Justfile", ".justfile"),
    "task": ("Taskfile.yml", "Taskfile.yaml"),
    "nox": ("noxfile.py",),
    "invoke": ("tasks.py",),
    "gradle": ("build.gradle", "build.gradle.kts", "settings.gradle"),
    "cargo": ("build.rs",),
    "direnv": (".envrc",),
}


def _conventional_files(inv: Invocation) -> list[Word]:
    """The files ``inv`` runs because of their names (make's Makefile, pytest's conftest.py,
    npm's package.json scripts), when it is not pointed at another one. Followed only for a
    file the line itself downloaded (a clone's own Makefile is the clone's, judged as such)."""
    name = inv.name
    if name in INTERPRETERS and "-m" in inv.args[:-1]:  # python -m pytest
        name = inv.args[inv.args.index("-m") + 1]
    names = _CONVENTIONAL.get(name)
    if names is None or any(w.text in ("-f", "--file", "-C", "--directory") for w in inv.words):
        return []
    if name in ("npm", "yarn", "pnpm", "bun") and inv.args[:1] in (
        ["--version"], ["-v"], ["view"], ["info"], ["search"],
    ):  # fmt: skip
        return []
    return [Word(name, True, inv.span) for name in names]


def _conventional_saved(inv: Invocation, saved: dict[str, tuple[str, Invocation]]) -> list[Word]:
    """The downloaded files ``inv`` runs by their names, in any folder it reads them from
    (pytest collects every ``conftest.py`` under the tests it runs)."""
    names = {c.text for c in _conventional_files(inv)}
    if not names:
        return []
    return [Word(k, True, inv.span) for k in saved if posixpath.basename(k) in names]


def _fetched(inv: Invocation) -> tuple[list[str], list[str]]:
    """(files, folders) another tool fetches from elsewhere: aria2c, scp/rsync/sftp from a
    host, git/hg/svn clone, gh repo clone."""
    n, args = inv.name, inv.args
    _, rest = opts(inv.words[1:])
    paths = [w.text for w in rest]
    if n == "aria2c":
        named = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--out")]
        named += [a.split("=", 1)[1] for a in args if a.startswith("--out=")]
        urls = [a for a in args if URL_START.match(a)]
        return named or [posixpath.basename(u.split("?", 1)[0]) for u in urls], []
    if n in ("scp", "rsync") and len(paths) >= 2 and not REMOTE_PATH.match(paths[-1]):
        sources = [p for p in paths[:-1] if REMOTE_PATH.match(p) or p.startswith("rsync://")]
        if not sources:
            return [], []
        dest = paths[-1]
        if dest in (".", "./") or dest.endswith("/"):
            base = "" if dest in (".", "./") else dest
            return [base + posixpath.basename(p.split(":", 1)[1]) for p in sources], []
        return [dest], []
    if n == "docker" and args[:1] == ["cp"] and len(paths) >= 3:
        # docker cp CONTAINER:/path DEST: a file taken out of a container (an image's content)
        src, dest = paths[1], paths[2]
        if ":" in src and ":" not in dest:
            if dest.endswith("/") or dest in (".", "./"):
                base = "" if dest in (".", "./") else dest
                return [base + posixpath.basename(src.split(":", 1)[1])], [base.rstrip("/")]
            return [dest], [dest]
        return [], []
    if n == "gh" and args[:2] == ["release", "download"]:
        named = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-O", "--output")]
        named += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-p", "--pattern")
                  and not any(c in args[i + 1] for c in "*?[")]  # fmt: skip
        where = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-D", "--dir")]
        base = where[-1].rstrip("/") + "/" if where else ""
        return [base + f for f in named], [w.rstrip("/") for w in where]
    if n in ("pip", "pip3") and args[:1] == ["download"]:
        where = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-d", "--dest")]
        where += [a.split("=", 1)[1] for a in args if a.startswith("--dest=")]
        return [], [where[-1].rstrip("/")] if where else []
    if (n in ("git", "hg") and args[:1] == ["clone"]) or (n == "svn" and args[:1] in (
        ["checkout"], ["co"],
    )) or (n == "gh" and args[:2] == ["repo", "clone"]):  # fmt: skip
        positional = [a for a in args[1:] if not a.startswith("-") and a not in ("clone",)]
        if n == "git":
            positional = []
            skip = False
            for t in [w.text for w in git_split(inv.words)[1][1:]]:
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


_EXTRACTORS = frozenset({"tar", "bsdtar", "unzip", "7z", "7za"})
_ARCHIVE_SUFFIX = re.compile(r"\.(?:tar\.(?:gz|xz|bz2|zst)|tgz|tbz2?|txz|tar|zip|7z)$")


def _archives(inv: Invocation, saved: dict[str, tuple[str, Invocation]]) -> list[str]:
    return [w.text for w in inv.words[1:] if _key(w.text) in saved and _ARCHIVE_SUFFIX.search(
        w.text)]  # fmt: skip


def saved_from(inv: Invocation, saved: dict[str, tuple[str, Invocation]]) -> Invocation:
    """The download an extractor unpacks (the first archive of the line it names)."""
    return saved[_key(_archives(inv, saved)[0])][1]


def _extracted(inv: Invocation, saved: dict[str, tuple[str, Invocation]]) -> list[str]:
    """Folders a downloaded archive is unpacked into: ``-C DIR``/``-d DIR``/``-oDIR``, else the
    archive's own name (``x.tar.gz`` -> ``x``), the folder such archives usually hold."""
    archives = _archives(inv, saved)
    if not archives:
        return []
    args = inv.args
    dirs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory", "-d")]
    dirs += [a[2:] for a in args if inv.name.startswith("7z") and a.startswith("-o")]
    stems = [_ARCHIVE_SUFFIX.sub("", posixpath.basename(a)) for a in archives]
    return [d.rstrip("/") for d in dirs if d not in (".", "./")] + [s for s in stems if s]


_PACKAGE_INSTALLERS = frozenset({"pip", "pip3", "pipx", "uv", "npm", "pnpm", "yarn", "bun", "gem"})
_INSTALL_VERBS = frozenset({"install", "i", "add", "inject"})
# Where an unpacked download runs by itself: the home folder's top (its start-up files), its
# start-up and credential folders.
_UNPACKED_RUNS = re.compile(
    r"^(?:~|\$HOME|\$\{HOME\})/?$|^(?:~|\$HOME|\$\{HOME\})/(?:\.ssh|\.config/(?:autostart|systemd)|"
    r"\.local/bin|bin|\.bashrc\.d|Library/LaunchAgents)/?$"
)


def _downloaded_install_or_unpack(
    inv: Invocation, saved: dict[str, tuple[str, Invocation]], ctx: Context
) -> Hit | None:
    """A package file the line downloaded, installed (``npm install -g ./x.tgz``, ``pip install
    ./x.whl``: the same as installing from its URL); a download unpacked over the home folder
    (``curl … | tar xz -C ~``: its dot-files run at the next start)."""
    n = inv.name
    if n in _PACKAGE_INSTALLERS:
        ops = [w for w in inv.words[1:] if not w.text.startswith("-")]
        if ops[:1] and ops[0].text == "pip":
            ops = ops[1:]  # uv pip install
        if ops and ops[0].text in _INSTALL_VERBS:
            for w in ops[1:]:
                if _key(w.text) in saved and saved[_key(w.text)][0] == "download":
                    src = saved[_key(w.text)][1]
                    why = f"{n} installs {w.text}, downloaded in the same line"
                    shown = src.render() + " ; " + inv.render()
                    return Hit("cmd.untrusted_install", why, span_of(src.span, inv.span), shown)
    elif n in _EXTRACTORS or n in ("cpio",):
        piped = [ctx.invs[i] for i in inv.upstream if downloads(ctx.invs[i])]
        fed = piped[0] if piped else (saved_from(inv, saved) if _archives(inv, saved) else None)
        if fed is None:
            return None
        args = inv.args
        dirs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory", "-d")]
        dirs += [a.split("=", 1)[1] for a in args if a.startswith("--directory=")]
        over = [d for d in dirs if _UNPACKED_RUNS.match(d)]
        if over:
            why = f"a download is unpacked over {over[0]} (its start-up files run it)"
            shown = fed.render() + " | " + inv.render()
            return Hit("cmd.pipe_to_shell", why, span_of(fed.span, inv.span), shown)
    return None


_CLONE_VALUE_OPTIONS = frozenset(
    {"--depth", "-b", "--branch", "-o", "--origin", "--reference", "-c", "--config",
     "--template", "-j", "--jobs", "--filter", "--separate-git-dir", "-u", "--upload-pack",
     "--shallow-since", "--shallow-exclude", "--reference-if-able", "--server-option"}
)  # fmt: skip


_SAVED_EXEC_NAMES = (
    DOWNLOADERS
    | (DECODERS - {"echo", "printf"})
    | FETCHERS
    | frozenset(INTERPRETERS)
    | frozenset({"pip", "pip3", "docker", "make", "gmake", "bmake", "go"})
    | frozenset(_CONVENTIONAL)
)  # fmt: skip (cp/install of a download is followed inside the rule)


def _go_installed(args: list[str]) -> list[str]:
    """The program names ``go install MODULE@VERSION`` builds (not the Go project's own)."""
    out = []
    for a in args:
        path, at, _ = a.partition("@")
        if at and "." in path.split("/", 1)[0] and not path.startswith("golang.org/"):
            parts = [p for p in path.split("/") if p and not re.fullmatch(r"v\d+", p)]
            if len(parts) > 1:
                out.append(parts[-1])
    return out


@line_rule(programs=_SAVED_EXEC_NAMES)
def _rule_saved_exec(ctx: Context) -> Iterator[Hit]:
    saved: dict[str, tuple[str, Invocation]] = {}
    folders: dict[str, Invocation] = {}
    shadows: dict[str, Invocation] = {}  # a downloaded program put in a PATH folder, by name
    installed: dict[str, Invocation] = {}  # a Go module built into ~/go/bin, by name
    inside: str | None = None  # the fetched folder a `cd` entered
    for inv in ctx.invs:
        if inv.name == "cd" and inv.args:
            target = inv.args[0].rstrip("/")
            inside = target if target in folders else None
        if inv.name == "tee" and any(downloads(ctx.invs[i]) for i in inv.upstream):
            for w in inv.words[1:]:  # curl URL | tee x.sh: x.sh holds the download
                if not w.text.startswith("-"):
                    saved[_key(w.text)] = ("download", ctx.invs[inv.upstream[0]])
        if inv.name in ("cp", "mv", "install", "ln") and len(inv.words) > 2:
            _, operands = opts(inv.words[1:])
            operands = [w for w in operands if not w.text.isdigit()]  # install -m 755
            if len(operands) >= 2 and any(_key(w.text) in saved for w in operands[:-1]):
                got = next(saved[_key(w.text)] for w in operands[:-1] if _key(w.text) in saved)
                dest = operands[-1].text
                saved[_key(dest)] = got  # a copy of a download is the download
                tool = _path_dir_program(dest, ctx)
                if tool:
                    shadows[tool] = got[1]
        for w in [*_executed_paths(inv), *_stdin_files(inv, ctx), *_cat_run(inv, ctx),
                  *_conventional_saved(inv, saved)]:  # fmt: skip
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
                    span_of(src.span, inv.span),
                    src.render() + " ; " + inv.render(),
                )
            elif folder is not None:
                src = folders[folder]
                yield Hit(
                    "cmd.pipe_to_shell",
                    f"{w.text} comes from {src.name} {folder}, then runs",
                    span_of(src.span, inv.span),
                    src.render() + " ; " + inv.render(),
                )
        words = inv.words
        if words and inv.name in installed and "/" not in words[0].text:
            src = installed[inv.name]  # go install github.com/x/y@latest && y: `go run` it is
            why = f"{inv.name} is built from its repository, then run"
            yield Hit("cmd.untrusted_install", why, span_of(src.span, inv.span),
                      src.render() + " ; " + inv.render())  # fmt: skip
        if inv.name == "go" and inv.args[:1] == ["install"]:
            for tool in _go_installed(inv.args[1:]):
                installed[tool] = inv
        if words and inv.name in shadows and "/" not in words[0].text:
            src = shadows[inv.name]
            yield Hit(
                "cmd.pipe_to_shell",
                f"{inv.name} was downloaded into a PATH folder, then run",
                span_of(src.span, inv.span),
                src.render() + " ; " + inv.render(),
            )
        hit = _downloaded_install_or_unpack(inv, saved, ctx)
        if hit is not None:
            yield hit
        if downloads(inv):
            for p in _saved_paths(inv):
                saved[p] = ("download", inv)
                common = shadowed_tool(p, ctx.cwd, ctx.env)
                tool = common or _path_dir_program(p, ctx)
                if tool:
                    shadows[tool] = inv
                if common:  # wget URL -O ~/bin/ls: the next `ls` typed runs the download
                    yield Hit("cmd.pipe_to_shell", f"a download replaces {common} in a PATH"
                              " folder", inv.span, inv.render())  # fmt: skip
        elif decodes(inv) and inv.name not in ("echo", "printf"):
            for p in _saved_paths(inv):
                saved[p] = ("decode", inv)
        elif inv.name in FETCHERS or inv.name in ("pip", "pip3", "docker"):
            files, dirs = _fetched(inv)
            for p in files:
                saved[_key(p)] = ("download", inv)
                tool = _path_dir_program(p, ctx)
                if tool:  # scp host:tool ~/.local/bin/tool && tool
                    shadows[tool] = inv
            for d in dirs:
                folders[_key(d)] = inv
                if d in (".", "./", ""):  # git clone URL .: the working folder is the clone
                    inside = "."
        elif inv.name in _EXTRACTORS:
            for d in _extracted(inv, saved):  # tar xzf x.tgz && ./x/install.sh
                folders[_key(d)] = saved_from(inv, saved)
