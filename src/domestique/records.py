"""The decision record: one frozen, typed record for every decision Domestique makes.

The firewall, the command guard and the hooks all produce a :class:`DecisionRecord`. It is built
once, then rendered by separate renderers (canonical JSON for hashing and the audit store,
terminal text, OCSF in the exporter). Raw secret values never enter a record: evidence carries a
masked preview and a keyed fingerprint only (see :mod:`domestique.keys`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from enum import StrEnum

from domestique.frozen_class import dataclass, field

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1

JSONValue = None | bool | int | str | Sequence["JSONValue"] | Mapping[str, "JSONValue"]


class Component(StrEnum):
    """Which part of Domestique made the decision."""

    PROXY = "proxy"
    GUARD = "guard"
    HOOK = "hook"
    # A change to a policy file made through Domestique (``domestique allow``): recorded in the
    # same chain, never a component that policy rules decide for.
    POLICY = "policy"


# The components a policy rule can name (every one that judges something).
JUDGING_COMPONENTS: tuple[Component, ...] = (Component.PROXY, Component.GUARD, Component.HOOK)


class Action(StrEnum):
    """What happens to the judged request or command.

    ``allow`` lets it through unchanged, ``redact`` forwards it with findings replaced by
    placeholders, ``ask`` puts it to the person, ``deny`` (command guard, hooks) and ``block``
    (firewall) stop it.
    """

    ALLOW = "allow"
    REDACT = "redact"
    ASK = "ask"
    DENY = "deny"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        """Order used to combine decisions: the most severe wins. deny and block rank equal."""
        return _SEVERITY[self]

    @property
    def stops(self) -> bool:
        """True when the judged thing must not go ahead as it is (ask, deny, block)."""
        return self in (Action.ASK, Action.DENY, Action.BLOCK)

    @property
    def past(self) -> str:
        """The action as a past participle, for "would have been denied" (monitor mode)."""
        return _PAST[self]


_SEVERITY = {Action.ALLOW: 0, Action.REDACT: 1, Action.ASK: 2, Action.DENY: 3, Action.BLOCK: 3}
_PAST = {
    Action.ALLOW: "allowed",
    Action.REDACT: "redacted",
    Action.ASK: "asked",
    Action.DENY: "denied",
    Action.BLOCK: "blocked",
}


def most_severe(actions: Sequence[Action], default: Action = Action.ALLOW) -> Action:
    """The most severe of ``actions``; ``default`` for none. On a deny/block tie, block wins."""
    best = default
    for action in actions:
        if action.severity > best.severity or (
            action.severity == best.severity and action is Action.BLOCK
        ):
            best = action
    return best


class Actor(StrEnum):
    """Who started what is judged: an AI agent or a person at a terminal."""

    AGENT = "agent"
    HUMAN = "human"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of data a reason is about.

    ``where`` is a JSON path into a request (``messages[3].content[1].content``) or a span of a
    command line (``command[12:40]``); ``preview`` is masked; ``fingerprint`` is the keyed HMAC
    of the value under the install key (never a plain hash, never the value).
    ``org_fingerprint``: the same under the organisation's key, on an endpoint enrolled with
    the fleet hub (it matches across endpoints); rendered only when set, so every other
    record keeps its exact JSON.
    """

    where: str
    preview: str = ""
    fingerprint: str = ""
    org_fingerprint: str = ""

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "where": self.where,
            "preview": self.preview,
            "fingerprint": self.fingerprint,
        }
        if self.org_fingerprint:
            out["org_fingerprint"] = self.org_fingerprint
        return out


