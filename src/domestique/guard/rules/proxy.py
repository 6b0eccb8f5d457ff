"""Tools told to go around the firewall proxy, to trust certificates from a temporary file, or to
install from elsewhere, through their options or their own configuration files.

The environment variables (``HTTPS_PROXY``, ``NO_PROXY``, ``REQUESTS_CA_BUNDLE`` …) are judged in
:mod:`.tamper`; these are the same settings given as a tool's own options or configuration:
``curl --noproxy '*'``, ``wget --no-proxy``, ``git config http.proxy ''``, ``npm config set
proxy null``, ``git config http.sslCAInfo /tmp/ca.pem``, ``pip config set global.cert /tmp/x``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation
from domestique.guard.paths import canonical_for_match
from domestique.guard.rules.common import git_split
from domestique.guard.rules.registry import Context, rule
from domestique.guard.rules.tamper import assignment_hit
from domestique.guard.rules.vocab import TEMP_TOPS
from domestique.guard.runners import echoed

_NAMES = frozenset(
    {"curl", "wget", "wget2", "git", "npm", "pnpm", "yarn", "pip", "pip3", "uv", "conda", "mamba"}
)
_TLS_KEYS = frozenset({"enablestrictssl", "strict-ssl", "ssl_verify", "sslverify"})
_FALSE = frozenset({"false", "0", "no", "off"})
_EMPTY = frozenset({"", "null", "false", "none", "''", '""'})
_PROXY_KEYS = frozenset({"http.proxy", "https.proxy", "proxy", "https-proxy", "http-proxy"})
_CA_KEYS = frozenset(
    {"http.sslcainfo", "http.sslcapath", "cafile", "ca", "global.cert", "install.cert", "cert"}
)


def _loopback_url(value: str) -> bool:
    """``http://127.0.0.1:8899``, ``localhost:3128``: a proxy on this machine (the firewall's)."""
    host = re.sub(r"^[a-z][\w+.-]*://", "", value.lower()).split("@")[-1].split("/")[0]
    host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return host in ("localhost", "[::1]", "::1") or host.startswith("127.")


def _temp(value: str) -> bool:
    return any(value == t or value.startswith(t + "/") for t in TEMP_TOPS)


def _config_pairs(inv: Invocation) -> list[tuple[str, str]]:
    """(key, value) pairs a ``git config``/``npm config set``/``pip config set`` writes."""
    n = inv.name
    if n == "git":
        configs, rest = git_split(inv.words)
        pairs = [(c.partition("=")[0], c.partition("=")[2]) for c, _ in configs]
        words = [w.text for w in rest]
        if words[:1] == ["config"]:
            positional = [a for a in words[1:] if not a.startswith("-")]
            if len(positional) >= 2:
                pairs.append((positional[0], positional[1]))
        return pairs
    if n in ("conda", "mamba") and "--set" in inv.args:  # conda config --set ssl_verify false
        i = inv.args.index("--set")
        return [(inv.args[i + 1], inv.args[i + 2])] if len(inv.args) > i + 2 else []
    verbs = [a for a in inv.args if not a.startswith("-")]
    if verbs[:1] == ["config"]:
        verbs = verbs[1:]
    if verbs[:1] != ["set"]:
        return []
    kv = verbs[1:]
    if len(kv) == 1 and "=" in kv[0]:
        key, _, value = kv[0].partition("=")
        return [(key, value)]
    return [(kv[0], kv[1])] if len(kv) >= 2 else []


