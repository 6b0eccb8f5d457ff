"""Helpers more than one rule module reads: option splitting, egress, downloads, decodes, places."""

from __future__ import annotations

import re
from typing import Any

import ahocorasick

from domestique.guard.env import GuardEnv
from domestique.guard.model import Invocation, Span, Word
from domestique.guard.names import INTERPRETERS
from domestique.guard.paths import (
    CREDENTIAL_FILES,
    SENSITIVE_FILES,
    Place,
    canonical_for_match,
    classify,
)
from domestique.guard.rules.registry import Context, position
from domestique.guard.rules.vocab import DECODERS, DOWNLOADERS, NETWORK, TEMP_TOPS


def span_of(*spans: Span) -> Span:
    return (min(s[0] for s in spans), max(s[1] for s in spans))


def opts(words: list[Word]) -> tuple[set[str], list[Word]]:
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


DB_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "redis-cli", "mongo", "mongosh", "clickhouse-client", "sqlcmd",
     "cqlsh", "valkey-cli"}
)  # fmt: skip
_DB_URL = re.compile(r"(?i)^[a-z+]+://(?:[^@/]*@)?([^/:?]+)")


def db_remote(inv: Invocation) -> str | None:
    """The host a database client connects to when it is not this machine (``psql -h h``,
    ``redis-cli -h h``, ``mysql --host=h``, ``psql postgres://u@h/db``); None otherwise."""
    if inv.name not in DB_CLIENTS:
        return None
    args = inv.args
    host = ""
    for i, a in enumerate(args):
        if (a in ("-h", "--host", "-H", "-S") and i + 1 < len(args) and inv.name != "sqlcmd") or (
            inv.name == "sqlcmd" and a == "-S" and i + 1 < len(args)
        ):
            host = args[i + 1]
        elif a.startswith("--host="):
            host = a.split("=", 1)[1]
        elif m := _DB_URL.match(a):
            host = m.group(1)
    host = host.lower().strip("[]")
    if not host or host in ("localhost", "::1", "0.0.0.0") or host.startswith(("127.", "/")):  # noqa: S104
        return None
    return host


# Tunnels that make a remote service answer on a port of this machine (`ssh -L 5433:db:5432`,
# `kubectl port-forward svc/db 5433:5432`): a client of "localhost" there reaches the remote one.
_SSH_ARG_OPTS = frozenset("BbcDEeFIiJLlmOopQRSWw")
_FORWARD_ANY = frozenset(
    {"sshuttle", "cloud-sql-proxy", "cloud_sql_proxy", "cloudflared", "teleport", "tsh",
     "boundary", "chisel", "inlets", "bore", "frpc", "ngrok", "mutagen"}
)  # fmt: skip
_PORT = re.compile(r"(?:^|:)(\d{2,5})(?=:[^:]+:\d+$)|^(\d{2,5})$")
_LISTEN = re.compile(r"(?i)^tcp[46]?-listen:(\d+)")
DB_PORTS = {
    "psql": "5432", "mysql": "3306", "mariadb": "3306", "redis-cli": "6379", "valkey-cli": "6379",
    "mongo": "27017", "mongosh": "27017", "clickhouse-client": "9000", "cqlsh": "9042",
}  # fmt: skip


def _ssh_forwards(inv: Invocation) -> list[str]:
    """The ``-L`` specs of an ssh command (``-L5433:db:5432``, ``-fNL 5433:db:5432``,
    ``-o LocalForward=5433 db:5432``)."""
    out: list[str] = []
    args = inv.args
    for i, a in enumerate(args):
        value = (a[2:] or (args[i + 1] if i + 1 < len(args) else "")) if a.startswith("-o") else ""
        if value and value.lower().lstrip().startswith("localforward"):
            spec = re.sub(r"(?i)^\s*localforward\s*=?\s*", "", value).split()
            out.append(spec[0] if spec else "*")
            continue
        if not a.startswith("-") or a.startswith("--"):
            continue
        for k, c in enumerate(a[1:], start=1):
            if c in _SSH_ARG_OPTS:
                if c == "L":
                    out.append(a[k + 1 :] or (args[i + 1] if i + 1 < len(args) else ""))
                break
    return out


