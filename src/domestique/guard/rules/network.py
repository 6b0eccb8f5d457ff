"""Rules about the network: shells over sockets, transfers, file servers, egress of secrets and
credentials, code that is fetched then run, package installs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard import flows, supply
from domestique.guard.model import Hit, Invocation, Word, program_name
from domestique.guard.names import INTERPRETERS, SHELLS
from domestique.guard.paths import (
    CREDENTIAL_FILES,
    SENSITIVE_FILES,
    Place,
    canonical_for_match,
    classify,
)
from domestique.guard.rules.common import (
    DROP_HOSTS,
    OUTSIDE_PLACES,
    REMOTE_PATH,
    build_output,
    cd_before,
    cred_hint,
    db_remote,
    decodes,
    downloads,
    git_split,
    internal_host,
    is_egress,
    opts,
    span_of,
    storage_upload,
)
from domestique.guard.rules.registry import Context, line_rule, position, rule
from domestique.guard.rules.scoped import (
    CONTAINER_TOOLS,
    container_env_file,
    names_only,
    plain_container_run,
    transfer_operands,
)
from domestique.guard.rules.vocab import DOWNLOADERS, LOOK_ONLY, NAME_LOOKUPS, RAW_NETWORK
from domestique.guard.runners import echoed
from domestique.sensitive_paths import is_env_file

_NET_SHELL_NAMES = frozenset(
    {"nc", "ncat", "netcat", "cryptcat", "pwncat", "sbd", "socat", "xterm"}
)


@rule(programs=_NET_SHELL_NAMES, also=("redirects",))
def _rule_net_shell(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    judged = inv.render()
    args = inv.args
    if n in ("nc", "ncat", "netcat", "cryptcat", "pwncat", "sbd"):
        flags, _ = opts(inv.words[1:])
        if ("l" in flags or "--listen" in flags) and not (
            {"e", "c", "--exec", "--sh-exec", "--lua-exec"} & flags
        ):
            yield Hit("cmd.remote_access", f"{n} listens for connections", inv.span, judged)
        execs = any(a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in args) or (
            "e" in flags or "c" in flags
        )
        if execs:
            listen = "l" in flags or "--listen" in flags
            loopback = _loopback_exec(inv)
            if loopback == "harmless":
                return  # an echo service on this machine only (`ncat -l 127.0.0.1 9 -e /bin/cat`)
            if loopback == "program":
                yield Hit("cmd.remote_access", f"{n} serves a program on this machine only",
                          inv.span, judged)  # fmt: skip
                return
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


# Programs that only echo or print what they are given: served on loopback they open nothing.
_ECHO_PROGRAMS = frozenset(
    {"cat", "echo", "date", "true", "false", "printf", "rev", "tr", "wc", "head", "tail", "sort",
     "uniq", "hostname", "uptime", "od", "hexdump"}
)  # fmt: skip
_NC_VALUED = frozenset(
    {
        "-p",
        "-s",
        "-w",
        "-i",
        "-o",
        "-x",
        "-g",
        "-G",
        "-m",
        "-d",
        "-q",
        "--proxy",
        "--allow",
        "--deny",
        "--source",
        "--wait",
        "--idle-timeout",
        "--output",
        "--max-conns",
        "--delay",
        "--source-port",
        "--proxy-type",
    }
)
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"})


def _loopback_exec(inv: Invocation) -> str:
    """``nc``/``ncat`` running a program (``-e``/``--exec PROG``) with every host operand on
    loopback: "harmless" when the program only prints, "program" for another program that is no
    shell or interpreter; "" otherwise (a shell, shell code, a remote host, every address)."""
    words = inv.words[1:]
    program = ""
    hosts: list[str] = []
    i = 0
    while i < len(words):
        t = words[i].text
        if t in ("-e", "--exec") and i + 1 < len(words):
            program = words[i + 1].text
            i += 2
            continue
        if t.startswith("--exec="):
            program = t.split("=", 1)[1]
        elif t in ("-c", "--sh-exec", "--lua-exec") or t.startswith(("--sh-exec", "--lua-exec")):
            return ""  # shell or Lua code
        elif t in _NC_VALUED:
            i += 1  # and its value
        elif not t.startswith("-") and not t.isdigit():
            hosts.append(t.lower())
        i += 1
    if (
        not program
        or not hosts
        or not all(h in _LOOPBACK_HOSTS or h.startswith("127.") for h in hosts)
    ):
        return ""
    parts = program.split()
    name = program_name(parts[0]) if parts else ""
    if name in SHELLS or name in INTERPRETERS or name in _NET_SHELL_NAMES:
        return ""
    return "harmless" if name in _ECHO_PROGRAMS and len(parts) == 1 else "program"


_UPLOAD_FLAGS = frozenset({"-T", "--upload-file", "--post-file", "--body-file"})


# Clients that read commands (put, mput …) from a script on stdin.
_FTP_CLIENTS = frozenset(
    {"sftp", "ftp", "lftp", "ncftp", "tnftp", "pftp", "yafc", "tftp", "smbclient"}
)
_TRANSFER_NAMES = frozenset({"scp", "rsync", "curl", "wget", "wget2", "http", "xh"}) | _FTP_CLIENTS
_PUT_LINE = re.compile(r"(?m)^\s*(?:put|reput|mput|send|append|mirror\s+(?:-R|--reverse))\b(.*)$")


def _ftp_script(inv: Invocation, ctx: Context) -> str | None:
    """The commands an ftp-family client reads on stdin: a here-document, a here-string, or
    the text an echo/printf pipes into it."""
    if inv.stdin_text is not None:
        return inv.stdin_text
    texts = [echoed(ctx.invs[i]) for i in inv.upstream if i < len(ctx.invs)]
    known = [t for t in texts if t is not None]
    return "\n".join(known) if known else None


@rule(programs=_TRANSFER_NAMES)
def _rule_file_transfer(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Local files sent to another host: scp/rsync/sftp uploads, wget --post-file."""
    n = inv.name
    words = inv.words
    if n in ("scp", "rsync"):
        paths = transfer_operands(n, words)
        local = [p for p in paths[:-1] if not REMOTE_PATH.match(p)]
        if (
            len(paths) >= 2
            and REMOTE_PATH.match(paths[-1])
            and local
            and not all(
                build_output(p, ctx.cwd, ctx.env) for p in local
            )  # a deploy of build output
            and not _project_to_internal_host(local, paths[-1], ctx)
        ):
            yield Hit("cmd.file_transfer", f"{n} copies local files to {paths[-1].split(':')[0]}",
                      inv.span, inv.render())  # fmt: skip
        return
    if n in _FTP_CLIENTS:
        script = _ftp_script(inv, ctx)
        puts = list(_PUT_LINE.finditer(script)) if script else []
        if not puts:
            return
        local = [t for m in puts for t in m.group(1).split() if not t.startswith("-")]
        creds = [
            t for t in local
            if CREDENTIAL_FILES.search(canonical_for_match(t, ctx.cwd, ctx.env))
        ]  # fmt: skip
        if creds:
            yield Hit("cmd.exfiltration", f"{n} uploads {creds[0]}", inv.span, inv.render())
        else:
            yield Hit("cmd.file_transfer", f"{n} uploads files", inv.span, inv.render())
        return
    hosts = flows.hosts_of(inv.args)
    if hosts and all(flows.loopback(h) for h in hosts):
        return  # an upload to a server on this machine (a local dev server) leaves nothing
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


