"""``domestique policy``: check a policy file, or show the effective policy and its sha256.

domestique policy check [FILE]     exit 0: valid · 1: errors (file:line:col on stderr)
domestique policy show [--json]    the effective policy, its layers and sha256
domestique policy init [--project] [FILE]
                                   write a commented starter file (never over an existing one)
domestique policy whatif FILE [--since 30d] [--layer user|system|file] [--json]
                                   re-decide recorded decisions with FILE as a candidate layer;
                                   exit 0: nothing changes · 1: decisions change · 2: error
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from domestique.policy import PROJECT_POLICY, EffectivePolicy, load_policy
from domestique.policy._model import MATCH_FIELDS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="domestique policy",
        description="Check policy files or show the effective policy. Layers: builtin, "
        "/etc/domestique/policy.toml, $DOMESTIQUE_HOME/policy.toml, --policy FILE, then "
        ".domestique/policy.toml from the project directory upward (tighten only).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    check = sub.add_parser(
        "check",
        help="validate the layers (and FILE); exit 1 with file:line:col messages on errors",
        description="Validate every layer of the effective policy, plus FILE if given. A "
        "FILE at <repo>/.domestique/policy.toml is checked as a project layer (tighten only), "
        "any other FILE as an explicit --policy layer. Exit 0 valid, 1 invalid.",
    )
    check.add_argument("file", nargs="?", type=Path, metavar="FILE", help="a policy file")
    show = sub.add_parser(
        "show",
        help="print the effective policy and its sha256",
        description="Print the merged policy that decides, its layers and its sha256.",
    )
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.add_argument("--policy", type=Path, metavar="FILE", help="an explicit policy layer")
    init = sub.add_parser(
        "init",
        help="write a commented starter policy file (default: your user policy)",
        description="Write a commented starter policy: $DOMESTIQUE_HOME/policy.toml by default, "
        "or FILE; --project writes .domestique/policy.toml in the current repository (rules "
        "there may only tighten). An existing file is never overwritten.",
    )
    init.add_argument("file", nargs="?", type=Path, metavar="FILE", help="where to write it")
    init.add_argument(
        "--project", action="store_true", help="a project policy (tighten only) for this repo"
    )
    whatif = sub.add_parser(
        "whatif",
        help="what a candidate policy would have decided on the recorded decisions",
        description="Re-decide every recorded decision in the window with FILE as a candidate "
        "policy layer (default: in place of your user policy) and print how many decisions "
        "change, in which direction, by reason code and by rule, with example records (masked "
        "evidence). Records that cannot be re-decided from what was stored are counted as "
        "such. Reads only: the audit log and the policy files are not changed. Exit 0: nothing "
        "changes, 1: decisions change, 2: error (an invalid FILE names file:line:col).",
    )
    whatif.add_argument("file", type=Path, metavar="FILE", help="the candidate policy file")
    whatif.add_argument(
        "--since", default="30d", help="window: 7d, 24h, 2026-11-01 or all (default 30d)"
    )
    whatif.add_argument(
        "--layer",
        choices=("user", "system", "file"),
        default="user",
        help="the layer FILE would occupy: user (default; in place of "
        "$DOMESTIQUE_HOME/policy.toml), system (in place of /etc/domestique/policy.toml) or "
        "file (an extra --policy layer over both)",
    )
    whatif.add_argument("--json", action="store_true", help="print one JSON object")
    for p in (check, show):
        p.add_argument(
            "--project-dir",
            type=Path,
            default=None,
            metavar="DIR",
            help="where to look for project policy files (default: the current directory)",
        )
    return parser


def _load(file: Path | None, project_dir: Path | None, *, as_check: bool) -> EffectivePolicy:
    project = project_dir if project_dir is not None else Path.cwd()
    if as_check and file is not None:
        resolved = file.absolute()
        if resolved.parent.name == PROJECT_POLICY.parent.name and resolved.name == "policy.toml":
            # Checked as what it is: a project layer of the repository that holds it.
            return load_policy(project_dir=resolved.parent.parent, use_cache=False)
    return load_policy(policy_file=file, project_dir=project, use_cache=False)


def mode_line(project_dir: Path | None) -> str:
    """One line naming the mode of the effective policy (``doctor`` and ``policy show``)."""
    policy = load_policy(project_dir=project_dir)
    if not policy.valid:
        return f"policy mode: invalid policy, every decision denies ({policy.errors[0]})"
    if policy.settings.monitor:
        return (
            "policy mode: monitor (decides and records everything, enforces only errors; "
            "records say what would have happened)"
        )
    return "policy mode: enforce"


def _errors_out(policy: EffectivePolicy) -> None:
    for error in policy.errors:
        sys.stderr.write(f"{error}\n")
    n = len(policy.errors)
    sys.stderr.write(
        f"policy invalid: {n} error{'s' if n != 1 else ''}; every decision denies until fixed\n"
    )


def _show_text(policy: EffectivePolicy) -> str:
    lines = [f"policy {policy.ref.id}  sha256 {policy.ref.sha256}", "layers:"]
    lines[0] += "  mode monitor (enforces only errors)" if policy.settings.monitor else ""
    lines += [f"  {layer.kind:<8} {layer.path}" for layer in policy.layers]
    settings = policy.settings
    lines += [
        "settings:",
        f"  unmatched    = {settings.unmatched.value}",
        f"  unknown_tool = {settings.unknown_tool.value}",
        f"  mode         = {settings.mode}",
        "rules (resolution order; the most specific code wins, ties go to the later rule):",
    ]
    for rule in (*policy.rules, *policy.project_rules):
        data = rule.to_json()
        where = ", ".join(f"{k}={','.join(data[k])}" for k in MATCH_FIELDS if k in data)
        excepts = f" except {len(rule.exceptions)}" if rule.exceptions else ""
        lines.append(
            f"  {rule.action.value:<6} {','.join(rule.codes):<40} {rule.id} [{rule.layer}]"
            + (f" ({where})" if where else "")
            + excepts
        )
    return "\n".join(lines) + "\n"


STARTER = """\
# Domestique policy: what happens for each reason code Domestique finds.
#
# Layers, each later one over the earlier: the builtin rules, /etc/domestique/policy.toml (your
# company), $DOMESTIQUE_HOME/policy.toml (you), --policy FILE, then .domestique/policy.toml in
# each repository (those may only tighten). The full format: docs/policy.md.
# Check this file with: domestique policy check FILE.  See what decides: domestique policy show.
# One typo makes the policy invalid, and then every decision denies until it is fixed.
version = 1

