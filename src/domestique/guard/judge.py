"""``judge_command``: one command line in, a policy verdict with cited evidence out.

Pure in the command, ``cwd`` and a :class:`~domestique.guard.env.GuardEnv` (HOME, TMPDIR,
DOMESTIQUE_HOME and the reader of scripts the command runs); a caller that gives none gets
``GuardEnv.from_process()``, built only when the full path runs. Any
exception inside becomes a deny with ``engine.internal_error`` (see :mod:`domestique.boundary`);
a parse failure is ``engine.parse_error``, which policy denies (it may ask, for people only).
Plain harmless commands take :mod:`domestique.guard.fastpath` and import nothing heavy.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence

from domestique.frozen_class import dataclass
from domestique.guard.env import GuardEnv
from domestique.guard.fastpath import is_plainly_safe
from domestique.records import (
    Action,
    Actor,
    Component,
    DecisionRecord,
    Evidence,
    JSONValue,
    Reason,
    Subject,
    Verdict,
)

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

    from domestique.detect import Scanner
    from domestique.guard.model import Hit
    from domestique.policy import EffectivePolicy

MAX_COMMAND_CHARS = 256 * 1024
GUARD_ENGINE_VERSION = "guard-1"
GRAMMAR_VERSION = "tree-sitter-bash-0.25"


@dataclass(frozen=True, slots=True)
class CommandJudgement:
    """The verdict on one command line, what was judged and how it is shown in records.

    ``unfolded`` lists each simple command as the guard judged it (wrappers removed, nested code
    opened up); ``masked_command`` is the command with any secret in it masked; ``hosts`` are
    the network destinations named; ``fast`` says the fast path answered.
    """

    verdict: Verdict
    unfolded: tuple[str, ...]
    masked_command: str
    hosts: tuple[str, ...] = ()
    fast: bool = False
    latency_us: int = 0

    @property
    def action(self) -> Action:
        return self.verdict.action


def judge_command(
    command: str,
    *,
    policy: EffectivePolicy,
    actor: Actor = Actor.AGENT,
    cwd: str | None = None,
    scanner: Scanner | None = None,
    agent: str | None = None,
    tool: str | None = None,
    component: Component = Component.GUARD,
    env: GuardEnv | None = None,
) -> CommandJudgement:
    """Judge ``command`` under ``policy`` for ``actor``. Never raises; errors deny.

    ``env`` is what the guard may know of the machine (default: this process's).
    """
    start = time.perf_counter_ns()
    unfolded: tuple[str, ...] = ()
    masked: str | None = None
    hosts: tuple[str, ...] = ()
    fast = False
    try:
        policy_module = _POLICY_MODULE or _load_policy_module()
        if is_plainly_safe(command):
            fast = True
            unfolded = (command,)
            reasons: tuple[Reason, ...] = ()
        else:
            reasons, unfolded, masked, hosts = _analyze(command, cwd=cwd, scanner=scanner, env=env)
        # Only a policy with rules for one repository or one exact command needs them in the
        # context (``domestique allow``); otherwise contexts stay shared across commands.
        scope = (cwd, command) if policy.scoped else (None, None)
        key = (component, actor, agent, tool, hosts, *scope)
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            ctx = policy_module.DecisionContext(
                component=component,
                actor=actor,
                agent=agent,
                tool=tool,
                hosts=hosts,
                project=scope[0],
                command=scope[1],
            )
            if len(_CONTEXTS) >= 1024:
                _CONTEXTS.clear()
            _CONTEXTS[key] = ctx
        verdict = policy.decide(reasons, ctx)
    except BaseException as exc:  # noqa: BLE001 - fail closed: any error denies
        from domestique.boundary import error_reason  # names type and frame, never the message

        verdict = Verdict(Action.DENY, (error_reason(exc),))
    return CommandJudgement(
        verdict=verdict,
        unfolded=unfolded,
        masked_command=_heuristic_mask(command) if masked is None else masked,
        hosts=hosts,
        fast=fast,
        latency_us=(time.perf_counter_ns() - start) // 1000,
    )


def analyze_command(
    command: str,
    *,
    cwd: str | None = None,
    scanner: Scanner | None = None,
    env: GuardEnv | None = None,
) -> tuple[Reason, ...]:
    """The reasons the guard finds in ``command``, before policy (for tests and evaluation)."""
    if is_plainly_safe(command):
        return ()
    return _analyze(command, cwd=cwd, scanner=scanner, env=env)[0]


# Imported on first use (the fast path must not pull in the parser), then kept: an import
# statement inside a function that runs on every judgement costs a module lookup each time. The
# modules are kept, not their functions, so a function replaced on its module is the one called.
_POLICY_MODULE: Any = None
_FULL_PATH: Any = None
# Decision contexts are frozen values: one per (component, actor, agent, tool, hosts), reused.
_CONTEXTS: dict[tuple[Any, ...], Any] = {}


def _load_policy_module() -> Any:
    global _POLICY_MODULE  # noqa: PLW0603 - see above
    import domestique.policy

    _POLICY_MODULE = domestique.policy
    return _POLICY_MODULE


def _load_full_path() -> Any:
    global _FULL_PATH  # noqa: PLW0603 - see above
    from domestique.guard import rules, unfold

    _FULL_PATH = (unfold, rules)
    return _FULL_PATH


def _analyze(
    command: str, *, cwd: str | None, scanner: Scanner | None, env: GuardEnv | None
) -> tuple[tuple[Reason, ...], tuple[str, ...], str, tuple[str, ...]]:
    unfold, rules = _FULL_PATH or _load_full_path()
    if env is None:
        env = GuardEnv.from_process()
    if len(command) > MAX_COMMAND_CHARS:
        reason = Reason(
            "engine.parse_error",
            f"command longer than {MAX_COMMAND_CHARS} characters",
            (Evidence(f"command[0:{len(command)}]"),),
        )
        return (reason,), (), _heuristic_mask(command[:2000]), ()
    unfolded = unfold.unfold_command(command, cwd=cwd, env=env)
    hits, egress = rules.judge_unfolded(command, unfolded, cwd=cwd, env=env)
    secrets: list[str] = []
    if egress:
        hits += _secret_hits(command, scanner, secrets)
    hosts = _hosts(unfolded.invocations) if egress else ()

    masked_command = _heuristic_mask(command)
    if not secrets and masked_command == command:
        # Nothing in the command looks like a secret: no rendering of it needs masking.
        rendered = tuple([inv.render() for inv in unfolded.invocations])
        return _reasons(hits, None) if hits else (), rendered, masked_command, hosts

    def mask(text: str) -> str:
        from domestique.keys import mask_preview

        for value in secrets:
            text = text.replace(value, mask_preview(value))
        return _heuristic_mask(text)

    rendered = tuple(mask(inv.render()) for inv in unfolded.invocations)
    return _reasons(hits, mask), rendered, mask(command) if secrets else masked_command, hosts


def _reasons(hits: Sequence[Hit], mask: Any) -> tuple[Reason, ...]:
    """Hits merged into reasons (one per code and message, up to 8 evidence spans each).

    ``mask`` masks evidence previews; None when the command holds nothing that needs masking.
    """
    merged: dict[tuple[str, str], list[Evidence]] = {}
    for h in hits:
        where = f"command[{h.span[0]}:{h.span[1]}]"
        preview = "" if not h.judged else (h.judged if mask is None else mask(h.judged))[:240]
        ev = Evidence(where=where, preview=preview, fingerprint=getattr(h, "fingerprint", ""))
        key = (h.code, h.message)
        bucket = merged.setdefault(key, [])
        if ev not in bucket and len(bucket) < 8:
            bucket.append(ev)
    return tuple(Reason(code, msg, tuple(evs)) for (code, msg), evs in merged.items())


_VARIABLE_KEY = re.compile(r"\$\{?(?:PWD|HOME|USER|TMPDIR|OLDPWD)\}?\"?\s*[:=]\s*\"?$")


@dataclass(frozen=True, slots=True)
class _SecretHit:
    code: str
    message: str
    span: tuple[int, int]
    judged: str
    fingerprint: str


def _secret_hits(command: str, scanner: Scanner | None, secrets: list[str]) -> list[Any]:
    """Secrets in a command that reaches the network. No scanner available: fail closed."""
    try:
        if scanner is None:
            from domestique.detect import default_scanner

            scanner = default_scanner()
        findings = scanner.scan(command)
    except Exception as exc:  # noqa: BLE001 - a missing detector must not allow
        return [
            _SecretHit(
                "engine.detector_error",
                f"secret detection unavailable ({type(exc).__name__}); failing closed",
                (0, len(command)),
                "",
                "",
            )
        ]
    out: list[Any] = []
    for f in findings:
        if f.code == "engine.detector_error":
            out.append(_SecretHit(f.code, "secret detection failed", (f.start, f.end), "", ""))
            continue
        if f.code.startswith("infra."):
            # An identifier, not a secret: its own code, which the policy allows by default.
            out.append(
                _SecretHit(
                    f.code,
                    f"{f.code} in a command that reaches the network",
                    (f.start, f.end),
                    f.preview,
                    f.fingerprint,
                )
            )
            continue
        if not f.code.startswith(("secret.", "records.")):
            continue
        if _VARIABLE_KEY.search(command, max(0, f.start - 40), f.start):
            # `-v "$PWD":/app`: the "name" is a variable the shell expands into a path; the
            # text after it is a path, not a password assigned to a key
            continue
        secrets.append(command[f.start : f.end])
        out.append(
            _SecretHit(
                "cmd.secret_egress",
                f"{f.code} in a command that reaches the network",
                (f.start, f.end),
                f.preview,
                f.fingerprint,
            )
        )
    secrets.sort(key=len, reverse=True)
    return out


_MASK_RES: Any = None
# Every value the pattern below masks comes after (or, for user:pass@host, before) one of these.
_MASK_HINTS = ("key", "token", "secret", "pass", "pwd", "auth", "bearer", "@", "cred", "login")


def _heuristic_mask(text: str) -> str:
    """Mask values that look like credentials even when no detector ran.

    ``TOKEN=…``, ``--password …``, ``Authorization: Bearer …``, ``user:pass@host``.
    """
    global _MASK_RES  # noqa: PLW0603 - compiled on first use, keeps the fast path import-light
    if not any(map(text.lower().__contains__, _MASK_HINTS)):  # map: no Python-level loop
        return text
    if _MASK_RES is None:
        _MASK_RES = _mask_patterns()

    from domestique.keys import mask_preview

    def sub(m: Any) -> str:
        if m.group("pw") is not None:
            return str(m.group("u")) + mask_preview(str(m.group("pw")))
        value = str(m.group("v"))
        quote = value[0] if value[:1] in "'\"" else ""
        return str(m.group("k")) + quote + mask_preview(value[len(quote) :])

    return str(_MASK_RES["://" in text].sub(sub, text))


def _mask_patterns() -> tuple[Any, Any]:
    """The masking pattern without (index 0) and with (index 1) its ``user:pass@host`` part.

    Both match exactly what the one pattern ``name[=:]value | --option value | bearer value |
    basic value | -pVALUE | scheme://user:pass@`` matches, only faster:

    - ``name[=:]`` is tried only where a run of ``[\\w.-]`` starts. Its leading ``[\\w.-]*``
      reaches the keyword from any point of the run, and the run start is tried first (a match
      never ends inside such a run), so a later start in the same run never matches where the
      start did not. Without the guard each point of a long word re-scans the rest of it.
    - ``scheme://`` cannot match without ``://`` in the text; the pattern without it is used
      then (its ``[a-z][\\w+.-]*`` re-scans every word from each letter otherwise).
    """
    import re

    named = (
        r"(?i)(?P<k>(?<![\w.-])(?:[\w.-]*(?:api[_-]?key|token|secret|passw(?:or)?d|passwd|pwd|"
        r"credential|auth)[\w.-]*)\s*[=:]\s*|(?:--?(?:password|passwd|token|api-key|secret)"
        r"[= ]\s*)|bearer\s+|basic\s+|-p(?=\S{4,})|"
        # `-p PW` where -p is the password (elsewhere it is a port or `mkdir -p`): sshpass, and
        # the registry logins of docker, podman, nerdctl, helm and oras
        r"(?<![\w.-])sshpass\s+-p\s+|"
        r"(?<![\w.-])(?:docker|podman|nerdctl|helm\s+registry|oras)\s+login\s"
        r"(?:[^\s|;&]+\s+)*?-p\s+)(?P<v>['\"]?[^\s'\"&;|]{4,})"
    )
    url = r"(?P<u>[a-z][\w+.-]*://[^/\s:@]+:)(?P<pw>[^@\s/]{3,})(?=@)"
    # Index 0: the url part can never match (no "://"), but the group names stay the same.
    return re.compile(named + r"|(?P<u>(?!))(?P<pw>(?!))"), re.compile(named + "|" + url)


_HOST_RE: Any = None


def _hosts(invocations: Sequence[Any]) -> tuple[str, ...]:
    global _HOST_RE  # noqa: PLW0603 - compiled on first use, keeps the fast path import-light
    if _HOST_RE is None:
        import re

        _HOST_RE = re.compile(r"(?i)^(?:[a-z][\w+.-]*://)?(?:[^@/\s]*@)?([a-z0-9.-]+\.[a-z]{2,})")
    match = _HOST_RE.match
    hosts: list[str] = []
    for inv in invocations:
        for w in inv.words[1:]:
            m = match(w.text)
            if m and ("://" in w.text or "@" in w.text or inv.name in ("ssh", "nc", "ping")):
                hosts.append(m.group(1).lower())
    return tuple(dict.fromkeys(hosts))[:16]


def command_record(
    judgement: CommandJudgement,
    *,
    policy: EffectivePolicy,
    subject: Subject,
    cwd: str | None,
    component: Component = Component.GUARD,
    extra: Mapping[str, JSONValue] | None = None,
) -> DecisionRecord:
    """The decision record for a judgement: masked command, unfolded commands, cwd."""
    obj: dict[str, JSONValue] = {
        "command": judgement.masked_command,
        "unfolded": list(judgement.unfolded[:64]),
        "cwd": cwd,
        "hosts": list(judgement.hosts),
        "fast_path": judgement.fast,
    }
    if extra:
        obj.update(extra)
    return DecisionRecord(
        component=component,
        action=judgement.verdict.action,
        reasons=judgement.verdict.reasons,
        subject=subject,
        object=obj,
        policy=policy.ref,
        engine={"guard": GUARD_ENGINE_VERSION, "grammar": GRAMMAR_VERSION},
        latency_us=judgement.latency_us,
        would_action=judgement.verdict.would,
    )