def _project_to_internal_host(local: list[str], dest: str, ctx: Context) -> bool:
    """``rsync -av ./ deploy@dev-host:/srv/app/``: the project's own files copied to a host
    only the company network names (credential files are judged by their own rules)."""
    if not internal_host(dest.split(":", 1)[0]):
        return False
    return all(
        classify(p, ctx.cwd, ctx.env) in (Place.PROJECT, Place.PROJECT_ROOT)
        and not cred_hint(p)
        and not _SENSITIVE_NAME.search(p)
        for p in local
    )


# Names of files that hold secrets or data rather than the project's code: they ask wherever
# they go (`scp config/secrets.yml devbox:`, `rsync db.dump host:`).
_SENSITIVE_NAME = re.compile(
    r"(?i)secret|credential|passw|token|\.env\b|\.pem$|\.key$|\.p12$|\.pfx$|id_[rde]|\.kdbx$|"
    r"\.sql(?:\.gz)?$|\.dump$|\.bak$|\.sqlite3?$|\.db$|backup|\.tfstate|kubeconfig|\.npmrc|\.pypirc"
)


_FILE_SERVERS = frozenset({"python", "php", "ruby", "busybox", "httpd"})


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@rule(programs=_FILE_SERVERS, args=True)
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
    elif (n == "busybox" and args[:1] == ["httpd"]) or (n == "httpd" and "-h" in args):
        # busybox's httpd, as `busybox httpd` or unfolded to the applet (`-h` names its folder)
        folder = next((v for a, v in zip(args, [*args[1:], ""], strict=True) if a == "-h"), None)
    else:
        return
    if folder is None:
        folder = cd_before(inv, ctx)
    if folder is not None and classify(folder, ctx.cwd, ctx.env) in (
        *OUTSIDE_PLACES,
        Place.VARIABLE,
    ):
        yield Hit("cmd.remote_access", f"{n} serves {folder} to the network", inv.span,
                  inv.render())  # fmt: skip


