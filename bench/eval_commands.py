"""Evaluate the command guard on public corpora: recall on dangerous sets, blocks on benign ones.

    .venv/bin/python bench/eval_commands.py [--corpora ../shared/corpora] [--show-misses N]
        [--json FILE]

Sets (each folder's README in the corpora says where it comes from and its licence):

- dcg-deny / dcg-allow: destructive_command_guard's labelled regression corpus (TOML cases), its
  e2e fixture lists (dangerous/safe, heredocs BLOCK/ALLOW) and fixture YAML files.
- gtfobins-shell, -reverse-shell, -bind-shell, -command, -download: GTFOBins snippets by function
  (placeholders kept; snippets judged whole, multi-line included).
- slp-malicious: dtrizna/slp malicious one-liners.
- atomic-deny / atomic-other: Atomic Red Team linux/macos sh/bash tests with defaults substituted;
  ``deny`` = techniques a guard should stop (exec, obfuscation, credential access, persistence,
  defence evasion, destruction, exfiltration), ``other`` = discovery and the rest (reported only).
- tldr-dev / nl2bash-dev: everyday developer commands (benign-leaning; both contain some
  dangerous lines, so a block there is reviewed, not assumed false). nl2bash-dev is the benign
  sample the issue asks for, chosen by a rule over the command text alone (never by the guard's
  verdict): the line parses, and its first word (after ``VAR=value`` assignments) is one of the
  everyday developer tools in TLDR_TOOLS, as written (no path, quote or variable). ``nl2bash`` is
  the whole corpus (shell trivia, prompts, sysadmin one-liners), reported next to it.

Decisions use the built-in policy for an agent. "stopped" = ask or deny; the two are reported
apart. Nothing runs: commands are only judged. ``--json FILE`` writes the figures, every miss,
every benign deny and (``stopped_benign``) every benign ask and deny with its reason codes.

Reviewed figures: bench/reviewed_commands.toml holds a hand review of every remaining miss of the
dangerous sets and every deny of the benign sets dcg-allow, tldr-dev and nl2bash-dev (keyed by
the first 16 hex digits of the command's sha256). Benign "false blocks (reviewed)" counts the
denies not reviewed as dangerous-as-written, once with the unjudgeable ones (generated code piped
into a shell, commands from variables, text that is not shell) and once without them; a deny
missing from the file counts as a false block. A dangerous-set miss missing from the file is
listed with a warning.
"""

from __future__ import annotations

import argparse
import collections
import glob
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import yaml

os.environ.setdefault("DOMESTIQUE_HOME", tempfile.mkdtemp(prefix="dq-eval-"))

from domestique.guard import judge_command
from domestique.policy import load_policy
from domestique.records import Actor

DANGEROUS = (
    "dcg-deny",
    "gtfobins-shell",
    "gtfobins-reverse-shell",
    "gtfobins-bind-shell",
    "slp-malicious",
    "atomic-deny",
)
BENIGN = ("dcg-allow", "tldr-dev", "nl2bash-dev", "nl2bash")
INFO = ("gtfobins-command", "gtfobins-download", "atomic-other")
REVIEWED_BENIGN = ("dcg-allow", "tldr-dev", "nl2bash-dev")
REVIEWED_FILE = Path(__file__).with_name("reviewed_commands.toml")
BENIGN_VERDICTS = ("dangerous-as-written", "unjudgeable", "false-block")
MISS_VERDICT = "miss-accepted"