@rule(programs=_NAMES, args=True)
def _rule_proxy_options(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    n = inv.name
    args = inv.args
    judged = inv.render()
    if n in ("curl", "wget", "wget2"):
        for i, arg in enumerate(args):
            value = args[i + 1] if i + 1 < len(args) else None
            a = arg
            if arg.startswith("--noproxy="):
                value, a = arg.split("=", 1)[1], "--noproxy"
            if (a == "--noproxy" and value is not None and "*" in value.split(",")) or (
                a == "--no-proxy" and n != "curl"
            ):
                yield Hit("cmd.guard_tamper", f"{n} {a} goes around the firewall proxy",
                          inv.span, judged)  # fmt: skip
                return
            if a in ("-x", "--proxy") and value is not None and value.strip("'\"") in _EMPTY:
                yield Hit("cmd.guard_tamper", f"{n} {a} '' goes around the firewall proxy",
                          inv.span, judged)  # fmt: skip
                return
        return
    for key, value in _config_pairs(inv):
        k = key.lower()
        v = value.strip("'\"")
        if (k in _PROXY_KEYS or k.endswith(".proxy")) and not _loopback_url(v):
            yield Hit("cmd.guard_tamper", f"{n} {key} changed: the firewall proxy is skipped",
                      inv.span, judged)  # fmt: skip
            return
        if k in _TLS_KEYS and v.lower() in _FALSE and n != "git":  # git's: rules/git.py
            yield Hit("cmd.tls_off", f"{n} {key} {v} turns certificate checks off", inv.span,
                      judged)  # fmt: skip
            return
        if k == "noproxy" and "*" in v.split(","):
            yield Hit("cmd.guard_tamper", f"{n} noproxy '*': the firewall proxy is skipped",
                      inv.span, judged)  # fmt: skip
            return
        if (k in _CA_KEYS or k.endswith(".sslcainfo")) and _temp(v):
            yield Hit("cmd.tls_off", f"{n} {key} trusts certificates from a temporary file",
                      inv.span, judged)  # fmt: skip
            return


# ---------------------------------------------------------------- tools' own configuration files

# file (canonical tail) -> (pattern over the text written, code, message)
_CONFIG_TEXT: tuple[tuple[re.Pattern[str], re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"(?:^|/)\.(?:npmrc|yarnrc(?:\.yml)?)$"),
        re.compile(r"(?im)^\s*(?:strict-ssl\s*=\s*false|enableStrictSsl\s*:\s*false)\b"),
        "cmd.tls_off",
        "turns npm's certificate checks off",
    ),
    (
        re.compile(r"(?:^|/)\.(?:npmrc|yarnrc(?:\.yml)?)$"),
        re.compile(
            r"(?im)^\s*(?:@[\w-]+:)?(?:registry\s*=|npmRegistryServer\s*:)\s*[\"']?"
            r"(?!https://registry\.(?:npmjs\.org|yarnpkg\.com))https?://"
        ),
        "cmd.untrusted_install",
        "points npm at another registry",
    ),
    (
        re.compile(r"(?:^|/)(?:pip\.conf|pip\.ini|\.pydistutils\.cfg|uv\.toml)$"),
        re.compile(
            r"(?im)^\s*(?:index-url|extra-index-url|find-links|index_url)\s*=\s*[\"']?"
            r"(?!https://(?:pypi\.org|files\.pythonhosted\.org))\w+://"
        ),
        "cmd.untrusted_install",
        "points pip at another index",
    ),
    (
        re.compile(r"(?:^|/)(?:pip\.conf|pip\.ini)$"),
        re.compile(r"(?im)^\s*trusted-host\s*="),
        "cmd.tls_off",
        "makes pip trust a host without certificate checks",
    ),
    (
        re.compile(r"(?:^|/)\.npmrc$"),
        re.compile(r"(?im)^\s*script-shell\s*=\s*[\"']?/(?:tmp|var/tmp|dev/shm)/"),
        "cmd.temp_exec",
        "makes npm run every package script with a program from a temporary folder",
    ),
    (
        re.compile(r"(?:^|/)\.curlrc$"),
        re.compile(r"(?im)^\s*-?-?(?:insecure|k)\s*$|^\s*noproxy\s*=?\s*[\"']?\*"),
        "cmd.tls_off",
        "makes every curl skip certificate checks or the proxy",
    ),
    (
        re.compile(r"(?:^|/)\.wgetrc$"),
        re.compile(r"(?im)^\s*(?:check_certificate\s*=\s*off|use_proxy\s*=\s*off)"),
        "cmd.tls_off",
        "makes every wget skip certificate checks or the proxy",
    ),
    (
        re.compile(r"(?:^|/)\.condarc$"),
        re.compile(r"(?im)^\s*ssl_verify\s*:\s*false"),
        "cmd.tls_off",
        "turns conda's certificate checks off",
    ),
    (
        re.compile(r"(?:^|/)\.cargo/config(?:\.toml)?$"),
        re.compile(
            r"(?im)^\s*(?:check-revoke\s*=\s*false|cainfo\s*=\s*[\"']?/(?:tmp|var/tmp|dev/shm)/)"
        ),
        "cmd.tls_off",
        "turns cargo's certificate checks off or trusts a temporary CA",
    ),
    (
        re.compile(r"(?:^|/)(?:yum\.conf|dnf\.conf|yum\.repos\.d/[^/]+\.repo)$"),
        re.compile(r"(?im)^\s*(?:sslverify|gpgcheck)\s*=\s*(?:0|false|no)\b"),
        "cmd.tls_off",
        "turns yum/dnf's certificate or signature checks off",
    ),
    (
        re.compile(r"(?:^|/)apt\.conf(?:\.d/[^/]+)?$"),
        re.compile(r"(?im)Verify-(?:Peer|Host)\s+\"?false|AllowUnauthenticated\s+\"?true"),
        "cmd.tls_off",
        "turns apt's certificate or signature checks off",
    ),
    (
        re.compile(r"(?:^|/)\.gemrc$|(?:^|/)\.bundle/config$"),
        re.compile(r"(?im)^\s*:?ssl_verify_mode:\s*0|BUNDLE_SSL_VERIFY_MODE:\s*[\"']?0"),
        "cmd.tls_off",
        "turns gem/bundler certificate checks off",
    ),
    (
        re.compile(r"(?:^|/)\.curlrc$"),
        re.compile(
            r"(?im)^\s*-?-?(?:proxy|x)\s*=?\s*[\"']?(?:https?|socks5h?)://(?!127\.|localhost|\[::1\])"
        ),
        "cmd.guard_tamper",
        "routes every curl through another proxy",
    ),
    (
        re.compile(r"(?:^|/)\.docker/config\.json$"),
        re.compile(
            r"(?i)\"(?:https?|ftp)Proxy\"\s*:\s*\"(?:https?|socks5h?)://(?!127\.|localhost)"
        ),
        "cmd.guard_tamper",
        "routes every container's traffic through another proxy",
    ),
    (
        re.compile(r"(?:^|/)\.gemrc$"),
        re.compile(r"(?im)--source\s+(?!https://rubygems\.org)\w+://|^\s*:?sources:"),
        "cmd.untrusted_install",
        "points gem at another source",
    ),
    (
        re.compile(r"(?:^|/)\.vscode/tasks\.json$"),
        re.compile(r"(?i)\"runOn\"\s*:\s*\"folderOpen\""),
        "cmd.persistence",
        "adds a task that runs when the folder is opened",
    ),
    (
        re.compile(r"(?:^|/)\.(?:vscode|cursor|windsurf)/settings\.json$"),
        re.compile(
            r"(?i)\"[\w.]*autoApprove[\w.]*\"\s*:\s*(?:true|\{)|\"task\.allowAutomaticTasks\"\s*:\s*\"on\"|"
            r"\"[\w.]*(?:yolo|skipPermissions|dangerously)\w*\"\s*:\s*true"
        ),
        "cmd.guard_tamper",
        "turns the editor agent's approval prompts off",
    ),
    (
        re.compile(
            r"(?:^|/)(?:\.mcp\.json|\.(?:cursor|vscode|gemini|windsurf)/mcp\.json|mcp_config\.json)$"
        ),
        re.compile(
            r"(?i)\"command\"\s*:\s*\"(?:/bin/|/usr/bin/)?(?:ba|z|da)?sh\"|(?:curl|wget)[^\"]*\|\s*(?:ba)?sh"
        ),
        "cmd.persistence",
        "adds an MCP server that runs shell code whenever the agent starts",
    ),
    (
        re.compile(r"(?:^|/)\.gitconfig$|(?:^|/)git/config$"),
        re.compile(r"(?im)^\s*sslverify\s*=\s*(?:false|no|off|0)"),
        "cmd.tls_off",
        "turns git's certificate checks off",
    ),
)
_CONFIG_HINT = re.compile(
    r"npmrc|yarnrc|pip\.(?:conf|ini)|pydistutils|uv\.toml|curlrc|wgetrc|condarc|gitconfig|git/config|"
    r"cargo/config|yum|dnf\.conf|apt\.conf|gemrc|bundle/config|docker/config|\.vscode/|\.cursor/|"
    r"\.windsurf/|\.gemini/|mcp"
)


