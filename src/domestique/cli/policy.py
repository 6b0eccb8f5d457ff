"""``domestique policy``: check a policy file, or show the effective policy and its sha256.

domestique policy check [FILE]     exit 0: valid · 1: errors (file:line:col on stderr)
domestique policy show [--json]    the effective policy, its layers and sha256
domestique policy init [--project] [FILE]
                                   write a commented starter file (never over an existing one)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

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


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
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