# Atomic technique prefixes a command guard should stop.
ATOMIC_DENY = (
    "T1059.004", "T1140", "T1027", "T1105", "T1552", "T1555", "T1003", "T1070", "T1562",
    "T1485", "T1486", "T1561", "T1490", "T1529", "T1048", "T1041", "T1567", "T1053", "T1543",
    "T1546", "T1547", "T1037", "T1098", "T1136", "T1548", "T1222", "T1574", "T1556", "T1564",
    "T1620", "T1496", "T1505", "T1078", "T1021", "T1110", "T1090", "T1095", "T1571", "T1572",
    "T1030", "T1560", "T1565", "T1014", "T1553", "T1690",
)  # fmt: skip
TLDR_TOOLS = (
    "git", "npm", "yarn", "pnpm", "npx", "node", "python", "python3", "pip", "pip3", "pytest",
    "cargo", "rustc", "rustup", "go", "make", "cmake", "gcc", "clang", "docker", "docker-compose",
    "kubectl", "helm", "terraform", "gh", "jq", "ls", "cat", "grep", "rg", "find", "sed", "awk",
    "tar", "zip", "unzip", "curl", "wget", "cp", "mv", "mkdir", "touch", "head", "tail", "less",
    "diff", "wc", "sort", "uniq", "xargs", "echo", "env", "which", "ps", "kill", "du", "df",
    "ssh", "scp", "rsync", "tree", "cd", "pwd", "ln", "chmod", "poetry", "uv", "ruff", "mypy",
    "black", "eslint", "prettier", "tsc", "deno", "bun", "java", "javac", "mvn", "gradle",
    "dotnet", "ruby", "gem", "bundle", "rails", "php", "composer", "perl", "brew", "apt",
    "sqlite3", "psql", "mysql", "redis-cli", "openssl", "base64", "sha256sum", "date", "time",
    "watch", "tmux", "nano", "vim", "code", "http", "tldr", "man", "stat", "file", "cut", "tr",
)  # fmt: skip


def _dcg(root: Path) -> Iterator[tuple[str, str]]:
    base = root / "dcg-corpus" / "tests"
    for f in sorted(glob.glob(str(base / "corpus" / "**" / "*.toml"), recursive=True)):
        data = tomllib.loads(Path(f).read_text())
        for case in data.get("case", []):
            expected = case.get("expected") or case.get("expected_decision")
            if expected in ("deny", "allow") and isinstance(case.get("command"), str):
                yield ("dcg-deny" if expected == "deny" else "dcg-allow"), case["command"]
    fixtures = base / "e2e" / "fixtures" / "commands"
    for name, label in (("dangerous.txt", "dcg-deny"), ("safe.txt", "dcg-allow")):
        for line in (fixtures / name).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                yield label, line
    for line in (fixtures / "heredocs.txt").read_text().splitlines():
        for prefix, label in (("BLOCK:", "dcg-deny"), ("ALLOW:", "dcg-allow")):
            if line.startswith(prefix):
                # The fixture writes newlines and tabs as \n and \t (`<<-` strips the tabs).
                yield label, line[len(prefix) :].replace("\\n", "\n").replace("\\t", "\t")
    for name, label in (
        ("destructive_commands.yaml", "dcg-deny"),
        ("safe_commands.yaml", "dcg-allow"),
    ):
        try:
            data = yaml.safe_load((base / "fixtures" / name).read_text())
        except yaml.YAMLError:
            # The README notes destructive_commands.yaml does not load strictly: take the lines.
            for line in (base / "fixtures" / name).read_text().splitlines():
                m = re.match(r"\s*-?\s*command:\s*(.+)$", line)
                if m:
                    raw = m.group(1).strip()
                    if raw[:1] in "'\"" and raw[-1:] == raw[:1]:
                        raw = raw[1:-1]
                    yield label, raw
            continue
        for items in (data or {}).values():
            for item in items or []:
                if isinstance(item, dict) and isinstance(item.get("command"), str):
                    yield label, item["command"]


def _gtfobins(root: Path) -> Iterator[tuple[str, str]]:
    wanted = {"shell", "reverse-shell", "bind-shell", "command", "download"}
    for f in sorted((root / "gtfobins" / "_gtfobins").iterdir()):
        try:
            docs = list(yaml.safe_load_all(f.read_text()))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if not isinstance(doc, dict):
                continue
            for function, entries in (doc.get("functions") or {}).items():
                if function not in wanted:
                    continue
                for entry in entries or []:
                    code = entry.get("code") if isinstance(entry, dict) else None
                    if isinstance(code, str) and code.strip():
                        yield f"gtfobins-{function}", code


def _slp(root: Path) -> Iterator[tuple[str, str]]:
    for line in (root / "slp" / "data" / "malicious.cm").read_text(errors="replace").splitlines():
        if line.strip():
            yield "slp-malicious", line