def forwarded_ports(ctx: Context) -> frozenset[str] | None:
    """The local ports this line forwards to another machine; ``"*"`` in the set when a
    forward's port cannot be read. None when nothing is forwarded (most lines)."""
    ports: set[str] = set()
    for inv in ctx.invs:
        n = inv.name
        specs: list[str] = []
        if n in ("ssh", "autossh"):
            specs = _ssh_forwards(inv)
        elif n in ("kubectl", "oc") and "port-forward" in inv.args:
            after = inv.args[inv.args.index("port-forward") + 1 :]
            local = [a.split(":", 1)[0] for a in after if a.replace(":", "").isdigit()]
            specs = local or ["*"]
        elif n in ("fly", "flyctl") and "proxy" in inv.args:
            specs = ["*"]
        elif n == "socat":
            specs = [m.group(1) for a in inv.args if (m := _LISTEN.match(a))] or ["*"]
        elif n in _FORWARD_ANY or (n in ("gcloud", "aws", "az") and _tunnel_verb(inv.args)):
            specs = ["*"]
        for spec in specs:
            m = _PORT.search(spec.split("/")[0]) if spec != "*" else None
            ports.add((m.group(1) or m.group(2)) if m else "*")
    return frozenset(ports) if ports else None


def _tunnel_verb(args: list[str]) -> bool:
    flat = " ".join(args)
    return "start-iap-tunnel" in flat or "PortForwarding" in flat or "bastion tunnel" in flat


def client_port(inv: Invocation) -> str:
    """The port a database or HTTP client connects to on this machine (its default if none)."""
    args = inv.args
    flags = ("-P", "--port") if inv.name in ("mysql", "mariadb") else ("-p", "--port", "-P")
    for i, a in enumerate(args):
        if a in flags and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--port="):
            return a.split("=", 1)[1]
        if m := re.match(r"(?i)^[a-z+]+://(?:[^@/]*@)?[^/:?]+:(\d+)", a):
            return m.group(1)
    return DB_PORTS.get(inv.name, "80")


def tunnelled(inv: Invocation, ctx: Context) -> bool:
    """Does this client's localhost connection go through a port the same line forwards?"""
    ports = forwarded_ports(ctx)
    return ports is not None and ("*" in ports or client_port(inv) in ports)


def is_egress(inv: Invocation) -> bool:
    """Does this invocation reach the network?"""
    n = inv.name
    if inv.code_network:
        return True
    if n in DB_CLIENTS:
        return db_remote(inv) is not None
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


def storage_upload(inv: Invocation) -> bool:
    """``aws s3 cp X s3://…``, ``gsutil cp - gs://…``, ``az storage blob upload``, ``azcopy``:
    what is given is stored in a bucket, which may be anyone's."""
    n, args = inv.name, inv.args
    if n == "aws":
        return (
            args[:1] == ["s3"]
            and bool({"cp", "mv", "sync"} & set(args[1:3]))
            and any(a.startswith("s3://") for a in args[-1:])
        )
    if n in ("gsutil", "gcloud"):
        if n == "gcloud" and args[:1] != ["storage"]:
            return False
        return bool({"cp", "mv", "rsync"} & set(args[:3])) and any(
            a.startswith("gs://") for a in args[-1:]
        )
    if n == "az":
        return args[:2] == ["storage", "blob"] and any(a.startswith("upload") for a in args[2:3])
    if n == "azcopy":
        return bool(args) and args[0] in ("copy", "cp", "sync")
    return n == "s3cmd" and bool(args) and args[0] in ("put", "sync")


# Forge CLIs' subcommands that publish what they are given (a gist, an issue, a release
# asset): the forge is the credential's provider, but what is published there is readable by
# others, so a credential sent this way has left, whatever the host.
_PUBLISHING = {
    "gh": (("gist", "create"), ("gist", "edit"), ("issue", "create"), ("issue", "comment"),
           ("pr", "create"), ("pr", "comment"), ("release", "create"), ("release", "upload")),
    "glab": (("snippet", "create"), ("issue", "create"), ("issue", "note"), ("mr", "create"),
             ("mr", "note"), ("release", "create"), ("release", "upload")),
}  # fmt: skip


def publishes(inv: Invocation) -> bool:
    """``gh gist create F``, ``glab snippet create``, ``gh issue comment``: content posted to a
    forge where others can read it."""
    shapes = _PUBLISHING.get(inv.name)
    if shapes is None:
        return False
    words = [a for a in inv.args if not a.startswith("-")]
    return any(tuple(words[: len(shape)]) == shape for shape in shapes)


def downloads(inv: Invocation) -> bool:
    if inv.name in DOWNLOADERS:
        return not {"-I", "--head", "--version", "-V"} & set(inv.args)
    if inv.name in ("git",) and "archive" in inv.args:
        return any(a.startswith("--remote") for a in inv.args)
    return inv.code_network and inv.name in INTERPRETERS