# _rule_exec_data fires only with exec_data, a fifo maker, or a shell or interpreter in the line.
_EXEC_DATA_NAMES = frozenset({"mkfifo", "mknod"}) | SHELLS | frozenset(INTERPRETERS)


# ------------------------------------------------------------------------ whole-line rules


@line_rule(programs=_EXEC_DATA_NAMES, facts=("exec_data",))
def _rule_exec_data(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    for inv in invs:
        if not inv.exec_data:
            continue
        feeders = [invs[i] for i in inv.exec_data if 0 <= i < len(invs)]
        span = span_of(inv.span, *(f.span for f in feeders))
        judged = " | ".join(f.render() for f in feeders) + " -> " + inv.render()
        if any(downloads(f) for f in feeders):
            yield Hit("cmd.pipe_to_shell", f"{inv.name} runs downloaded content", span, judged)
        elif any(f.name in RAW_NETWORK or is_egress(f) for f in feeders):
            yield Hit("cmd.reverse_shell", f"{inv.name} runs what the network sends", span, judged)
        elif any(decodes(f) for f in feeders):
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
            me = position(ctx, inv)
            partners += [o for o in invs if me in o.upstream]
            for p in partners:
                if p.name in RAW_NETWORK or (p.name == "openssl" and "s_client" in p.args):
                    listen = any(a.startswith("-l") or a in ("--listen", "-lvp") for a in p.args)
                    yield Hit(
                        "cmd.bind_shell" if listen else "cmd.reverse_shell",
                        f"{inv.name} wired to {p.name}",
                        span_of(inv.span, p.span),
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
    return inv.name in _ENV_GENERATORS and not downloads(inv)


def _judged_feeder(inv: Invocation) -> bool:
    if inv.name in ("echo", "printf") and all(w.literal for w in inv.words):
        return True
    if inv.name == "cat" and all(w.literal for w in inv.words):
        return True
    return inv.name in ("true", ":", "yes")


_SPLIT_PIECES = re.compile(r"[=@,:]")


def cred_words(inv: Invocation, ctx: Context) -> list[Word]:
    """Credential files this invocation reads."""
    out: list[Word] = []
    look_only = inv.name in LOOK_ONLY
    if look_only and not inv.redirects:
        return out
    # One search over every word decides whether any single word could name a credential.
    wrapped = [w.text for _, ws in inv.wrapped for w in ws] if inv.wrapped else []
    if not cred_hint("\n".join([*inv.args, *(r.target.text for r in inv.redirects), *wrapped])):
        return out
    candidates = [r.target for r in inv.redirects if r.reads]
    for name, ws in inv.wrapped:  # xargs -a ~/.ssh/id_rsa: the file xargs reads its items from
        if name == "xargs":
            candidates += [ws[i + 1] for i, w in enumerate(ws[:-1]) if w.text in _XARGS_FILE]
    # A look-only program still reads what is redirected into it (ssh host 'cat > x' < key).
    # tee writes its operands (`… | tee -a .env.local`): what it prints is its stdin, not them.
    words = [] if look_only or inv.name == "tee" else inv.words[1:]
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
        if (
            inv.name in CONTAINER_TOOLS
            and w.text.startswith("--env-file")
            and plain_container_run(inv)
        ):
            # the container engine loads it into the container: nothing is shown or sent
            skip_next = w.text == "--env-file"
            continue
        if inv.name == "git" and i == 0:
            continue
        if (
            w is words[-1]
            and inv.name in ("cp", "install")
            and is_env_file(w.text)
            and not any(
                a.startswith("--target") or (a[:1] == "-" and a[1:2] != "-" and "t" in a)
                for a in inv.args
            )
        ):
            continue  # the copy's destination is written, not read (cp .env.example .env)
        if is_env_file(w.text) and _env_file_not_shown(inv):
            continue
        candidates.append(w)
    for w in candidates:
        if not cred_hint(w.text):
            continue
        for piece in (w.text, *_SPLIT_PIECES.split(w.text)):
            if piece and CREDENTIAL_FILES.search(canonical_for_match(piece, ctx.cwd, ctx.env)):
                out.append(w)
                break
    return out


_XARGS_FILE = frozenset({"-a", "--arg-file"})


_PLAIN_SED_SUB = re.compile(r"s([/|#,])(?:(?!\1).)*\1(?:(?!\1).)*\1[gI0-9]*")


def _env_file_not_shown(inv: Invocation) -> bool:
    """A project ``.env`` handled without its values reaching the output: untracked by git
    (``git rm --cached .env``), edited in place by sed without a print command (``sed -i
    's/^DEBUG=.*/DEBUG=false/' .env``), or loaded into the shell (``source .env``; a value sent
    later is judged as the variable it becomes)."""
    args = inv.args
    if inv.name == "git":
        return args[:1] == ["rm"] and "--cached" in args
    if inv.name in ("source", "."):
        return not inv.redirects
    if inv.name == "sed":
        # only `sed -i 's/A/B/FLAGS' FILE…` with plain flags: no -e/-f scripts, no p/w/e
        opts = [a for a in args if a.startswith("-")]
        rest = [a for a in args if not a.startswith("-")]
        return (
            bool(opts)
            and all(o == "-i" or o.startswith(("-i.", "--in-place")) or o == "-E" for o in opts)
            and len(rest) >= 2
            and _PLAIN_SED_SUB.fullmatch(rest[0]) is not None
        )
    return False


# Options whose value is a key or certificate used to authenticate, not data sent.
_KEY_OPTIONS = frozenset(
    {"-i", "-E", "--cert", "--key", "--cacert", "--capath", "-e", "--rsh", "--identity",
     "--ssh-key", "--private-key", "--client-cert", "--client-key", "-k"}
)  # fmt: skip


_UPLOAD_OPTS = re.compile(
    r"^(?:-F|--form|-T|--upload-file|-d|--data(?:-binary|-raw|-urlencode)?|--post-file|"
    r"--post-data|--body-file)(?:=.*)?$|^-[A-Za-z]*[FTd]$"
)


@line_rule(facts=("egress",))
def _rule_egress_shapes(ctx: Context) -> Iterator[Hit]:
    """Exfiltration by shape: uploads to drop sites, data in DNS names, home archives sent away."""
    invs = ctx.invs
    for e in ctx.egress:
        inv = invs[e]
        judged = inv.render()
        args = inv.args
        if any(DROP_HOSTS.search(a) for a in args) and (
            any(_UPLOAD_OPTS.match(a) for a in args) or inv.upstream
        ):
            yield Hit(
                "cmd.exfiltration", "uploads data to a drop or webhook site", inv.span, judged
            )
            return
        if inv.name in NAME_LOOKUPS and any(
            decodes(invs[i]) or invs[i].name in ("base64", "base32", "xxd", "od", "cat", "head")
            for w in inv.words[1:]
            for i in w.subs
        ):
            yield Hit("cmd.exfiltration", "encodes data into a DNS name", inv.span, judged)
            return
        for i in inv.upstream:
            f = invs[i]
            if f.name in ("tar", "zip", "7z", "cpio", "rsync", "cat", "find", "gzip") and any(
                classify(w.text, ctx.cwd, ctx.env) is Place.ROOT for w in f.words[1:]
                if not w.text.startswith("-")
            ):  # fmt: skip
                yield Hit("cmd.exfiltration", f"{f.name} of a home or system root is sent away",
                          span_of(f.span, inv.span), f.render() + " -> " + judged)  # fmt: skip
                return


def _dumps_environment(inv: Invocation) -> bool:
    """``env``, ``printenv``, ``set``, ``export -p``, ``declare -x``: every variable printed."""
    n, args = inv.name, inv.args
    if n in ("env", "printenv", "set", "export"):
        return not args or args in (["-p"], ["-0"])
    if n in ("declare", "typeset"):
        return bool(args) and all(a.startswith("-") and set(a[1:]) <= set("xpg") for a in args)
    return False


def dumps_environment(inv: Invocation) -> bool:
    """Public name of ``_dumps_environment`` (read by the staging rules)."""
    return _dumps_environment(inv) or inv.code_dumps_env


_SENSITIVE_PIECES = re.compile(r"[=@,:\s<]")


@line_rule(facts=("egress", "cred_reads"))
def _rule_credentials(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    if ctx.egress:
        egress_span = invs[ctx.egress[0]].span
        reported = False
        for idx, w in ctx.cred_reads:
            yield Hit(
                "cmd.exfiltration",
                f"reads {w.text} and the command line reaches the network",
                span_of(w.span, egress_span),
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
                    and not container_env_file(f, i)
                ]
                for w in [*words, *(r.target for r in f.redirects if r.reads)]:
                    for piece in _SENSITIVE_PIECES.split(w.text):
                        if piece and SENSITIVE_FILES.search(
                            canonical_for_match(piece, ctx.cwd, ctx.env)
                        ):
                            if f.name in ("ssh", "scp", "git") and f is inv and f.name != "scp":
                                continue
                            yield Hit(
                                "cmd.exfiltration",
                                f"sends {w.text} to the network",
                                span_of(w.span, inv.span),
                                f.render() + " -> " + inv.render(),
                            )
                            return
                if f is not inv and (_dumps_environment(f) or f.code_dumps_env):
                    yield Hit(
                        "cmd.exfiltration",
                        "sends the environment to the network",
                        span_of(f.span, inv.span),
                        f.render() + " -> " + inv.render(),
                    )
                    return
        return
    for idx, w in ctx.cred_reads:
        if names_only(ctx, idx, w.text):
            continue
        yield Hit("cmd.credential_read", f"reads credential file {w.text}", w.span,
                  invs[idx].render())  # fmt: skip


_PYTHON_NAMES = frozenset(n for n, lang in INTERPRETERS.items() if lang == "python")


_SUPPLY_NAMES = supply.NAMES | _PYTHON_NAMES | supply.PLUGIN_NAMES | {"twine"}


@rule(programs=_SUPPLY_NAMES, args=True)
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
    why = supply.untrusted_install(n, args) or supply.plugin_install(n, args)
    if why:
        yield Hit("cmd.untrusted_install", why, inv.span, judged)
    insecure = supply.tls_off(n, args)
    if insecure:
        yield Hit("cmd.tls_off", insecure, inv.span, judged)
    where = supply.foreign_publish(n, args)
    if where:
        yield Hit("cmd.file_transfer", f"{n} publishes the project to {where[:60]}", inv.span,
                  judged)  # fmt: skip
    if n in ("npm", "pnpm", "yarn"):
        verbs = [a for a in args if not a.startswith("-")]
        flat = (
            [x for v in verbs for x in v.split("=", 1)] if any("=" in v for v in verbs) else verbs
        )
        if flat[:1] == ["config"]:
            flat = flat[1:]
        if flat[:2] == ["set", "strict-ssl"] and flat[2:3] in (["false"], ["0"]):
            yield Hit("cmd.tls_off", f"{n} strict-ssl false turns certificate checks off",
                      inv.span, judged)  # fmt: skip


# Programs that send what they are given to a host named in their arguments (the provider's own
# command-line tools, such as docker login or helm, are not here: they talk to their own service).
_SENDERS = (
    DOWNLOADERS
    | RAW_NETWORK
    | NAME_LOOKUPS
    | frozenset(
        {"ssh", "scp", "sftp", "rsync", "mail", "mailx", "sendmail", "mutt", "smbclient",
         "openssl", "ftp", "telnet", "rclone", "s3cmd",
         "mosquitto_pub", "irc", "swaks", "whois", "lftp", "ncftpput", "tftp", "websocat",
         "wscat", "kcat", "kafkacat"}
    )
)  # fmt: skip


SENDERS = _SENDERS  # read by the staging rules


_KEY_PATTERN = re.compile(
    r"(?i)AKIA|ASIA|sk-|sk_live|ghp_|gho_|ghs_|github_pat|glpat|xox[abpr]|AIza|BEGIN.{0,20}PRIVATE|"
    r"PRIVATE.KEY|passw|secret|api.?key|token|aws_secret|bearer|credential"
)


def _searches(inv: Invocation) -> bool:
    """A search tool, or perl reading lines (-n/-p: ``perl -ne 'print if /sk-…/' FILES``)."""
    return inv.name in _GREP_NAMES or (
        inv.name == "perl"
        and any(a.startswith("-") and not a.startswith("--") and ("n" in a or "p" in a)
                for a in inv.args)
    )  # fmt: skip


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


@line_rule(facts=("egress",))
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
        login = _login_host(inv)
        sender = (
            raw
            or inv.name in _SENDERS
            or (inv.code_network and inv.name in INTERPRETERS)
            or storage_upload(inv)
            or db_remote(inv) is not None
            or login is not None
            or _url_with_secret(inv)
        )
        if not sender:
            continue
        raw = raw or inv.name in RAW_NETWORK
        db = db_remote(inv) or login
        hosts = [db] if db else flows.hosts_of(inv.args)
        feeders = _feeders(inv, invs)
        for f in [*feeders, inv]:
            provider = flows.printed_credential(f.name, f.args)
            if provider is not None and _names_destination(f, inv, invs):
                provider = None  # ssh $(pbpaste): the clipboard names the host, nothing is sent
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
                    span_of(f.span, inv.span),
                    f.render() + " -> " + judged,
                )
                return
            if provider is not None and f is not inv and _insecure(inv):
                yield Hit("cmd.tls_off", f"{f.name} prints a credential sent with certificate "
                          "checks off", span_of(f.span, inv.span), judged)  # fmt: skip
                return
            if f is not inv and _searches(f) and any(_KEY_PATTERN.search(a) for a in f.args):
                yield Hit("cmd.exfiltration", "a search for keys or passwords is sent away",
                          span_of(f.span, inv.span), f.render() + " -> " + judged)  # fmt: skip
                return
        names = flows.secret_variables(
            [*inv.args, *(a for f in feeders for a in f.args), *_stdin_texts(inv, feeders)]
        ) + [n for n in inv.code_env if flows.is_secret_name(n)]
        if db and not raw:  # mysql -h db -p"$DB_PASSWORD": the password logs in to that server
            names = [n for n in names if flows.variable_provider(n)]
        for name in dict.fromkeys(names):
            provider = flows.variable_provider(name)
            if not raw and hosts and all(flows.host_is_provider(h, provider) for h in hosts):
                if _insecure(inv):  # curl -k -H "…$GITHUB_TOKEN" https://api.github.com
                    yield Hit("cmd.tls_off", f"${name} is sent with certificate checks off",
                              inv.span, judged)  # fmt: skip
                    return
                continue
            if raw or provider or any(DROP_HOSTS.search(h) for h in hosts):
                yield Hit("cmd.exfiltration", f"${name} is sent to a host that is not its own",
                          inv.span, judged)  # fmt: skip
            else:
                yield Hit("cmd.secret_env_egress", f"${name} is sent to {', '.join(hosts)[:80]}",
                          inv.span, judged)  # fmt: skip
            return


def _login_host(inv: Invocation) -> str | None:
    """``docker login REGISTRY --password-stdin`` (and podman, helm registry, oras): the registry
    the password read from stdin goes to (docker.io when none is named)."""
    args = inv.args
    if inv.name not in ("docker", "podman", "buildah", "skopeo", "oras", "helm", "nerdctl"):
        return None
    if "login" not in args[:2] or not any(a.startswith("--password-stdin") for a in args):
        return None
    positional = [a for a in args[args.index("login") + 1 :] if not a.startswith("-")]
    values = set(_login_option_values(args))
    hosts = [p for p in positional if p not in values]
    host = hosts[-1] if hosts else "docker.io"
    return re.sub(r"^[a-z]+://", "", host).split("/")[0].lower()


def _login_option_values(args: list[str]) -> list[str]:
    """Values of ``-u``/``--username``/``-p`` (not registries)."""
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-u", "--username", "-p")]


def _url_with_secret(inv: Invocation) -> bool:
    """``git push https://x:$(gh auth token)@host/r.git``, ``git ls-remote https://$TOKEN@h/…``:
    the URL's user part carries a credential to its host."""
    if inv.name not in ("git", "hg", "svn"):
        return False
    return any(
        "://" in w.text and "@" in w.text and "$" in w.text.split("@", 1)[0] for w in inv.words[1:]
    )


def _insecure(inv: Invocation) -> bool:
    """``curl -k``, ``wget --no-check-certificate``, ``http --verify=no``: TLS checks off."""
    args = inv.args
    if inv.name == "curl":
        return "--insecure" in args or any(
            a.startswith("-") and not a.startswith("--") and "k" in a for a in args
        )
    if inv.name in ("wget", "wget2"):
        return "--no-check-certificate" in args
    return inv.name in ("http", "https", "xh") and any(
        a in ("--verify=no", "--verify=false") for a in args
    )


_CLIPBOARDS = frozenset({"pbpaste", "wl-paste", "xclip", "xsel"})
_CONNECTORS = frozenset({"ssh", "scp", "sftp", "mosh", "telnet", "nc", "ncat", "ping", "rsync"})


def _names_destination(f: Invocation, inv: Invocation, invs: list[Invocation]) -> bool:
    """Is the clipboard substituted as a whole word of a connecting tool (``ssh $(pbpaste)``)?"""
    if f.name not in _CLIPBOARDS or inv.name not in _CONNECTORS or f is inv:
        return False
    me = next((i for i, v in enumerate(invs) if v is f), -1)
    return me not in inv.upstream and any(
        me in w.subs and w.text.startswith("$(") and w.text.endswith(")") for w in inv.words
    )


def _stdin_texts(inv: Invocation, feeders: list[Invocation]) -> list[str]:
    """Here-strings and here-documents the sender or its feeders read (``<<< "$TOKEN"``)."""
    return [f.stdin_text for f in (inv, *feeders) if f.stdin_text]


def _publishes(inv: Invocation) -> bool:
    """``gh gist create``, ``gh issue create``, ``gh api … -f``: what it is given becomes public
    (or a third party's), whatever the host: no credential belongs there."""
    if inv.name not in ("gh", "glab") or not inv.args:
        return False
    a = inv.args
    return (
        a[:2] in (["gist", "create"], ["gist", "edit"], ["issue", "create"], ["issue", "comment"],
                  ["pr", "comment"], ["pr", "create"], ["release", "upload"])
        or a[0] == "api"
    )  # fmt: skip


def _foreign_push(inv: Invocation, added: set[str], judged: str) -> Iterator[Hit]:
    """``git push`` of every branch or tag to a URL or to a remote added in the same line."""
    _, rest = git_split(inv.words)
    args = [w.text for w in rest[1:]] if rest and rest[0].text == "push" else []
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        return
    remote = positional[0]
    foreign = remote in added or "://" in remote or bool(REMOTE_PATH.match(remote))
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