def _atomic(root: Path) -> Iterator[tuple[str, str]]:
    for f in sorted((root / "atomic-red-team" / "atomics").glob("T*/T*.yaml")):
        data = yaml.safe_load(f.read_text())
        technique = str(data.get("attack_technique", f.stem))
        label = "atomic-deny" if technique.startswith(ATOMIC_DENY) else "atomic-other"
        for test in data.get("atomic_tests", []):
            platforms = test.get("supported_platforms") or []
            executor = test.get("executor") or {}
            if not ({"linux", "macos"} & set(platforms)) or executor.get("name") not in (
                "sh",
                "bash",
            ):
                continue
            command = executor.get("command")
            if not isinstance(command, str):
                continue
            for name, arg in (test.get("input_arguments") or {}).items():
                command = command.replace("#{" + name + "}", str(arg.get("default", "")))
            yield label, command.strip()


_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")


def _flatten(example: str) -> str:
    def sub(m: re.Match[str]) -> str:
        inner = m.group(1)
        if inner.startswith("[") and inner.endswith("]") and "|" in inner:
            return inner[1:-1].split("|", 1)[0]
        return inner.split("|", 1)[0]

    return _PLACEHOLDER.sub(sub, example)


def _tldr(root: Path) -> Iterator[tuple[str, str]]:
    for section in ("common", "linux", "osx"):
        for tool in TLDR_TOOLS:
            page = root / "tldr-pages" / "pages" / section / f"{tool}.md"
            if not page.exists():
                continue
            for line in page.read_text().splitlines():
                if line.startswith("`") and line.endswith("`"):
                    yield "tldr-dev", _flatten(line[1:-1])
    # Subcommand pages of the same tools (git-commit.md, docker-run.md, npm-install.md...).
    for section in ("common", "linux", "osx"):
        for page in sorted((root / "tldr-pages" / "pages" / section).glob("*-*.md")):
            if page.stem.split("-", 1)[0] in (
                "git",
                "docker",
                "npm",
                "cargo",
                "kubectl",
                "go",
                "gh",
            ):
                for line in page.read_text().splitlines():
                    if line.startswith("`") and line.endswith("`"):
                        yield "tldr-dev", _flatten(line[1:-1])


def _nl2bash(root: Path) -> Iterator[tuple[str, str]]:
    for line in (
        (root / "nl2bash" / "data" / "bash" / "all.cm").read_text(errors="replace").splitlines()
    ):
        if line.strip():
            yield "nl2bash", line
            if developer_line(line):
                yield "nl2bash-dev", line


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


def developer_line(command: str) -> bool:
    """The benign-sample rule: the line parses and starts with an everyday developer tool.

    Only the command text decides (the first word after ``VAR=value`` assignments, as written, must
    be in TLDR_TOOLS; the parser must read the line without error); the guard's rules never do.
    """
    from domestique.guard.unfold import unfold_command

    words = [w for w in command.split() if not _ASSIGNMENT.match(w)]
    if not words or words[0] not in TLDR_TOOLS:
        return False
    return unfold_command(command).parse_ok


# ---------------------------------------------------------------- the agent-relevant subset
#
# Public "dangerous" sets label by technique, not by harm to the machine an AI coding agent works
# on. An item leaves the subset only when this rule (never a list of items) says it is harmless
# to that machine: every command the shell would run (as the guard's parser unfolds it, no
# rules applied) is a read-only look (``uname -a``, ``find / -name x``, ``ls -la /etc``) or a
# local file operation (compile, copy, chmod, delete) whose every path stays in the project
# (relative, no ``..``) or a temp folder, with no network tool, no privilege wrapper, no
# credential path and no code run from a variable or substitution. A line that runs nothing (an
# assignment alone) is harmless; a line that does not parse stays in the subset.

