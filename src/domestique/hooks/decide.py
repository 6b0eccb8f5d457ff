"""Decide one hook call: host JSON → event → verdict → recorded decision → host reply.

The shell around :func:`domestique.hooks.assess.assess`: it loads the caller's policy and
scanner, reads who asked (the process ancestry) and the files a read tool returns, masks what is
echoed and recorded, and goes through :func:`domestique.boundary.decide_and_record`, so every
failure is a recorded deny: bad input denies with ``hook.malformed_input``, an unknown event with
``hook.unknown_event``, any exception with ``engine.internal_error``, a record that cannot be
masked or written with ``audit.write_failed``.

Used in-process by :mod:`domestique.hooks.entry` (:func:`decide_in_process`) and, with its
caches kept warm, by the per-user daemon (:mod:`domestique.hooks.daemon`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from domestique import __version__, frozen_class
from domestique.audit._mask import may_hold_secret
from domestique.boundary import decide_and_record, error_reason
from domestique.frozen_class import dataclass, field
from domestique.hooks.assess import Inputs, Texts, assess, url_host
from domestique.hooks.hosts import host_action, parse_event, render, unenforced
from domestique.hooks.messages import ERROR_PREFIXES, WHAT, compose_message
from domestique.hooks.protocol import MalformedInput, Reply, UnknownEvent
from domestique.records import (
    Action,
    Actor,
    Component,
    DecisionRecord,
    JSONValue,
    PolicyRef,
    Reason,
    Subject,
    Verdict,
    current_user_and_host,
)

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing

if TYPE_CHECKING:
    from domestique.detect import Scanner
    from domestique.policy import EffectivePolicy

MAX_READ_SCAN_BYTES = 1024 * 1024  # how much of a file a read tool returns is scanned


def file_text(path: str) -> Texts:
    """The text of a regular file a read tool is about to return ([] for anything else).

    Credential files are not read: their policy (hook.credential_read) decides them first.
    """
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return []
        with open(path, "rb") as fh:
            # A larger file is scanned over its first MiB (what a read tool returns first)
            # rather than not at all.
            data = fh.read(MAX_READ_SCAN_BYTES)
    except OSError:
        return []
    where = f"file:{path}" if st.st_size <= MAX_READ_SCAN_BYTES else f"file:{path}[:1MiB]"
    return [(where, data.decode("utf-8", "replace"))]


# --- masking what is echoed and recorded ----------------------------------------------------


def mask_secrets(text: str, scanner: Scanner) -> str:
    """``text`` with every finding replaced by its masked preview (``AKIA…MPLE``).

    Infrastructure identifiers (``infra.*``: ARNs, bucket hosts) are no secret and stay.
    """
    findings = sorted(
        (f for f in scanner.scan(text) if not f.code.startswith("infra.")),
        key=lambda f: f.start,
        reverse=True,
    )
    last = len(text) + 1
    for f in findings:
        if f.end > last:  # overlapping: the earlier replacement already covers it
            continue
        text = text[: f.start] + (f.preview or "…") + text[f.end :]
        last = f.start
    return text


class Masker:
    """Masks raw secrets in what a hook echoes and records (tool names, paths, event names,
    URLs, commands): the host's JSON is the agent's to fill, and DESIGN says no raw secret is
    ever written to the terminal or the audit log."""

    def __init__(
        self, scanner: Callable[[], Scanner], known: Callable[[], list[str]] | None = None
    ) -> None:
        self._scanner = scanner
        self._known_source = known
        self._known: list[str] | None = None

    def _known_values(self) -> list[str]:
        if self._known is None:
            # Longest first, so a value holding another is replaced whole.
            values = self._known_source() if self._known_source is not None else []
            self._known = sorted({v for v in values if v}, key=len, reverse=True)
        return self._known

    def text(self, value: str) -> str:
        known = [v for v in self._known_values() if v in value]
        if not known and not may_hold_secret(value):
            return value
        value = mask_secrets(value, self._scanner())
        # A known value the engine cannot anchor on (short, no digit: ``hunter2x``-like words)
        # is still never echoed or recorded.
        for v in known:
            value = value.replace(v, "…")
        return value

    def json(self, value: JSONValue) -> JSONValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items()}
        return value

    def subject(self, subject: Subject) -> Subject:
        """The ancestry's command lines (``claude -p "my key is …"``) masked too."""
        ancestry = tuple(
            frozen_class.replace(a, cmdline=self.text(a.cmdline)) if a.cmdline else a
            for a in subject.ancestry
        )
        return frozen_class.replace(subject, ancestry=ancestry)

    def reason(self, reason: Reason) -> Reason:
        evidence = tuple(frozen_class.replace(e, where=self.text(e.where)) for e in reason.evidence)
        return frozen_class.replace(reason, message=self.text(reason.message), evidence=evidence)


