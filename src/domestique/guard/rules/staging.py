"""Credentials staged on the way out: printed into a variable, a function or a file, then sent.

``_rule_flows`` (network) sees a credential printer that feeds a sender directly (a pipe, a
substitution in the sender's words). These rules follow the other routes the value takes in the
same command line:

- a printer whose output is *kept* (``T=$(gh auth token)``, ``env X=$(…)``, a function body,
  ``> file``, ``| tee file``) while a sender in the line goes to a host that is not the
  credential's provider;
- a file written from a credential (a printer's output, a copy or archive of a credential file
  or folder) that a later sender names (``curl -F f=@/tmp/t``, ``rclone copy x remote:``,
  ``nc host < x``);
- a built-in web server that publishes a credential folder (``python -m http.server -d ~/.ssh``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from domestique.guard import flows
from domestique.guard.model import Hit, Invocation, Word
from domestique.guard.names import INTERPRETERS
from domestique.guard.paths import CREDENTIAL_FILES, SENSITIVE_FILES, canonical_for_match
from domestique.guard.rules.common import (
    cd_before,
    db_remote,
    publishes,
    span_of,
    storage_upload,
)
from domestique.guard.rules.network import SENDERS, dumps_environment
from domestique.guard.rules.registry import Context, line_rule, rule
from domestique.guard.rules.vocab import RAW_NETWORK

# Programs that copy, pack or re-encode what they read into a file they write.
_PACKERS = frozenset(
    {"cp", "tar", "zip", "7z", "7za", "gzip", "bzip2", "xz", "zstd", "base64", "base32", "xxd",
     "cat", "openssl", "gpg", "sqlite3", "rsync", "ditto", "install", "dd", "split", "head",
     "tail", "awk", "sed", "strings", "jq", "yq", "tr", "rev", "od", "hexdump", "python", "node"}
)  # fmt: skip
_PIECES = re.compile(r"[=@,:<]")
# Sources that count only through a file they write (their output alone is often shown).
_NOT_KEPT = frozenset(
    {
        "echo",
        "printf",
        "env",
        "printenv",
        "set",
        "export",
        "declare",
        "typeset",
        "pbpaste",
        "wl-paste",
        "xclip",
        "xsel",
    }
)
# tar/zip/7z/openssl/gpg options whose value is the file written
_OUT_OPTIONS = frozenset({"-f", "--file", "-o", "--output", "-out", "--out", "of"})


def _is_secret_path(text: str, ctx: Context) -> bool:
    canon = canonical_for_match(text, ctx.cwd, ctx.env)
    return bool(CREDENTIAL_FILES.search(canon) or SENSITIVE_FILES.search(canon))


def _reads_secret(inv: Invocation, ctx: Context) -> bool:
    """Does this copier or packer read a credential file or folder?"""
    words = [w.text for w in inv.words[1:] if not w.text.startswith("-")]
    words += [r.target.text for r in inv.redirects if r.reads]
    return any(_is_secret_path(t.split("=", 1)[-1], ctx) for t in words)


def _written(inv: Invocation) -> list[str]:
    """Files this invocation writes: stdout redirects, tee, cp's target, tar -f, zip's archive."""
    out = [r.target.text for r in inv.redirects if r.writes and r.fd in ("", "1", "&")]
    args = inv.args
    positional = [a for a in args if not a.startswith("-")]
    n = inv.name
    if n == "tee":
        out += positional
    elif n in ("cp", "install", "ditto", "rsync") and len(positional) >= 2:
        out.append(positional[-1])
    elif n == "gcloud" and "keys" in positional and "create" in positional:
        after = positional[positional.index("create") + 1 :]
        out += after[:1]  # gcloud iam service-accounts keys create KEY.json
    elif n in ("zip", "7z", "7za") and positional:
        out.append(positional[1] if n != "zip" and len(positional) > 1 else positional[0])
    for i, a in enumerate(args[:-1]):
        if a in _OUT_OPTIONS or (n == "tar" and a.startswith("-") and a.endswith("f")):
            out.append(args[i + 1])
        elif n == "tar" and i == 0 and not a.startswith("-") and a.endswith("f"):
            out.append(args[1])  # tar czf out.tgz …
    out += [a.split("=", 1)[1] for a in args if a.startswith(("of=", "--output=", "--file="))]
    return [p for p in out if p and p not in ("-", "/dev/null", "/dev/stdout", "/dev/stderr")]


def _norm(path: str, ctx: Context) -> str:
    p = canonical_for_match(path, ctx.cwd, ctx.env)
    while p.startswith("./"):
        p = p[2:]
    return posixpath.normpath(p) if p else p


def _sender(inv: Invocation) -> bool:
    return (
        inv.name in SENDERS
        or (inv.code_network and inv.name in INTERPRETERS)
        or storage_upload(inv)
        or publishes(inv)
        or db_remote(inv) is not None
    )


def _printed(inv: Invocation) -> str | None:
    """The provider when ``inv`` prints a credential: a printer, or echo/printf of a secret-named
    variable (``echo $AZURE_CLIENT_SECRET > /tmp/s``)."""
    provider = flows.printed_credential(inv.name, inv.args)
    if provider is None and inv.name in ("echo", "printf"):
        names = flows.secret_variables(inv.args)
        if names:
            return flows.variable_provider(names[0])
    if provider is None and dumps_environment(inv):
        return ""  # env > /tmp/e: every variable, secrets included
    return provider


def _foreign(inv: Invocation, provider: str, *, content: bool = True) -> bool:
    """Does ``inv`` send to a host that is not ``provider``'s (or to one it cannot read)?
    ``content``: the credential is what is sent (a file, stdin), not possibly just the sender's
    own login (``GH_TOKEN=$(gh auth token) gh issue create …``); a forge's publishing
    subcommands then count as foreign."""
    if publishes(inv):
        return content or not flows.host_is_provider(_FORGES[inv.name], provider)
    if inv.name in RAW_NETWORK or any(
        "/dev/tcp/" in r.target.text or "/dev/udp/" in r.target.text for r in inv.redirects
    ):
        return True
    hosts = flows.hosts_of(inv.args)
    return not hosts or not all(flows.host_is_provider(h, provider) for h in hosts)


def _named_files(inv: Invocation, ctx: Context) -> list[Word]:
    out: list[Word] = []
    for w in [*inv.words[1:], *(r.target for r in inv.redirects if r.reads)]:
        for piece in (w.text, *_PIECES.split(w.text)):
            if piece and piece.strip("-"):
                out.append(Word(_norm(piece, ctx), w.literal, w.span))
    return out


@line_rule(facts=("egress",))
def _rule_staged_credentials(ctx: Context) -> Iterator[Hit]:
    invs = ctx.invs
    senders = [i for i in ctx.egress if _sender(invs[i])]
    if not senders:
        return
    taint: list[str | None] = []  # per invocation: the provider of the credential it outputs
    kept: list[tuple[int, str]] = []  # (printer, provider) whose output is stored, not shown
    files: dict[str, tuple[int, str]] = {}  # file written from a credential -> (writer, provider)
    downstream: set[int] = {u for inv in invs for u in inv.upstream}
    for i, inv in enumerate(invs):
        provider = _printed(inv) if inv.words else None
        if provider is None:
            fed = [taint[u] for u in inv.upstream if u < i]
            fed += [taint[s] for w in inv.words for s in w.subs if s < i]
            provider = next((p for p in fed if p is not None), None)
        elif inv.name not in _NOT_KEPT and (
            inv.inside_sub
            or any(v.startswith("function ") for v in inv.via)
            or i in downstream
            or any(r.writes for r in inv.redirects)
        ):
            kept.append((i, provider))
        if provider is None and inv.name in _PACKERS and _reads_secret(inv, ctx):
            provider = ""
        taint.append(provider)
        if provider is not None:
            for path in _written(inv):
                files[_norm(path, ctx)] = (i, provider)
    for e in senders:
        s = invs[e]
        if taint[e] is not None and flows.printed_credential(s.name, s.args) is not None:
            continue  # the sender prints it itself: network's _rule_flows judges that
        for w in _named_files(s, ctx):
            src, provider = files.get(w.text, (-1, ""))
            if src >= 0 and src != e and _foreign(s, provider):
                yield Hit(
                    "cmd.exfiltration",
                    f"sends {w.text}, written from a credential",
                    span_of(invs[src].span, s.span),
                    invs[src].render() + " ; " + s.render(),
                )
                return
        for p, provider in kept:
            if p != e and _foreign(s, provider, content=_as_content(invs[p], p, s)):
                yield Hit(
                    "cmd.exfiltration",
                    f"{invs[p].name} prints a credential that is kept and sent away",
                    span_of(invs[p].span, s.span),
                    invs[p].render() + " ; " + s.render(),
                )
                return


_FORGES = {"gh": "github.com", "glab": "gitlab.com"}


def _as_content(printer: Invocation, p: int, s: Invocation) -> bool:
    """May what ``printer`` printed be what ``s`` sends, rather than ``s``'s own login? Only
    a printer inside ``s``'s environment prefix (``GH_TOKEN=$(gh auth token) gh …``) is not."""
    if p in s.upstream or any(p in w.subs for w in s.words):
        return True
    (ps, pe), (ss, se) = printer.span, s.span
    return not (ss <= ps and pe <= se)


_SERVERS = frozenset({"python", "php", "ruby", "busybox"})


@rule(programs=_SERVERS, args=True)
def _rule_serves_credentials(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``python -m http.server -d ~/.ssh``, ``php -S 0:80 -t ~/.aws``: a credential folder."""
    args = inv.args
    if not (
        "http.server" in args
        or "SimpleHTTPServer" in args
        or "-S" in args
        or args[:1] == ["httpd"]
        or any(a.startswith("-run") for a in args)
    ):
        return
    pairs = zip(args, [*args[1:], ""], strict=True)
    folder = next((v for a, v in pairs if a in ("-d", "--directory", "-t", "-h")), None)
    if folder is None:
        folder = cd_before(inv, ctx)
    if folder is not None and _is_secret_path(folder.rstrip("/") or "/", ctx):
        yield Hit("cmd.exfiltration", f"{inv.name} serves the credential folder {folder}",
                  inv.span, inv.render())  # fmt: skip
