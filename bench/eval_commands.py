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
- tldr-dev / nl2bash: everyday developer commands (benign-leaning; both contain some dangerous
  lines, so a block there is reviewed, not assumed false).

Decisions use the built-in policy for an agent. "stopped" = ask or deny; the two are reported
apart. Nothing runs: commands are only judged.
"""

from __future__ import annotations

import argparse
import collections
import glob
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
BENIGN = ("dcg-allow", "tldr-dev", "nl2bash")
INFO = ("gtfobins-command", "gtfobins-download", "atomic-other")

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora"
    )
    ap.add_argument("--show-misses", type=int, default=15)
    ap.add_argument("--json", type=Path, help="write per-set figures and every miss here")
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
        elif action == "deny":
            blocks[label].append(f"{','.join(sorted(set(j.verdict.codes)))}\t{command}")
        if label in BENIGN and "engine.parse_error" in j.verdict.codes:
            invalid[label] += 1
    elapsed = time.perf_counter() - t0
    out = {}
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
        payload = {"sets": out, "misses": misses, "denied_benign": blocks}
        args.json.write_text(json.dumps(payload, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