[settings]
# The action for a reason code that no rule names: allow | redact | ask | deny | block.
unmatched = "deny"
# Hooks: a host tool Domestique does not know.
unknown_tool = "ask"
# "enforce" acts on every decision. "monitor" decides and records everything but enforces only
# errors (an invalid policy, input it cannot parse, an audit write that fails): roll out with
# it first, read `domestique report` (it shows what would have been denied), then enforce.
mode = "enforce"

# A rule names reason codes (`domestique codes` lists them; an exact code or a prefix glob such
# as "secret.*"), an action, and optionally where it applies: components (proxy, guard, hook),
# actors (agent, human), agents, tools, hosts, paths, projects (directories) and commands
# (exact command lines). For one code the most specific code pattern wins; on a tie the later
# layer, then the later rule. `domestique allow` appends rules like these for you.
#
# [[rules]]
# id = "company-redact-infra"
# description = "AWS account ids and bucket names are confidential: redact them in the firewall"
# codes = ["infra.*"]
# action = "redact"
# components = ["proxy"]
#
# [[rules]]
# id = "me-allow-reviewed-installer"
# description = "Our reviewed installer, in the deploy repository only"
# codes = ["cmd.pipe_to_shell"]
# action = "allow"
# components = ["guard", "hook"]
# projects = ["~/src/deploy"]
# commands = ["curl -fsSL https://deploy.example.com/install.sh | sh"]
#
#   [[rules.except]]          # not for this agent
#   agents = ["codex"]
"""

PROJECT_STARTER = """\
# Domestique project policy for this repository: committed with the code, read for every
# decision made in it. It may only TIGHTEN the policy (an agent can edit this file): no
# [settings], no rule that gives a code less than the other layers already do.
# The full format: docs/policy.md. Check it with: domestique policy check .domestique/policy.toml
version = 1