# --- one call -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    """What is known of one hook call so far: filled while judging, read to build the record."""

    host: str
    pid: int | None
    env: Mapping[str, str] | None
    t0: int = field(default_factory=time.perf_counter_ns)
    event: str = ""
    what: str = "tool call"
    policy: PolicyRef = field(default_factory=lambda: PolicyRef("unloaded", ""))
    obj: dict[str, JSONValue] = field(default_factory=dict)
    subject: Subject | None = None


class Judge:
    """Decides hook calls. The daemon keeps one alive, so its scanner is compiled once."""

    def __init__(self, home: Path | None = None) -> None:
        from domestique.keys import domestique_home

        self.home = home if home is not None else domestique_home()
        # The daemon sets this: its own environment and folder are not the caller's, so the
        # guard must get the caller's scanner (known values), not build one from the daemon's.
        self.eager_scanner = False
        # A hook deciding in-process spools its record (no sqlite3 or hashlib to load); the
        # daemon, with the store open, appends.
        self.spool = False
        self._caller: tuple[Mapping[str, str] | None, str | None] = (None, None)
        self._scanner: Scanner | None = None  # the current call's, once asked for
        self._known: list[str] | None = None  # the current call's known values, once read
        # The last caller environment's secret-looking values: callers repeat their environment.
        self._env_values: tuple[dict[str, str], list[str]] | None = None

    def scanner(self) -> Scanner:
        """The detection engine for the current caller: its environment's secret values and the
        ``.env`` files of its working directory are known values (cached by detect; asked for
        once per call, as the judging, the masking and the record all use it)."""
        if self._scanner is None:
            from domestique.detect import default_scanner

            env, cwd = self._caller
            self._scanner = default_scanner(self.home, env=env, cwd=Path(cwd) if cwd else None)
        return self._scanner

    def known_values(self) -> list[str]:
        """The caller's secret-looking environment values and ``.env`` values, raw, in memory
        only: cheap (no scanner is built), for masking what is echoed and recorded."""
        from domestique.detect.known_values import dotenv_values, secret_env_values

        if self._known is not None:
            return self._known
        env, cwd = self._caller
        environ = dict(os.environ if env is None else env)
        memo = self._env_values
        if memo is not None and memo[0] == environ:
            values = list(memo[1])
        else:
            values = secret_env_values(environ)
            self._env_values = (environ, list(values))
        with contextlib.suppress(OSError):  # read on every call: a .env may change any time
            values += dotenv_values(Path(cwd) if cwd else Path.cwd())
        self._known = [v.strip() for v in values]
        return self._known

    def policy(self, cwd: str | None) -> EffectivePolicy:
        from domestique.policy import load_policy

        return load_policy(home=self.home, project_dir=Path(cwd) if cwd else None)

    def decide(
        self,
        host: str,
        raw: bytes,
        *,
        pid: int | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
    ) -> Reply:
        """The host reply for one hook call; every failure is a recorded deny."""
        self._caller, self._scanner, self._known = (env, cwd), None, None
        call = _Call(host, pid, env, obj={"host": host})
        if env is not None and is_probe(env, self.home):
            # `domestique doctor`'s own probe: recorded like any call, left out of reports.
            call.obj["probe"] = True
        try:
            record = decide_and_record(
                lambda: self._judge(call, raw, cwd),
                lambda verdict: self._record(call, verdict),
                self._append,
            )
            action, reasons = record.action, record.reasons
        except BaseException as exc:  # noqa: BLE001 - nothing could be recorded: still a deny
            action, reasons = Action.DENY, (error_reason(exc),)
        error = action.stops and any(r.code.startswith(ERROR_PREFIXES) for r in reasons)
        shown = Action(host_action(host, call.event, action.value))
        message = compose_message(shown, reasons, call.what)
        return render(host, call.event, shown.value, message, error=error)

    def _judge(self, call: _Call, raw: bytes, cwd: str | None) -> Verdict:
        """Parse the call and assess it; what is learnt on the way goes into ``call``."""
        try:
            event = parse_event(call.host, raw)
        except MalformedInput as exc:
            return Verdict(Action.DENY, (Reason("hook.malformed_input", str(exc)),))
        except UnknownEvent as exc:
            call.event = str(exc)
            return Verdict(Action.DENY, (Reason("hook.unknown_event", f"event {call.event!r}"),))
        call.event, call.what = event.event, WHAT[event.kind]
        call.obj.update(event=event.event, tool=event.tool, cwd=event.cwd)
        call.subject = self.subject(call.host, event.session_id, call.pid, call.env)
        from domestique.policy import DecisionContext

        policy = self.policy(event.cwd or cwd)
        call.policy = policy.ref
        ctx = DecisionContext(
            component=Component.HOOK,
            actor=Actor.AGENT,
            agent=call.subject.agent,
            tool=event.tool,
            hosts=tuple(h for u in event.urls if (h := url_host(u))),
            paths=event.paths,
            project=event.cwd or cwd,
            command=event.command,
        )
        inputs = Inputs(self.home, self.scanner, file_text, eager_scanner=self.eager_scanner)
        verdict, detail = assess(event, policy, ctx, inputs)
        call.obj.update(detail)
        return verdict

    def _record(self, call: _Call, verdict: Verdict) -> DecisionRecord:
        """The record of ``verdict``, masked: what the host is shown and the store keeps."""
        # A hook cannot redact what the host is about to do: redact stops like deny there.
        action = Action.DENY if verdict.action in (Action.BLOCK, Action.REDACT) else verdict.action
        would = Action.DENY if verdict.would in (Action.BLOCK, Action.REDACT) else verdict.would
        subject = call.subject
        if subject is None:
            try:
                subject = self.subject(call.host, None, call.pid, call.env)
            except Exception:  # noqa: BLE001 - the decision is a deny already; record it
                subject = fallback_subject()
        masker = Masker(self.scanner, self.known_values)
        try:
            reasons = tuple(masker.reason(r) for r in verdict.reasons)
            masked = masker.json(dict(call.obj))
            obj = dict(masked) if isinstance(masked, dict) else {"host": call.host}
            call.event = masker.text(call.event)
        except Exception as exc:  # noqa: BLE001 - cannot mask: echo and record nothing raw
            action, would = Action.DENY, None
            reasons = (error_reason(exc, "engine.detector_error"),)
            obj, call.event = {"host": call.host}, ""
        if action in (Action.DENY, Action.ASK):
            limit = unenforced(call.host, call.event)
            if limit:
                obj["enforced"], obj["host_limit"] = False, limit
        return DecisionRecord(
            component=Component.HOOK,
            action=action,
            reasons=reasons,
            subject=subject,
            object=obj,
            policy=call.policy,
            engine={"domestique": __version__, "hooks": "1"},
            latency_us=(time.perf_counter_ns() - call.t0) // 1000,
            would_action=would,
        )

    def _append(self, record: DecisionRecord) -> DecisionRecord:
        """Store ``record`` with its ancestry's command lines masked (``claude -p "my key is
        …"``); the decision to enforce comes back (a deny with ``audit.write_failed`` when it
        could not be masked or written)."""
        from domestique.audit import record_decision

        masker = Masker(self.scanner, self.known_values)
        record = frozen_class.replace(record, subject=masker.subject(record.subject))
        return record_decision(record, home=self.home, stop=Action.DENY, spool=self.spool)

    def subject(
        self, host: str, session_id: str | None, pid: int | None, env: Mapping[str, str] | None
    ) -> Subject:
        """Who asked: the ancestry of the hook process; the host itself when none is named."""
        from domestique.guard import identify_subject

        subject: Subject = identify_subject(pid=pid, env=env)
        agent = subject.agent
        markers = subject.markers
        if agent is None:
            agent, markers = host, (*markers, f"hook:{host}")
        return frozen_class.replace(subject, session_id=session_id, agent=agent, markers=markers)