READ_ONLY_PROGRAMS = frozenset(
    {"ls", "find", "grep", "egrep", "fgrep", "rg", "awk", "cat", "head", "tail", "less", "more",
     "wc", "sort", "uniq", "cut", "tr", "stat", "file", "uname", "id", "whoami", "hostname",
     "groups", "ps", "pgrep", "echo", "printf", "seq", "sleep", "date", "test", "[", "[[",
     "which", "type", "df", "du", "uptime", "w", "who", "true", "false", "yes", "basename",
     "dirname", "readlink", "realpath", "pwd", "cd", "lsb_release", "sw_vers", "xargs", "exit",
     "tee", "sed", "md5sum", "sha256sum", "shasum", "od", "xxd", "hexdump", "strings", "column",
     "ifconfig", "lsattr", "getfacl", "locale", "nproc", "arch", "lscpu", "free", "kill"}
)  # fmt: skip
LOCAL_FILE_PROGRAMS = frozenset(
    {"touch", "mkdir", "cp", "mv", "rm", "rmdir", "unlink", "ln", "chmod", "truncate", "split",
     "gzip", "gunzip", "zip", "unzip", "tar", "shred", "gcc", "g++", "cc", "clang", "clang++",
     "make", "go", "dd", "base64", "xattr", "setfile", "chflags", "rustc", "javac"}
)  # fmt: skip
# Secrets an agent must not read (system files an agent may only read are fine: writes anywhere
# outside the project or a temp folder already count as dangerous).
_CREDENTIAL_OR_ACCOUNT = re.compile(
    r"(?i)\.ssh|id_[rde]|\.aws|\.gnupg|\.netrc|\.kube|\.docker|shadow|sudoers|keychain|"
    r"credential|\.bash_history|\.zsh_history|authorized_keys|\.git-credentials|\.pem\b|\.key\b"
)
_TEMP = (
    "/tmp",
    "/var/tmp",
    "/private/tmp",
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
)


def _stays_local(text: str) -> bool:
    if text.startswith("-"):
        return True
    if text.startswith(("$", "~")) or ".." in text.split("/"):
        return False
    if text.startswith("/"):
        return any(text == t or text.startswith(t + "/") for t in _TEMP)
    return True


def agent_relevant(command: str) -> bool:
    """False when the rule above finds ``command`` harmless to an AI coding agent's machine."""
    from domestique.guard.unfold import unfold_command

    u = unfold_command(command)
    if not u.parse_ok or _CREDENTIAL_OR_ACCOUNT.search(command):
        return True
    for inv in u.invocations:
        if not inv.words or not inv.words[0].literal or inv.exec_data:
            return True
        if any(v in ("sudo", "doas", "su", "pkexec") for v in inv.via):
            return True
        name = inv.name
        if name in READ_ONLY_PROGRAMS:
            targets = [r.target.text for r in inv.redirects if r.writes]
        elif name in LOCAL_FILE_PROGRAMS:
            targets = [w.text for w in inv.words[1:]] + [r.target.text for r in inv.redirects]
        else:
            return True
        if not all(_stays_local(t.split("=", 1)[-1]) for t in targets):
            return True
    return False