def decodes(inv: Invocation) -> bool:
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


URL_START = re.compile(r"(?i)^(?:https?|ftp)://")


# Project folders and files that hold build output (nothing written by hand).
OUTPUT_DIRS = frozenset(
    {"dist", "build", "target", "out", "release", "releases", "artifacts", "artefacts",
     "_build", "_site", "wheelhouse", "output", "public", "site"}
)  # fmt: skip


ARTEFACT = re.compile(
    r"(?i)\.(?:tar\.gz|tgz|tar\.xz|tar\.bz2|zip|whl|jar|war|ear|deb|rpm|apk|dmg|msi|exe|"
    r"appimage|nupkg|gem|crate|img|iso)$"
)


def build_output(path: str, cwd: str | None, env: GuardEnv) -> bool:
    """Is ``path`` build output inside the project (``dist/x.whl``, ``target/release/app``)?"""
    if ".." in path.split("/") or classify(path, cwd, env) is not Place.PROJECT:
        return False
    if SENSITIVE_FILES.search(path) or CREDENTIAL_FILES.search(path):
        return False
    first = path.lstrip("./").split("/", 1)[0]
    return first in OUTPUT_DIRS or bool(ARTEFACT.search(path))


GIT_GLOBAL_ARG = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def git_split(words: list[Word]) -> tuple[list[tuple[str, Span]], list[Word]]:
    configs: list[tuple[str, Span]] = []
    i = 1
    while i < len(words):
        t = words[i].text
        if t == "-c" and i + 1 < len(words):
            configs.append((words[i + 1].text, words[i + 1].span))
            i += 2
        elif t in GIT_GLOBAL_ARG:
            i += 2
        elif t.startswith("-"):
            i += 1
        else:
            break
    return configs, words[i:]


REMOTE_PATH = re.compile(r"^(?:[\w.+-]+@)?[\w.-]+:(?!//)")

# Hosts that only a company network resolves: a bare name (`dev-host`, found through the DNS
# search domain or ssh config), private-use names and private addresses.
_INTERNAL_HOST = re.compile(
    r"(?i)^(?:[a-z0-9][a-z0-9-]*|.+\.(?:internal|intranet|corp|lan|local|home\.arpa|intra|priv)|"
    r"10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2})$"
)


def internal_host(host: str) -> bool:
    """Is ``host`` (``user@`` and ``:port`` stripped) a name only a company network resolves?"""
    h = host.rsplit("@", 1)[-1].split(":", 1)[0].strip("[]")
    return bool(h) and not h.isdigit() and _INTERNAL_HOST.match(h) is not None


SHELL_ARG = re.compile(
    r"(?:^|[=!:'\"(\s,;{`%])(?:/usr)?(?:/local)?(?:/bin/)?(?:ba|da|z|k|c|tc|a|mk)?sh"
    r"(?:\s+-[a-z]*[ip][a-z]*)?(?:\s*$|\s*[#'\";)}&|,`]|\s+-[a-z]*[ips]\b|\s+\d?[<>])"
)


def system_wide(text: str, cwd: str | None, env: GuardEnv) -> bool:
    """``/``, a system top folder (``/etc``, ``/var``, ``/usr/*``) or every home (``/home``).

    The user's own home (``~``) and the temp roots are not: a search there is ordinary work.
    """
    if classify(text, cwd, env) is not Place.ROOT:
        return False
    canon = canonical_for_match(text, cwd, env)
    return canon.startswith("/") and canon.rstrip("/*") not in TEMP_TOPS


def secret_root(text: str, cwd: str | None, env: GuardEnv) -> bool:
    """``/``, ``/etc``, ``/var``, ``/srv`` or every home: where a blind search finds secrets."""
    canon = canonical_for_match(text, cwd, env)
    return canon.startswith("/") and (canon.rstrip("/*") or "/") in SECRET_ROOTS


SECRET_ROOTS = frozenset(
    {"/", "/etc", "/home", "/Users", "/root", "/var", "/srv", "/private", "/private/etc",
     "/private/var"}
)  # fmt: skip


OUTSIDE_PLACES = (Place.HOME, Place.ROOT, Place.SYSTEM, Place.OUTSIDE)


