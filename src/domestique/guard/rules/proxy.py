"""Tools told to go around the firewall proxy, or to trust certificates from a temporary file.

The environment variables (``HTTPS_PROXY``, ``NO_PROXY``, ``REQUESTS_CA_BUNDLE`` …) are judged in
:mod:`.tamper`; these are the same settings given as a tool's own options or configuration:
``curl --noproxy '*'``, ``wget --no-proxy``, ``git config http.proxy ''``, ``npm config set
proxy null``, ``git config http.sslCAInfo /tmp/ca.pem``, ``pip config set global.cert /tmp/x``.
"""

from __future__ import annotations

from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation
from domestique.guard.rules.common import git_split
from domestique.guard.rules.registry import Context, rule
from domestique.guard.rules.vocab import TEMP_TOPS

_NAMES = frozenset({"curl", "wget", "wget2", "git", "npm", "pnpm", "yarn", "pip", "pip3", "uv"})
_EMPTY = frozenset({"", "null", "false", "none", "''", '""'})
_PROXY_KEYS = frozenset({"http.proxy", "https.proxy", "proxy", "https-proxy", "http-proxy"})
_CA_KEYS = frozenset(
    {"http.sslcainfo", "http.sslcapath", "cafile", "ca", "global.cert", "install.cert", "cert"}
)


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
        if (k in _PROXY_KEYS or k.endswith(".proxy")) and v.lower() in _EMPTY:
            yield Hit("cmd.guard_tamper", f"{n} {key} set to nothing: the firewall proxy is "
                      "skipped", inv.span, judged)  # fmt: skip
            return
        if k == "noproxy" and "*" in v.split(","):
            yield Hit("cmd.guard_tamper", f"{n} noproxy '*': the firewall proxy is skipped",
                      inv.span, judged)  # fmt: skip
            return
        if (k in _CA_KEYS or k.endswith(".sslcainfo")) and _temp(v):
            yield Hit("cmd.tls_off", f"{n} {key} trusts certificates from a temporary file",
                      inv.span, judged)  # fmt: skip
            return