@dataclass(frozen=True, slots=True)
class Reason:
    """A reason code with a one-line message and the evidence it cites."""

    code: str
    message: str
    evidence: tuple[Evidence, ...] = ()

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "code": self.code,
            "message": self.message,
            "evidence": [e.to_json() for e in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision before it is recorded: the action and every reason behind it."""

    action: Action
    reasons: tuple[Reason, ...] = ()
    # Monitor mode: what the policy decided, when ``action`` (what is enforced) is not it.
    # None: the decision is enforced.
    would: Action | None = None

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(r.code for r in self.reasons)


@dataclass(frozen=True, slots=True)
class Ancestor:
    """One process in the ancestry of what is judged, nearest first."""

    pid: int
    name: str
    exe: str | None = None
    cmdline: str | None = None
    start_time: int | None = None  # clock ticks since boot (Linux) or epoch seconds (macOS)

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "pid": self.pid,
            "name": self.name,
            "exe": self.exe,
            "cmdline": self.cmdline,
            "start_time": self.start_time,
        }


@dataclass(frozen=True, slots=True)
class Subject:
    """Who the decision is about: user, host, process ancestry, the agent identified."""

    user: str = ""
    host: str = ""
    actor: Actor = Actor.AGENT
    agent: str | None = None  # e.g. "claude-code", "codex"; None when none was identified
    session_id: str | None = None
    ancestry: tuple[Ancestor, ...] = ()
    markers: tuple[str, ...] = ()  # the evidence for ``agent``: env markers, ancestor names

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "user": self.user,
            "host": self.host,
            "actor": self.actor.value,
            "agent": self.agent,
            "session_id": self.session_id,
            "ancestry": [a.to_json() for a in self.ancestry],
            "markers": list(self.markers),
        }


@dataclass(frozen=True, slots=True)
class PolicyRef:
    """The effective policy that decided: its id and the sha256 of its canonical form."""

    id: str
    sha256: str
    bundle: int | None = None  # the organisation bundle's revision, on an enrolled endpoint

    def to_json(self) -> dict[str, JSONValue]:
        if self.bundle is None:  # records made off the fleet keep their old canonical form
            return {"id": self.id, "sha256": self.sha256}
        return {"id": self.id, "sha256": self.sha256, "bundle": self.bundle}


def new_record_id(now_ns: int | None = None) -> str:
    """A UUIDv7 (RFC 9562): 48-bit millisecond time, then random bits; sorts by time."""
    ms = (now_ns if now_ns is not None else time.time_ns()) // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 68) & 0xFFF) << 64  # rand_a, 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b, 62 bits
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def utc_now_iso(now_ns: int | None = None) -> str:
    """UTC time with microseconds, ``2026-11-30T01:02:03.456789Z``; a string, never a float."""
    ns = now_ns if now_ns is not None else time.time_ns()
    secs, rem = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{rem // 1000:06d}Z"


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One decision, allow included. Built once; rendered by :func:`to_canonical_json`."""

    component: Component
    action: Action
    reasons: tuple[Reason, ...]
    subject: Subject
    object: Mapping[str, JSONValue]
    policy: PolicyRef
    engine: Mapping[str, str]
    latency_us: int
    id: str = field(default_factory=new_record_id)
    time: str = field(default_factory=utc_now_iso)
    schema: int = SCHEMA_VERSION
    # Monitor mode (``[settings] mode = "monitor"``): the action the policy decided, while
    # ``action`` is what was enforced. None: enforced. Rendered as ``"enforced": false`` and
    # ``"would_action"`` only when set, so every enforced record keeps its exact JSON.
    would_action: Action | None = None

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(r.code for r in self.reasons)

    @property
    def enforced(self) -> bool:
        return self.would_action is None

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "schema": self.schema,
            "id": self.id,
            "time": self.time,
            "component": self.component.value,
            "action": self.action.value,
            "reasons": [r.to_json() for r in self.reasons],
            "subject": self.subject.to_json(),
            "object": dict(self.object),
            "policy": self.policy.to_json(),
            "engine": dict(self.engine),
            "latency_us": self.latency_us,
        }
        if self.would_action is not None:
            out["enforced"] = False
            out["would_action"] = self.would_action.value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionRecord:
        """Rebuild a record from its stored JSON form; KeyError/TypeError on bad data."""
        subj = data["subject"]
        return cls(
            schema=int(data["schema"]),
            id=str(data["id"]),
            time=str(data["time"]),
            component=Component(data["component"]),
            action=Action(data["action"]),
            reasons=tuple(
                Reason(
                    code=r["code"],
                    message=r["message"],
                    evidence=tuple(Evidence(**e) for e in r.get("evidence", ())),
                )
                for r in data["reasons"]
            ),
            subject=Subject(
                user=subj.get("user", ""),
                host=subj.get("host", ""),
                actor=Actor(subj.get("actor", "agent")),
                agent=subj.get("agent"),
                session_id=subj.get("session_id"),
                ancestry=tuple(Ancestor(**a) for a in subj.get("ancestry", ())),
                markers=tuple(subj.get("markers", ())),
            ),
            object=dict(data["object"]),
            policy=PolicyRef(**data["policy"]),
            engine=dict(data["engine"]),
            latency_us=int(data["latency_us"]),
            would_action=Action(data["would_action"]) if data.get("would_action") else None,
        )


class CanonicalJSONError(ValueError):
    """A value that has no single canonical JSON form (a float, NaN, a non-string key)."""


def _check_canonical(value: object, path: str = "$") -> None:
    if value is None or isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        # Floats render differently across implementations; records carry ints and strings.
        raise CanonicalJSONError(f"float at {path}: use an int (e.g. microseconds) or a string")
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalJSONError(f"non-string key at {path}")
            _check_canonical(v, f"{path}.{k}")
        return
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _check_canonical(v, f"{path}[{i}]")
        return
    raise CanonicalJSONError(f"{type(value).__name__} at {path} is not JSON")


def canonical_json(value: object) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8, no floats. Same input, same bytes."""
    _check_canonical(value)
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def to_canonical_json(record: DecisionRecord) -> bytes:
    """The record's canonical JSON: what the audit store hashes and stores."""
    return canonical_json(record.to_json())


def current_user_and_host() -> tuple[str, str]:
    """The login name and host name for :class:`Subject`; never raises."""
    try:
        import pwd

        user = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        user = os.environ.get("USER", "") or os.environ.get("USERNAME", "")
    try:
        host = os.uname().nodename
    except (AttributeError, OSError):
        host = ""
    return user, host
