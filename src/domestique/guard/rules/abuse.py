"""Round 8: the machine turned against its owner's data or others' hosts, by shape, not by name.

- a mining pool (``stratum+tcp://``) or a miner's own options in any program's arguments: a miner
  renamed to look like something else still names its pool and algorithm;
- ransomware's shapes: many files emptied (``truncate -s0``), shredded, or encrypted and the
  originals deleted (``gpg -c`` then ``rm`` of the same name, ``zip -e -m``, ``7z -p -sdel``),
  over the home folder or the system rather than a project or temp folder.

Miners by name, floods, load tests and cloud fleets are table rows (``commands.toml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from domestique.guard.model import Hit, Invocation
from domestique.guard.paths import Place, classify
from domestique.guard.rules.registry import Context, line_rule, rule
from domestique.guard.rules.vocab import TEMP_TOPS

# A pool URL, or options only miners take (xmrig's --donate-level, RandomX/CryptoNight algorithms)
_MINING = re.compile(
    r"(?i)\bstratum\d?\+(?:tcp|ssl|tls|ws)s?://|(?:^|\s)--donate-level[= ]|"
    r"(?:^|\s)(?:-a|--algo|--algorithm)[= ]?(?:rx/0|rx/wow|randomx|cryptonight\S*|cn/r|cn-heavy\S*|"
    r"kawpow|ethash|etchash|autolykos2?|yespower\S*|yescrypt|ghostrider|kheavyhash)(?:\s|$)|"
    r"(?:^|\s)--coin[= ](?:monero|xmr|zephyr|ravencoin|rvn)(?:\s|$)"
)


@rule(programs=None, args=True)
def _rule_mining_pool(inv: Invocation, ctx: Context) -> Iterator[Hit]:
    """Any program pointed at a mining pool, or given a miner's options."""
    joined = " ".join(inv.args)
    low = joined.lower()
    if not ("stratum" in low or "--donate" in low or "--coin" in low or "-a" in low):
        return  # (most invocations: no pool, no miner option, no algorithm option)
    m = _MINING.search(joined)
    if m is not None:
        yield Hit("cmd.resource_abuse", f"{inv.name} mines crypto currency ({m.group().strip()})",
                  inv.span, inv.render())  # fmt: skip


# Encryptors and what marks an encrypting run of each (an archive with a password counts).
_ENCRYPTORS = frozenset({"gpg", "gpg2", "openssl", "age", "ccrypt", "mcrypt", "scrypt", "aescrypt",
                         "7z", "7za", "7zr", "zip", "rage"})  # fmt: skip
_DELETERS = frozenset({"rm", "shred", "unlink", "srm", "wipe"})
_FAR = (Place.ROOT, Place.HOME, Place.SYSTEM, Place.OUTSIDE)
_EMPTY_SIZE = re.compile(r"(?:^| )(?:-s ?|--size[= ])0(?: |$)")
_MANY = re.compile(r"[*?]|\{\}|\$")


def _encrypts(inv: Invocation) -> bool:
    args = inv.args
    n = inv.name
    if n in ("gpg", "gpg2"):
        return any(a in ("-c", "--symmetric", "-e", "--encrypt") or (
            a.startswith("-") and not a.startswith("--") and ("c" in a or "e" in a)
            and len(a) <= 4) for a in args)  # fmt: skip
    if n == "openssl":
        return bool(args) and (args[0] == "enc" or args[0].startswith(("aes", "des", "chacha")))
    if n in ("7z", "7za", "7zr"):
        return any(a.startswith("-p") for a in args)
    if n == "zip":
        return any(a in ("-e", "--encrypt", "-P", "--password") or (
            a.startswith("-") and not a.startswith("--") and "e" in a) for a in args)  # fmt: skip
    return n in ("age", "rage", "ccrypt", "mcrypt", "scrypt", "aescrypt")


def _moves_into_archive(inv: Invocation) -> bool:
    """``zip -m``, ``7z -sdel``: the archived originals are deleted."""
    if inv.name == "zip":
        return any(a in ("-m", "--move") or (a.startswith("-") and not a.startswith("--")
                   and "m" in a) for a in inv.args)  # fmt: skip
    return inv.name in ("7z", "7za", "7zr") and "-sdel" in inv.args


def _far_words(inv: Invocation, ctx: Context) -> list[str]:
    """The operands of ``inv`` that lie outside the project and temp folders."""
    return [
        w.text for w in inv.words[1:]
        if not w.text.startswith("-") and classify(w.text, ctx.cwd, ctx.env) in _FAR
    ]  # fmt: skip


def _fed_by_xargs(inv: Invocation) -> bool:
    return any(name == "xargs" for name, _ in inv.wrapped)


def _line_reaches_far(ctx: Context) -> bool:
    """Some command of the line names the home folder or the system (the list a loop walks:
    ``for f in $(find ~ -type f)``)."""
    return any(_far_words(inv, ctx) for inv in ctx.invs if inv.name in ("find", "ls", "fd"))


