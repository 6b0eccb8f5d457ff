"""``domestique check``: judge a shell command before it runs.

    domestique check [--json] [--policy FILE] [--actor agent|human] -- COMMAND ...
    domestique check --jsonl      input lines {"id", "command", "cwd"?}
                                  output lines {"id", "decision", "reasons": [{"code", "message"}]}

Exit 0: allow; 1: ask or deny; 2: error (and the printed decision is deny). Errors are a bad
argument or input line, an invalid policy, an internal error and a decision the audit store could
not record. Every decision, allow included, is recorded in the audit store (component guard).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from domestique.cli._args import Parser, UsageError
from domestique.records import Action, Actor, DecisionRecord, Reason, Subject, Verdict

if TYPE_CHECKING:
    from domestique.policy import EffectivePolicy

EXIT_ALLOW, EXIT_STOP, EXIT_ERROR = 0, 1, 2
# Reasons that mean "Domestique itself failed", not "the command is bad".
ERROR_CODES = frozenset(
    {"policy.invalid", "audit.write_failed", "engine.internal_error", "engine.detector_error"}
)


@functools.cache
def _parser() -> Parser:
    """Built once a process (the hook daemon runs ``check`` many times; parsing leaves the
    parser as it was)."""
    p = Parser(
        prog="domestique check",
        description="Judge a shell command before it runs.",
        epilog="exit 0: allow, 1: ask or deny, 2: error (decision deny)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object with the decision")
    fmt.add_argument(
        "--jsonl",
        action="store_true",
        help='input lines {"id", "command", "cwd"?}; one output line {"id", "decision", "reasons"}',
    )
    p.add_argument("--policy", type=Path, help="an extra policy file (layered after the user's)")
    p.add_argument(
        "--actor",
        choices=("agent", "human"),
        help="who runs the command (default: identified from the process ancestry)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    return p


def _exit_for(record: DecisionRecord) -> int:
    if any(code in ERROR_CODES for code in record.codes):
        return EXIT_ERROR
    return EXIT_ALLOW if record.action is Action.ALLOW else EXIT_STOP


def _judge_and_record(
    command: str,
    *,
    policy: EffectivePolicy,
    subject: Subject,
    actor: Actor,
    cwd: str | None,
    other_reading: str | None = None,
) -> DecisionRecord:
    """Judge ``command``, record the decision and return the one to enforce, through the one
    boundary (:func:`domestique.boundary.decide_and_record`): a crash while judging or building
    the record, or a record that cannot be stored, is a deny. ``other_reading``: a second way
    to read the same words, also judged; the more severe judgement is the one kept."""
    from domestique.audit import record_decision
    from domestique.boundary import decide_and_record
    from domestique.guard import CommandJudgement, command_record, judge_command

    judged: list[CommandJudgement] = []

    def judge() -> Verdict:
        judged.append(
            judge_command(command, policy=policy, actor=actor, cwd=cwd, agent=subject.agent)
        )
        if other_reading is not None:
            other = judge_command(
                other_reading, policy=policy, actor=actor, cwd=cwd, agent=subject.agent
            )
            if other.verdict.action.severity > judged[-1].verdict.action.severity:
                judged.append(other)
        return judged[-1].verdict

    def build(verdict: Verdict) -> DecisionRecord:
        # A judge that failed left no judgement: the record names no command (it could hold a
        # secret the guard never masked), only the stop and its reason.
        base = judged[-1] if judged else CommandJudgement(verdict, unfolded=(), masked_command="")
        judgement = dataclasses.replace(base, verdict=verdict)
        who = dataclasses.replace(subject, actor=actor)
        return command_record(judgement, policy=policy, subject=who, cwd=cwd)

    return decide_and_record(judge, build, lambda r: record_decision(r, stop=Action.DENY))


def _short(reasons: Sequence[Reason]) -> list[dict[str, str]]:
    return [{"code": r.code, "message": r.message} for r in reasons]


def _print_text(record: DecisionRecord) -> None:
    out = sys.stdout
    out.write(f"{record.action.value}\n")
    if record.would_action is not None:
        out.write(f"  monitor mode: not enforced; would have been {record.would_action.past}\n")
    for r in record.reasons:
        where = ", ".join(e.where for e in r.evidence)
        out.write(f"  {r.code}: {r.message}" + (f" [{where}]" if where else "") + "\n")


def _print_json(record: DecisionRecord) -> None:
    obj: dict[str, Any] = {
        "decision": record.action.value,
        "reasons": [r.to_json() for r in record.reasons],
        "command": record.object.get("command"),
        "unfolded": record.object.get("unfolded"),
        "actor": record.subject.actor.value,
        "agent": record.subject.agent,
        "record_id": record.id,
        "policy": record.policy.to_json(),
    }
    if record.would_action is not None:  # monitor mode: what would have happened
        obj["enforced"] = False
        obj["would_decision"] = record.would_action.value
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def _error_out(message: str, *, as_json: bool) -> int:
    sys.stderr.write(f"domestique check: {message}\n")
    if as_json:
        reason = {"code": "engine.internal_error", "message": message}
        sys.stdout.write(json.dumps({"decision": "deny", "reasons": [reason]}) + "\n")
    else:
        sys.stdout.write("deny\n")
    return EXIT_ERROR


def _run_batch(policy: EffectivePolicy, subject: Subject, actor: Actor) -> int:
    worst = EXIT_ALLOW
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "surrogateescape").strip()
        if not line:
            continue
        ident: Any = None
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise TypeError("not an object")
            ident = item.get("id")
            command = item["command"]
            cwd = item.get("cwd")
            if not isinstance(command, str) or (cwd is not None and not isinstance(cwd, str)):
                raise TypeError("command and cwd must be strings")
        except (ValueError, KeyError, TypeError) as exc:
            reason = {
                "code": "engine.parse_error",
                "message": f"bad input line: {type(exc).__name__}",
            }
            out = {"id": ident, "decision": "deny", "reasons": [reason]}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            worst = EXIT_ERROR
            continue
        record = _judge_and_record(
            command, policy=policy, subject=subject, actor=actor, cwd=cwd or os.getcwd()
        )
        out = {"id": ident, "decision": record.action.value, "reasons": _short(record.reasons)}
        if record.would_action is not None:
            out["enforced"] = False
            out["would_decision"] = record.would_action.value
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        worst = max(worst, _exit_for(record))
    return worst


def _readings(words: list[str]) -> tuple[str, str | None]:
    """The command line ``check -- WORDS...`` stands for, and a second reading when there is one.

    One word is a whole command line (``check -- 'curl x | sh'``). Several words are read as
    typed with spaces between them (``check -- git status``, ``check -- curl x '|' sh``: the
    pipe is a pipe) and, when a word holds white space, also with that word quoted as the one
    argument it is (``check -- sh -c 'rm -rf ~'``: joined with bare spaces, ``sh -c rm -rf ~``
    would run a bare ``rm``). Both are judged and the more severe counts, so neither reading
    lets a command through that the other stops.
    """
    if len(words) == 1:
        return words[0], None
    spaced = " ".join(words)
    if not any(ch.isspace() for word in words for ch in word):
        return spaced, None
    import shlex

    return spaced, " ".join(shlex.quote(w) if any(ch.isspace() for ch in w) else w for w in words)


def run(argv: list[str], *, parent: int | None = None) -> int:
    """The command; ``parent`` is the process whose ancestry says who runs the command (default:
    this process's parent; the hook daemon answering a ``check`` process names that one's)."""
    as_json = "--json" in argv or "--jsonl" in argv
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        return _error_out(str(exc), as_json=as_json)
    words = list(args.command)
    if words and words[0] == "--":
        words = words[1:]
    if args.jsonl and words:
        return _error_out("--jsonl reads commands from stdin, not arguments", as_json=True)
    if not args.jsonl and not words:
        return _error_out("no command given (domestique check -- COMMAND ...)", as_json=as_json)
    try:
        from domestique.guard import identify_subject
        from domestique.policy import load_policy

        cwd = os.getcwd()
        policy = load_policy(policy_file=args.policy, project_dir=Path(cwd))
        subject = identify_subject(pid=parent)
        actor = Actor(args.actor) if args.actor else subject.actor
        if args.jsonl:
            return _run_batch(policy, subject, actor)
        command, other = _readings(words)
        record = _judge_and_record(
            command, policy=policy, subject=subject, actor=actor, cwd=cwd, other_reading=other
        )
    except Exception as exc:  # noqa: BLE001 - any failure is an error that denies
        return _error_out(f"internal error ({type(exc).__name__})", as_json=as_json)
    if args.json:
        _print_json(record)
    else:
        _print_text(record)
    return _exit_for(record)
