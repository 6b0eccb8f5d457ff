"""``domestique allow``: turn a false positive into an allow rule in one step.

    domestique allow [--once | --repo | --user] [--file FILE] [--dry-run] [--json]
                     (RECORD-ID | -- COMMAND ...)

Scopes: ``--once`` (the default) this exact command line in this repository, ``--repo`` these
reason codes in this repository, ``--user`` these reason codes for you everywhere. The rule goes
into your user policy (``$DOMESTIQUE_HOME/policy.toml``, or ``--file``), appended with a comment
saying what it allows and why; the rest of the file is kept byte for byte. A project policy
(``.domestique/policy.toml``) may only tighten, so it is never the target.

Before anything is written the new file is validated with every other layer: a rule that would
make the policy invalid is refused with ``file:line:col``, and so is one that would not change
the decision (a protected code, a project rule that tightens it). The change is then recorded
in the audit log (component ``policy``, code ``policy.changed``); if that record cannot be
written, the file is put back as it was. Exit 0 written (or nothing to do), 1 refused, 2 error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from domestique.cli._args import Parser, UsageError
from domestique.cli.explain import (
    ExplainError,
    Judged,
    resolve_target,
    split_dashdash,
)
from domestique.policy import (
    PROJECT_POLICY,
    SYSTEM_POLICY,
    EffectivePolicy,
    LayerFile,
    build_policy,
    discover_layers,
    load_policy,
)
from domestique.policy._allow import SCOPE_HELP, AllowPlan, comment_text, plan_allow, render_rule
from domestique.records import (
    Action,
    Actor,
    Component,
    DecisionRecord,
    Evidence,
    Reason,
    Subject,
    utc_now_iso,
)

EXIT_OK, EXIT_REFUSED, EXIT_ERROR = 0, 1, 2
USER_POLICY_HEADER = (
    "# Domestique user policy: your rules, layered after the builtin and system policy.\n"
    "# Format: docs/policy.md (domestique policy init writes a commented starter file).\n"
    "version = 1\n"
)


class AllowError(Exception):
    """The rule could not be written or recorded (the message says why)."""


def _parser() -> Parser:
    p = Parser(
        prog="domestique allow",
        description="Turn a false positive into an allow rule in one step, validated and "
        "recorded as a policy change.",
    )
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--once", dest="scope", action="store_const", const="once", help=SCOPE_HELP["once"]
    )
    scope.add_argument(
        "--repo", dest="scope", action="store_const", const="repo", help=SCOPE_HELP["repo"]
    )
    scope.add_argument(
        "--user", dest="scope", action="store_const", const="user", help=SCOPE_HELP["user"]
    )
    p.add_argument("--file", type=Path, help="the policy file to write (default: your user policy)")
    p.add_argument("--policy", type=Path, help="an extra policy layer, as for check")
    p.add_argument("--actor", choices=("agent", "human"), default="agent")
    p.add_argument("--dry-run", action="store_true", help="show the rule, write nothing")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("target", nargs="*", help="RECORD-ID, or the command (after --)")
    return p


def _layers_with(
    target: Path, candidate: Path, *, home: Path, project_dir: Path, policy_file: Path | None
) -> list[LayerFile]:
    """The layers of the effective policy with ``target`` read from ``candidate``."""
    layers = discover_layers(
        home=home, project_dir=project_dir, policy_file=policy_file, system_file=SYSTEM_POLICY
    )
    resolved = target.resolve()
    out: list[LayerFile] = []
    placed = False
    for layer in layers:
        if layer.path.resolve() == resolved:
            out.append(LayerFile(layer.kind, candidate, required=True))
            placed = True
        else:
            out.append(layer)
    if not placed:
        # A new user file sits after the system layer; any other file like --policy.
        kind = "user" if resolved == (home / "policy.toml").resolve() else "file"
        at = next(
            (i for i, layer in enumerate(out) if layer.kind not in ("builtin", "system")),
            len(out),
        )
        if kind == "file":
            at = next((i for i, layer in enumerate(out) if layer.kind == "project"), len(out))
        out.insert(at, LayerFile(kind, candidate, required=True))
    return out


def _new_text(old: str | None, rule_text: str) -> str:
    if old is None or not old.strip():
        return USER_POLICY_HEADER + "\n" + rule_text
    return old + ("" if old.endswith("\n") else "\n") + "\n" + rule_text


def _comment(judged: Judged, plan: AllowPlan) -> list[str]:
    when = utc_now_iso()[:16] + "Z"
    source = f"record {judged.record_id}" if judged.record_id else "a command"
    return [
        f"Added by `domestique allow --{plan.scope}` on {when} for {source}:",
        f"  {comment_text(judged.shown)}",
        f"Allows {', '.join(plan.codes)} ({SCOPE_HELP[plan.scope]}).",
    ]


def write_rule(
    judged: Judged,
    plan: AllowPlan,
    *,
    target: Path,
    home: Path,
    policy_file: Path | None,
) -> dict[str, Any]:
    """Validate, write and record the rule of ``plan`` in ``target``. AllowError on refusal."""
    assert plan.rule is not None
    if target.is_symlink():
        # A policy kept elsewhere (a dotfiles repository) and linked here: edit the file the
        # link points at, never replace the link with a copy.
        target = target.resolve()
    from domestique.keys import ensure_private_dir

    if target.parent == home:
        ensure_private_dir(home)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
    # Two allows at once must not lose one rule: read, validate and replace under one lock.
    with _exclusive(target):
        return _write_locked(judged, plan, target=target, home=home, policy_file=policy_file)


@contextlib.contextmanager
def _exclusive(target: Path) -> Iterator[None]:
    import fcntl

    fd = os.open(target.with_name(f".{target.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_locked(
    judged: Judged,
    plan: AllowPlan,
    *,
    target: Path,
    home: Path,
    policy_file: Path | None,
) -> dict[str, Any]:
    assert plan.rule is not None
    try:
        old_bytes: bytes | None = target.read_bytes()
    except FileNotFoundError:
        old_bytes = None
    except OSError as exc:
        raise AllowError(f"cannot read {target}: {exc.strerror}") from None
    try:
        old = old_bytes.decode("utf-8") if old_bytes is not None else None
    except UnicodeDecodeError:
        raise AllowError(f"{target} is not UTF-8 text; fix it first") from None
    rule_text = render_rule(plan.rule, _comment(judged, plan))
    new = _new_text(old, rule_text)
    line = new.count("\n", 0, len(new) - len(rule_text)) + 1 + len(_comment(judged, plan))
    if old and "\r\n" in old:  # keep the file's line endings
        new = old + new[len(old) :].replace("\n", "\r\n")
    tmp = target.with_name(f".{target.name}.allow-{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(new)
        if old_bytes is not None:
            os.chmod(tmp, target.stat().st_mode & 0o777)
        project_dir = Path(judged.ctx.project) if judged.ctx.project else Path.cwd()
        policy = build_policy(
            _layers_with(target, tmp, home=home, project_dir=project_dir, policy_file=policy_file)
        )
        if not policy.valid:
            errors = [e.replace(str(tmp), str(target)) for e in policy.errors]
            raise AllowError(
                "the rule would make the policy invalid, nothing written:\n  " + "\n  ".join(errors)
            )
        still = [
            (code, policy.explain_code(code, judged.ctx))
            for code in plan.codes
            if policy.policy_action_for(code, judged.ctx) is not Action.ALLOW
        ]
        if still:
            code, decision = still[0]
            raise AllowError(
                f"the rule would not allow {code}: {decision.decided_by}"
                + (
                    f" at {decision.deciding_rule.source}"
                    if decision.deciding_rule is not None
                    else ""
                )
                + " still decides it; nothing written"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    try:
        record = _record_change(judged, plan, target, line, old_bytes, new, policy, home)
    except Exception as exc:  # noqa: BLE001 - an unrecorded change must not stay in force
        _restore(target, old_bytes)
        raise AllowError(
            f"the change could not be recorded in the audit log ({exc}); {target} put back"
        ) from None
    return {
        "written": True,
        "file": str(target),
        "line": line,
        "rule": plan.rule,
        "scope": plan.scope,
        "policy_change_record": record.id,
        "policy_sha256": policy.ref.sha256,
    }


def _restore(target: Path, old: bytes | None) -> None:
    if old is None:
        target.unlink(missing_ok=True)
        return
    tmp = target.with_name(f".{target.name}.restore-{os.getpid()}.tmp")
    tmp.write_bytes(old)
    os.replace(tmp, target)


def _record_change(  # noqa: PLR0917 - one private call site, every value named there
    judged: Judged,
    plan: AllowPlan,
    target: Path,
    line: int,
    old: bytes | None,
    new: str,
    policy: EffectivePolicy,
    home: Path,
) -> DecisionRecord:
    """The policy change as a decision record; raises when it was not stored."""
    from domestique import __version__
    from domestique.audit import record_decision
    from domestique.records import current_user_and_host

    assert plan.rule is not None
    user, host = current_user_and_host()
    obj: dict[str, Any] = {
        "file": str(target),
        "line": line,
        "rule_id": plan.rule["id"],
        "rule": plan.rule,
        "scope": plan.scope,
        "codes": list(plan.codes),
        "for_record": judged.record_id,
        "cwd": os.getcwd(),
        "sha256_before": hashlib.sha256(old).hexdigest() if old is not None else None,
        "sha256_after": hashlib.sha256(new.encode("utf-8")).hexdigest(),
    }
    reason = Reason(
        "policy.changed",
        f"allow rule {plan.rule['id']} added to {target}:{line} ({SCOPE_HELP[plan.scope]})",
        (Evidence(where=f"{target}:{line}"),),
    )
    record = DecisionRecord(
        component=Component.POLICY,
        action=Action.ALLOW,
        reasons=(reason,),
        subject=Subject(user=user, host=host, actor=Actor.HUMAN),
        object=obj,
        policy=policy.ref,
        engine={"domestique": __version__},
        latency_us=0,
    )
    stored = record_decision(record, home=home, stop=Action.DENY)
    if "audit.write_failed" in stored.codes:
        failed = next(r for r in stored.reasons if r.code == "audit.write_failed")
        raise RuntimeError(failed.message)
    return stored


def _out(data: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(text)


def run(argv: list[str]) -> int:
    options, after = split_dashdash(argv)
    try:
        args = _parser().parse_args(options)
    except UsageError as exc:
        sys.stderr.write(f"domestique allow: {exc}\n")
        return EXIT_ERROR
    words = list(args.target) + (after or [])
    if not words:
        sys.stderr.write("domestique allow: give a RECORD-ID or -- COMMAND ...\n")
        return EXIT_ERROR
    scope = args.scope or "once"
    from domestique.guard import identify_subject

    try:
        subject = identify_subject()
    except Exception:  # noqa: BLE001 - who asks is unknown: treat as an agent (refuse)
        subject = Subject(actor=Actor.AGENT, markers=("ancestry-unavailable",))
    if subject.actor is Actor.AGENT:
        # An agent that could loosen the policy it is judged by would have no policy at all.
        evidence = ", ".join(subject.markers[:3]) or "process ancestry"
        sys.stderr.write(
            "domestique allow: refused: an AI agent runs this command "
            f"({subject.agent or 'agent'}: {evidence}); a person runs domestique allow "
            "in their own terminal\n"
        )
        return EXIT_REFUSED
    from domestique.keys import domestique_home

    home = domestique_home()
    target: Path = (args.file or home / "policy.toml").absolute()
    if target.name == PROJECT_POLICY.name and target.parent.name == PROJECT_POLICY.parent.name:
        sys.stderr.write(
            f"domestique allow: {target} is a project policy, which may only tighten; "
            "an allow rule goes into your user policy (the default) or --file\n"
        )
        return EXIT_REFUSED
    try:
        policy = load_policy(policy_file=args.policy, project_dir=Path.cwd())
        if not policy.valid:
            raise AllowError("the policy is invalid; fix it first:\n  " + policy.errors[0])
        judged = resolve_target(
            words, policy=policy, actor=Actor(args.actor), forced_command=after is not None
        )
        plan = plan_allow(
            policy,
            [r.code for r in judged.reasons],
            judged.ctx,
            scope=scope,
            project_root=judged.project_root,
            command=judged.command,
            command_has_secret=judged.command_has_secret,
        )
    except (ExplainError, AllowError) as exc:
        sys.stderr.write(f"domestique allow: {exc}\n")
        return EXIT_ERROR
    refused = [{"code": c, "why": why} for c, why in plan.refused]
    for item in refused:
        sys.stderr.write(f"domestique allow: cannot allow {item['code']}: {item['why']}\n")
    if plan.rule is None:
        data = {"written": False, "problem": plan.problem, "refused": refused}
        nothing = plan.problem.startswith("nothing to allow")
        _out(data, args.json, f"{plan.problem}\n")
        return EXIT_OK if nothing else EXIT_REFUSED
    if args.dry_run:
        data = {"written": False, "file": str(target), "rule": plan.rule, "refused": refused}
        _out(data, args.json, f"would add to {target}:\n{render_rule(plan.rule)}")
        return EXIT_OK
    start = time.perf_counter_ns()
    try:
        result = write_rule(judged, plan, target=target, home=home, policy_file=args.policy)
    except AllowError as exc:
        sys.stderr.write(f"domestique allow: {exc}\n")
        return EXIT_REFUSED
    except OSError as exc:
        sys.stderr.write(f"domestique allow: cannot write {target}: {exc.strerror}\n")
        return EXIT_ERROR
    result["refused"] = refused
    result["latency_us"] = (time.perf_counter_ns() - start) // 1000
    text = (
        f"allowed {', '.join(plan.codes)} ({SCOPE_HELP[plan.scope]}): rule {plan.rule['id']} "
        f"written to {result['file']}:{result['line']}\n"
        f"recorded as policy change {result['policy_change_record']}\n"
        f"to undo it, delete the rule from {result['file']}\n"
    )
    _out(result, args.json, text)
    return EXIT_OK