@rule(programs={"echo", "printf", "cat", "tee"})
def _rule_tool_config_text(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Text written into a tool's own configuration file: ``insecure`` in ~/.curlrc,
    ``registry=`` in ~/.npmrc, ``index-url`` in pip.conf (the same settings as the options)."""
    targets = [r.target.text for r in inv.redirects if r.writes]
    if inv.name == "tee":
        targets += [a for a in inv.args if not a.startswith("-")]
    targets = [t for t in targets if _CONFIG_HINT.search(t)]
    if not targets:
        return
    text = _written_text(inv, ctx)
    if not text:
        return
    for t in targets:
        canon = canonical_for_match(t, ctx.cwd, ctx.env)
        for file_re, text_re, code, what in _CONFIG_TEXT:
            if file_re.search(canon) and text_re.search(text):
                yield Hit(code, f"{inv.name} {what} ({t})", inv.span, inv.render())
                return


def _written_text(inv: Invocation, ctx: Context) -> str | None:
    if inv.name in ("echo", "printf"):
        return echoed(inv)
    if inv.stdin_text is not None:
        return inv.stdin_text
    texts = [echoed(ctx.invs[i]) for i in inv.upstream if i < len(ctx.invs)]
    known = [t for t in texts if t is not None]
    return "\n".join(known) if known else None


@rule(programs={"go"}, args=True)
def _rule_go_env(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """``go env -w GOPROXY=… GONOSUMDB=*``: written to go's own env file, so every later go
    command uses it (judged as the exported variables they are)."""
    args = inv.args
    if args[:1] != ["env"] or not any(a in ("-w", "--w") for a in args):
        return
    for a in args[1:]:
        name, eq, value = a.partition("=")
        if eq:
            yield from assignment_hit(name, value, inv.span, inv.render(), ctx.env)