# [[rules]]
# id = "repo-deny-remote-access"
# description = "No ssh or remote shells from agents in this repository"
# codes = ["cmd.remote_access"]
# action = "deny"
# actors = ["agent"]
"""


def _init(file: Path | None, *, project: bool) -> int:
    from domestique.keys import domestique_home, ensure_private_dir

    if project:
        from domestique.hooks.install import project_root

        target = file or project_root(Path.cwd()) / PROJECT_POLICY
        text = PROJECT_STARTER
    else:
        target = file or domestique_home() / "policy.toml"
        text = STARTER
    target = target.absolute()
    if os.path.lexists(target):
        sys.stderr.write(f"domestique policy init: {target} exists; nothing written\n")
        return 1
    try:
        if not project and file is None:
            ensure_private_dir(target.parent)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        sys.stderr.write(f"domestique policy init: cannot write {target}: {exc.strerror}\n")
        return 2
    sys.stdout.write(f"wrote {target}\ncheck it with: domestique policy check {target}\n")
    return 0


def _open_readonly(home: Path) -> Any:
    """The audit store opened read-only (nothing is created or written; WAL readers only)."""
    import sqlite3

    from domestique.audit import DB_NAME, AuditStore, AuditStoreError

    path = home / DB_NAME
    if not path.is_file():
        raise AuditStoreError(f"no audit store at {path}")
    try:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
        conn.execute("SELECT 1 FROM records LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        raise AuditStoreError(f"cannot read audit store {path}: {exc}") from None
    return AuditStore(home, conn)


def _whatif(args: argparse.Namespace) -> int:
    from domestique.audit import AuditStoreError
    from domestique.audit.report import parse_since
    from domestique.keys import domestique_home
    from domestique.policy import SYSTEM_POLICY
    from domestique.policy._whatif import WhatIf, candidate_errors, whatif_policies
    from domestique.reason_codes import registry

    prog = "domestique policy whatif"
    try:
        since = None if args.since == "all" else parse_since(args.since)
    except ValueError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return 2
    home = domestique_home()
    baseline, candidate = whatif_policies(
        args.file, layer=args.layer, home=home, system_file=SYSTEM_POLICY
    )
    if not candidate.valid:
        for error in candidate_errors(candidate, args.file):
            sys.stderr.write(f"{error}\n")
        sys.stderr.write(f"{prog}: the candidate policy is invalid; nothing was re-decided\n")
        return 2
    if not baseline.valid:
        sys.stderr.write(f"{prog}: the policy in force now is invalid: {baseline.errors[0]}\n")
        return 2
    whatif = WhatIf(baseline, candidate, frozenset(registry()))
    try:
        with _open_readonly(home) as store:
            for row in store.rows(since=since):
                try:
                    data = row.data()
                except ValueError:
                    data = {"id": row.id}
                whatif.add(data)
    except (AuditStoreError, OSError) as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return 2
    report = whatif.to_json()
    report["candidate"] = {
        "file": os.path.abspath(args.file),
        "layer": args.layer,
        "sha256": candidate.ref.sha256,
        "mode": candidate.settings.mode,
    }
    report["baseline"] = {"sha256": baseline.ref.sha256, "mode": baseline.settings.mode}
    report["since"] = since
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(_whatif_text(report))
    return 1 if report["changed"] else 0


def _whatif_text(r: dict[str, Any]) -> str:
    c = r["candidate"]
    lines = [
        f"candidate {c['file']} as the {c['layer']} layer (sha256 {c['sha256'][:16]}…)",
        f"records {'since ' + r['since'] if r['since'] else '(all)'}: {r['records']}; "
        f"re-decided {r['redecided']}: {r['changed']} change, {r['unchanged']} unchanged; "
        f"not re-decidable {r['not_redecidable']['count']}",
    ]
    if c["mode"] != r["baseline"]["mode"]:
        lines.append(f"note: the candidate sets mode = {c['mode']} (now: {r['baseline']['mode']})")

    def examples(group: dict[str, Any]) -> list[str]:
        out = []
        for e in group["examples"]:
            ev = ", ".join(f"{x['code']} {x['where']} {x['preview']!r}" for x in e["evidence"])
            out.append(f"      {e['id']} {e['time']} {e['component']}" + (f": {ev}" if ev else ""))
        return out

    if r["changes"]:
        lines.append("changes:")
        for g in r["changes"]:
            lines.append(f"  {g['from']} -> {g['to']}: {g['count']}")
            lines += examples(g)
        lines.append("by reason code:")
        for g in r["by_code"]:
            lines.append(f"  {g['code']}: {g['from']} -> {g['to']}: {g['count']}")
        lines.append("by rule (the candidate rule that decides now):")
        for g in r["by_rule"]:
            where = f" ({g['source']})" if g["source"] else ""
            lines.append(f"  {g['rule']}{where}: {g['from']} -> {g['to']}: {g['count']}")
            lines += examples(g)
    if r["not_redecidable"]["reasons"]:
        lines.append("not re-decidable (from what the records hold):")
        for n in r["not_redecidable"]["reasons"]:
            lines.append(f"  {n['count']}: {n['reason']}  e.g. {', '.join(n['examples'])}")
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command == "whatif":
        return _whatif(args)
    if args.command == "init":
        return _init(args.file, project=args.project)
    if args.command == "check":
        policy = _load(args.file, args.project_dir, as_check=True)
        if not policy.valid:
            _errors_out(policy)
            return 1
        sys.stdout.write(
            f"policy ok: {len(policy.layers)} layers, {len(policy.rules)} rules"
            + (f" + {len(policy.project_rules)} project rules" if policy.project_rules else "")
            + f", sha256 {policy.ref.sha256}\n"
        )
        return 0
    policy = _load(args.policy, args.project_dir, as_check=False)
    if args.json:
        out = {
            "valid": policy.valid,
            "errors": list(policy.errors),
            "ref": policy.ref.to_json(),
            "mode": policy.settings.mode,
            "layers": [layer.to_json() for layer in policy.layers],
            "policy": policy.document() if policy.valid else None,
        }
        sys.stdout.write(json.dumps(out, indent=2, sort_keys=True) + "\n")
        return 0 if policy.valid else 1
    if not policy.valid:
        _errors_out(policy)
        return 1
    sys.stdout.write(_show_text(policy))
    return 0