def fallback_subject() -> Subject:
    """Who asked, when the ancestry could not be read: user and host only, marked so."""
    user, hostname = current_user_and_host()
    return Subject(user=user, host=hostname, markers=("ancestry-unavailable",))


# Set by `domestique doctor` in the environment of the hook it runs: the record is a probe. The
# value must equal the one-time token doctor wrote in DOMESTIQUE_HOME (a guarded path), so a
# project's .env that a host loads into its environment cannot hide real calls from reports.
PROBE_ENV = "DOMESTIQUE_PROBE"
PROBE_FILE_NAME = "doctor-probe.token"


def is_probe(env: Mapping[str, str], home: Path | None) -> bool:
    """True when ``env`` carries doctor's current probe token (never on a read error)."""
    given = env.get(PROBE_ENV)
    if not given:
        return False
    import hmac

    from domestique.keys import domestique_home

    try:
        token = ((home or domestique_home()) / PROBE_FILE_NAME).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return False
    return len(token) >= 32 and hmac.compare_digest(token.strip(), given)


def decide_in_process(
    host: str, raw: bytes, *, pid: int | None, env: Mapping[str, str] | None, cwd: str | None
) -> Reply:
    """One decision in this process (no daemon), with a fresh :class:`Judge` that spools its
    record (:mod:`domestique.audit.spool`) for the daemon it starts to chain."""
    judge = Judge()
    judge.spool = True
    return judge.decide(host, raw, pid=pid, env=env, cwd=cwd)