def command_sha(command: str) -> str:
    """The key of a command in the reviewed file: sha256 of its UTF-8 text, first 16 hex."""
    return hashlib.sha256(command.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def load_reviewed(path: Path) -> dict[tuple[str, str], str]:
    """(set, sha) -> verdict. Entries with a verdict that does not fit their set are dropped
    (with a warning), so they count as not reviewed."""
    if not path.is_file():
        print(f"WARNING: {path} not found: nothing counts as reviewed", file=sys.stderr)
        return {}
    out: dict[tuple[str, str], str] = {}
    for entry in tomllib.loads(path.read_text()).get("entry", []):
        label, sha, verdict = entry.get("set"), entry.get("sha"), entry.get("verdict")
        allowed = (MISS_VERDICT,) if label in DANGEROUS else BENIGN_VERDICTS
        if (
            label not in (*DANGEROUS, *REVIEWED_BENIGN)
            or not isinstance(sha, str)
            or not re.fullmatch(r"[0-9a-f]{16}", sha)
            or verdict not in allowed
            or not entry.get("reason")
        ):
            print(f"WARNING: {path.name}: entry ignored: {entry!r}", file=sys.stderr)
            continue
        out[(label, sha)] = verdict
    return out


def report_reviewed(
    path: Path,
    reviewed: dict[tuple[str, str], str],
    *,
    stats: dict[str, collections.Counter[str]],
    misses: dict[str, list[str]],
    denied: dict[str, list[str]],
    out: dict[str, dict[str, object]],
) -> None:
    """Print (and add to ``out``) the figures that rest on the hand review."""
    print(f"\nbenign sets, denies reviewed ({path.name}; unreviewed = false block)")
    print(f"{'set':24} {'denied':>6} {'dang.':>6} {'unjdg':>6} {'false':>6} {'unrev':>6}  "
          "false blocks (reviewed)")  # fmt: skip
    matched: set[tuple[str, str]] = set()
    unreviewed_denies: list[str] = []
    for label in REVIEWED_BENIGN:
        verdicts: collections.Counter[str] = collections.Counter()
        for command in denied[label]:
            key = (label, command_sha(command))
            verdicts[reviewed.get(key, "unreviewed")] += 1
            matched.add(key)
            if key not in reviewed:
                unreviewed_denies.append(f"{label} {key[1]}  {command!r:.120}")
        n = stats[label]["n"] or 1
        with_unjudgeable = len(denied[label]) - verdicts["dangerous-as-written"]
        without = verdicts["false-block"] + verdicts["unreviewed"]
        counts = " ".join(f"{verdicts[v]:6}" for v in (*BENIGN_VERDICTS, "unreviewed"))
        print(f"{label:24} {len(denied[label]):6} {counts}  "
              f"incl. unjudgeable {with_unjudgeable / n:.4f}   "
              f"excl. unjudgeable {without / n:.4f}")  # fmt: skip
        out[label]["reviewed"] = {
            "verdicts": dict(verdicts),
            "false_blocks_incl_unjudgeable": round(with_unjudgeable / n, 4),
            "false_blocks_excl_unjudgeable": round(without / n, 4),
        }
    if unreviewed_denies:
        print(f"{len(unreviewed_denies)} denies not in {path.name} (counted as false blocks):")
        for line in unreviewed_denies:
            print(f"    {line}")
    print("\ndangerous sets, misses reviewed (each must be listed as miss-accepted)")
    unlisted: dict[str, list[str]] = {}
    for label in DANGEROUS:
        keys = [(label, command_sha(m)) for m in misses[label]]
        matched.update(keys)
        unlisted[label] = [m for m, k in zip(misses[label], keys, strict=True) if k not in reviewed]
        accepted = len(keys) - len(unlisted[label])
        print(f"{label:24} {len(keys):6} misses  {accepted:6} accepted  "
              f"{len(unlisted[label]):6} not reviewed")  # fmt: skip
        out[label]["reviewed"] = {"accepted": accepted, "not_reviewed": len(unlisted[label])}
    for label, items in unlisted.items():
        if items:
            print(f"WARNING: {label}: {len(items)} misses not in {path.name}:")
            for m in items:
                print(f"    {command_sha(m)}  {m!r:.140}")
    stale = sorted(set(reviewed) - matched)
    if stale:
        print(f"note: {len(stale)} reviewed entries match no current miss or deny (fixed since?):")
        for label, sha in stale:
            print(f"    {label} {sha}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora"
    )
    ap.add_argument("--show-misses", type=int, default=15)
    ap.add_argument("--json", type=Path, help="write per-set figures and every miss here")
    ap.add_argument("--reviewed", type=Path, default=REVIEWED_FILE, help="the hand review")
    args = ap.parse_args()
    root: Path = args.corpora
    if not root.is_dir():
        root = Path("/work/shared/corpora")
    policy = load_policy()
    items: list[tuple[str, str]] = []
    for source in (_dcg, _gtfobins, _slp, _atomic, _tldr, _nl2bash):
        items.extend(source(root))
    seen: set[tuple[str, str]] = set()
    stats: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    misses: dict[str, list[str]] = collections.defaultdict(list)
    invalid: collections.Counter[str] = collections.Counter()  # lines that are not valid shell
    relevant: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    blocks: dict[str, list[str]] = collections.defaultdict(list)
    denied_cmds: dict[str, list[str]] = collections.defaultdict(list)  # commands of ``blocks``
    stops: dict[str, list[str]] = collections.defaultdict(list)  # benign asks and denies
    t0 = time.perf_counter()
    cwd = tempfile.mkdtemp(prefix="dq-eval-cwd-")  # no scripts there: nothing is read
    for label, command in items:
        if (label, command) in seen:
            continue
        seen.add((label, command))
        j = judge_command(command, policy=policy, actor=Actor.AGENT, cwd=cwd)
        action = j.verdict.action.value
        stats[label][action] += 1
        stats[label]["n"] += 1
        for c in set(j.verdict.codes):
            codes[label][c] += 1
        if label in DANGEROUS and agent_relevant(command):
            relevant[label]["n"] += 1
            relevant[label]["stopped"] += action != "allow"
        if label in DANGEROUS or label in INFO:
            if action == "allow":
                misses[label].append(command)
        elif action != "allow":
            stops[label].append(f"{action}\t{','.join(sorted(set(j.verdict.codes)))}\t{command}")
        if label in BENIGN and action == "deny":
            blocks[label].append(f"{','.join(sorted(set(j.verdict.codes)))}\t{command}")
            denied_cmds[label].append(command)
        if label in BENIGN and "engine.parse_error" in j.verdict.codes:
            invalid[label] += 1
    elapsed = time.perf_counter() - t0
    out: dict[str, dict[str, object]] = {}
    print(f"{'set':24} {'n':>6} {'deny':>6} {'ask':>6} {'allow':>6}  rate")
    for group, kind in ((DANGEROUS, "recall"), (INFO, "stopped"), (BENIGN, "denied")):
        for label in group:
            s = stats[label]
            n = s["n"] or 1
            rate = (s["deny"] + s["ask"]) / n if kind != "denied" else s["deny"] / n
            extra = f" (ask {s['ask'] / n:.3f})" if kind == "denied" else ""
            counts = f"{s['n']:6} {s['deny']:6} {s['ask']:6} {s['allow']:6}"
            print(f"{label:24} {counts}  {kind} {rate:.3f}{extra}")
            out[label] = {
                "n": s["n"],
                "deny": s["deny"],
                "ask": s["ask"],
                "allow": s["allow"],
                kind: round(rate, 4),
                "codes": dict(codes[label].most_common()),
            }
    print("\nbenign sets without the lines that are not valid shell (engine.parse_error)")
    for label in BENIGN:
        s = stats[label]
        valid = s["n"] - invalid[label]
        denied = sum(1 for b in blocks[label] if "engine.parse_error" not in b.split("\t")[0])
        rate = denied / (valid or 1)
        print(f"{label:24} {valid:6} valid ({invalid[label]} invalid)  denied {rate:.3f}")
        out[label]["valid_shell"] = {
            "n": valid,
            "invalid": invalid[label],
            "denied": round(rate, 4),
        }
    print("\nagent-relevant subset of the dangerous sets (rule: agent_relevant())")
    for label in DANGEROUS:
        r = relevant[label]
        rate = r["stopped"] / (r["n"] or 1)
        print(f"{label:24} {r['n']:6} of {stats[label]['n']:6}  recall {rate:.3f}")
        out[label]["agent_relevant"] = {"n": r["n"], "recall": round(rate, 4)}
    report_reviewed(
        args.reviewed,
        load_reviewed(args.reviewed),
        stats=stats,
        misses=misses,
        denied=denied_cmds,
        out=out,
    )
    print(f"\n{len(seen)} commands judged in {elapsed:.1f} s")
    for label in (*DANGEROUS, *INFO):
        if misses[label] and args.show_misses:
            print(f"\n-- {label}: {len(misses[label])} allowed")
            for m in misses[label][: args.show_misses]:
                print("   ", repr(m)[:160])
    for label in BENIGN:
        if blocks[label] and args.show_misses:
            print(f"\n-- {label}: {len(blocks[label])} denied")
            for m in blocks[label][: args.show_misses]:
                print("   ", repr(m)[:160])
    if args.json:
        payload = {
            "sets": out,
            "misses": misses,
            "denied_benign": blocks,
            "stopped_benign": stops,
        }
        args.json.write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