@line_rule(programs=_ENCRYPTORS | _DELETERS | {"truncate", "find"})
def _ransom(ctx: Context) -> Iterator[Hit]:
    """Files made unreadable in bulk: emptied, shredded, or encrypted and the originals
    deleted, over home or the system (a project's logs emptied stay allowed)."""
    invs = ctx.invs
    for inv in invs:
        n = inv.name
        if n in ("zip", "7z", "7za", "7zr") and _encrypts(inv) and _moves_into_archive(inv):
            far = [t for t in _archived(inv) if classify(t, ctx.cwd, ctx.env) in _FAR]
            if far:
                yield Hit("cmd.destructive.ransom",
                          f"{n} moves {far[0]} into an archive with a password", inv.span,
                          inv.render())  # fmt: skip
                return
        elif n == "find":
            hit = _find_ransom(inv, ctx)
            if hit is not None:
                yield hit
                return
        elif n == "truncate" and "find" not in inv.via and _EMPTY_SIZE.search(" ".join(inv.args)):
            far = [t for t in _far_words(inv, ctx) if _MANY.search(t)]
            if far or (_fed_by_xargs(inv) and _line_reaches_far(ctx)):
                where = far[0] if far else "a search of home or the system"
                yield Hit("cmd.destructive.ransom", f"truncate empties every file of {where}",
                          inv.span, inv.render())  # fmt: skip
                return
        elif n in ("shred", "srm", "wipe") and _fed_by_xargs(inv) and _line_reaches_far(ctx):
            yield Hit("cmd.destructive.ransom", f"{n} overwrites every file a search of home or "
                      "the system lists", inv.span, inv.render())  # fmt: skip
            return
    # encrypt, then delete the same name: `gpg -c "$f"; rm "$f"` in a loop over home
    encrypted = {
        w.text.strip("\"'") for inv in invs if inv.name in _ENCRYPTORS and _encrypts(inv)
        for w in inv.words[1:] if _MANY.search(w.text)
    }  # fmt: skip
    if not encrypted:
        return
    for inv in invs:
        if inv.name not in _DELETERS:
            continue
        for w in inv.words[1:]:
            t = w.text.strip("\"'")
            if t not in encrypted:
                continue
            place = classify(t, ctx.cwd, ctx.env)
            listed = place is Place.VARIABLE or "$" in t or "{}" in t  # a loop's or xargs' item
            if place in _FAR or (listed and _line_reaches_far(ctx)):
                yield Hit("cmd.destructive.ransom",
                          f"files encrypted and then deleted ({inv.name} {t})", inv.span,
                          inv.render())  # fmt: skip
                return


def _archived(inv: Invocation) -> list[str]:
    """The files an archiver packs: its operands after the archive (and 7z's command letter),
    without the password given as the next word (``zip -P PW``)."""
    ops: list[str] = []
    skip = False
    for w in inv.words[1:]:
        t = w.text
        if skip:
            skip = False
        elif t in ("-P", "--password"):
            skip = True
        elif not t.startswith("-"):
            ops.append(t)
    if inv.name != "zip" and ops and len(ops[0]) == 1:
        ops = ops[1:]  # 7z a ARCHIVE FILES…
    return ops[1:]


def _find_ransom(inv: Invocation, ctx: Context) -> Hit | None:
    """``find ~ -exec truncate -s0 {} \\;``, ``-exec shred``, ``-exec gpg -c {} \\; -exec rm``."""
    args = inv.args
    if "-exec" not in args and "-execdir" not in args and "-ok" not in args:
        return None
    joined = " ".join(args)
    inner = joined.split("-exec", 1)[-1]
    empties = "truncate" in inner and _EMPTY_SIZE.search(inner) is not None
    shreds = re.search(r"(?:^|[ /'\"])shred(?: |$)", inner) is not None
    crypt = re.search(
        r"(?:^|[ /'\"])(?:gpg2? (?:[^;]* )?(?:-c|--symmetric|-e|--encrypt)|openssl (?:enc|aes)|"
        r"age |ccrypt |mcrypt |7z a (?:[^;]* )?-p)", inner) is not None  # fmt: skip
    deletes = "-delete" in args or re.search(r"(?:^|[ /'\"])(?:rm|unlink|shred)(?: |$)", inner)
    if not (empties or shreds or (crypt and deletes)):
        return None
    roots = [w for w in inv.words[1:] if not w.text.startswith(("-", "(", "!"))][:1]
    for r in roots:
        if classify(r.text, ctx.cwd, ctx.env) in _FAR and r.text.rstrip("/") not in TEMP_TOPS:
            what = "empties" if empties else "shreds" if shreds else "encrypts and deletes"
            return Hit("cmd.destructive.ransom", f"find {what} every file under {r.text}",
                       r.span, inv.render())  # fmt: skip
    return None
