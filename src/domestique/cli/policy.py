"""``domestique policy``: check a policy file, or show the effective policy and its sha256.

domestique policy check [FILE]     exit 0: valid · 1: errors (file:line:col on stderr)
domestique policy show [--json]    the effective policy, its layers and sha256
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from domestique.policy import PROJECT_POLICY, EffectivePolicy, load_policy


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
        where = ", ".join(
            f"{k}={','.join(data[k])}"
            for k in ("components", "actors", "agents", "tools", "hosts", "paths")
            if k in data
        )
        excepts = f" except {len(rule.exceptions)}" if rule.exceptions else ""
        lines.append(
            f"  {rule.action.value:<6} {','.join(rule.codes):<40} {rule.id} [{rule.layer}]"
            + (f" ({where})" if where else "")
            + excepts
        )
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
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