def cd_before(inv: Invocation, ctx: Context) -> str | None:
    """The folder of the last literal ``cd`` earlier in the line (None: the working folder)."""
    me = position(ctx, inv)
    for c in reversed(ctx.invs[:me]):
        if c.name in ("cd", "pushd") and not c.args:
            return "~"  # cd alone goes home
        if c.name in ("cd", "pushd") and (
            c.words[1].literal
            or c.args[0].startswith(("$HOME", "${HOME}"))
            or USER_HOME.match(c.args[0])
        ):
            return c.args[0] if c.args[0] != "-" else None
    return None


# /home/$USER, /Users/${LOGNAME}: one's own home folder named through a variable
USER_HOME = re.compile(r"^/(?:home|Users)/\$\{?(?:USER|LOGNAME|USERNAME)\}?/?$")


# Fragments (lower case) one of which every credential path in CREDENTIAL_FILES contains. One
# Aho-Corasick pass finds any of them (a substring test per fragment costs a scan per fragment,
# a case-blind regex alternation more).
CRED_HINTS = (
    "ssh", "aws", "gcloud", "azure", "kube", "docker", "netrc", "credential", "npmrc", "pypirc",
    "pgpass", "my.cnf", "gh/", "gnupg", "password", "shadow", "passwd", "sudoers", "vault",
    "terraform", "keychain", "logins", "login data", "cookie", "keyring", "hub", "rclone",
    "serviceaccount", ".oci", "id_", ".pem", ".key", ".env", "environ", "key3.db", "key4.db",
    "signons", "web data", "local state", "op/config", "auth.json", "oauth_creds",
    "github-copilot", "glab-cli",
)  # fmt: skip


def hint_automaton(hints: tuple[str, ...]) -> Any:
    automaton = ahocorasick.Automaton()
    for hint in hints:
        automaton.add_word(hint, hint)
    automaton.make_automaton()
    return automaton


CRED_HINT_SEARCH = hint_automaton(CRED_HINTS).iter


def cred_hint(text: str) -> bool:
    """Does ``text`` (any case) contain one of ``CRED_HINTS``?"""
    return next(CRED_HINT_SEARCH(text.lower()), None) is not None


DROP_HOSTS = re.compile(
    r"(?i)(?:^|[/@.])(?:file\.io|transfer\.sh|0x0\.st|temp\.sh|paste\.ee|pastebin\.com|"
    r"hastebin\.com|termbin\.com|webhook\.site|requestbin\.\w+|pipedream\.net|"
    r"discord(?:app)?\.com/api/webhooks|hooks\.slack\.com|api\.telegram\.org|"
    r"anonfiles\.com|gofile\.io|oast\.\w+|interact\.sh|burpcollaborator\.net|ngrok\.io|"
    r"ngrok-free\.app|trycloudflare\.com|bore\.pub|serveo\.net|localhost\.run|"
    r"pinggy\.(?:io|link)|loca\.lt|localtunnel\.me)"
)


PATH_DIRS = re.compile(
    r"^(?:~/\.local/bin|~/bin|~/\.cargo/bin|~/go/bin|~/\.npm-global/bin|~/\.bun/bin|"
    r"~/\.deno/bin|/usr/local/s?bin|/usr/s?bin|/s?bin|/opt/homebrew/s?bin|/opt/local/bin|"
    r"~/\.pyenv/shims|~/\.volta/bin|~/\.nvm/versions/node/[^/]+/bin)/([^/]+)$"
)


COMMON_TOOLS = frozenset(
    {"git", "ls", "cat", "cp", "mv", "rm", "sh", "bash", "zsh", "python", "python3", "pip",
     "pip3", "node", "npm", "npx", "yarn", "pnpm", "ssh", "scp", "sudo", "su", "curl", "wget",
     "make", "gcc", "cc", "go", "cargo", "rustc", "java", "docker", "kubectl", "gh", "grep",
     "find", "sed", "awk", "env", "which", "tar", "gzip", "openssl", "gpg", "claude", "codex",
     "gemini", "cursor", "code", "vim", "nano", "less", "more", "head", "tail", "ps", "kill",
     "id", "whoami", "uv", "poetry", "ruby", "perl", "php", "bun", "deno", "pytest", "tsc",
     "domestique", "aws", "gcloud", "az", "terraform", "helm", "chmod", "chown", "ln", "date",
     "touch", "mkdir", "echo", "printf", "test", "tr", "sort", "xargs"}
)  # fmt: skip


def shadowed_tool(path: str, cwd: str | None, env: GuardEnv) -> str | None:
    """The common program a file at ``path`` would shadow on PATH, or None."""
    m = PATH_DIRS.match(canonical_for_match(path, cwd, env))
    return m.group(1) if m and m.group(1) in COMMON_TOOLS else None
