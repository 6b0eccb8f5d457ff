"""The agent hosts Domestique hooks into: one module per host, each exporting ``HOST``
(a :class:`domestique.hooks.protocol.Host`: parse, render, install settings, self-protection
globs, doctor's probe). Stdlib only, so the hook process starts fast.

**Adding a host** is one new module here and one line in :data:`_MODULES`; the entry, the
decision, ``install``, ``uninstall`` and ``doctor`` find it through :func:`get`.

Importing this package imports no host module: ``domestique hook`` checks a host name against
:data:`HOSTS` before anything is loaded, and the daemon path never renders.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing would cost the hook its start-up time
if TYPE_CHECKING:
    from domestique.hooks.protocol import HookEvent, Host, Reply

_MODULES: dict[str, str] = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini": "gemini",
    "cursor": "cursor",
    "copilot": "copilot",
    "windsurf": "windsurf",
    "cline": "cline",
}
HOSTS: tuple[str, ...] = tuple(_MODULES)


def get(name: str) -> Host:
    """The host called ``name``; ``KeyError`` for a name that is not one."""
    import importlib

    host: Host = importlib.import_module(f"{__name__}.{_MODULES[name]}").HOST
    return host


def all_hosts() -> tuple[Host, ...]:
    return tuple(get(name) for name in HOSTS)


def host_action(host: str, event: str, action: str) -> str:
    """``action`` as ``host`` can carry it out: block is deny, an unknown word is deny, and ask
    is deny where the host (or this event of it) has no way to ask the person."""
    if action == "block" or action not in ("allow", "ask", "deny"):
        return "deny"
    if action == "ask" and (host not in _MODULES or not get(host).can_ask(event)):
        return "deny"
    return action


def unenforced(host: str, event: str) -> str:
    """Why ``host`` does not act on a hook's answer to ``event`` ('' where it does)."""
    if host not in _MODULES:
        return ""
    return get(host).unenforced.get(event, "")


def render(host: str, event: str, action: str, message: str, *, error: bool = False) -> Reply:
    """The host's answer for ``action`` (allow | ask | deny; block counts as deny).

    **Allow is silence**: exit 0 and no decision, so the host's own permission rules and its
    "allow this?" prompt still apply (an explicit allow would switch them off). Where the host
    must read JSON, the reply is one with no decision.

    **Deny is the protocol's structured decision** with exit 0 where the host has one (Claude
    Code, Codex and Gemini CLI show it as a policy decision; exit 2 would be shown as a failed
    hook), exit 2 where exit 2 is the only deny (Windsurf). ``message`` cites the reason codes
    and, for a stop, what to do instead. ``error`` marks a fail-closed answer (bad input, crash,
    import failure): it adds exit 2 on every host that blocks on it, so a host that cannot read
    the JSON still blocks. An unknown host gets a generic deny with exit 2.
    """
    from domestique.hooks.protocol import dumps

    if action not in ("allow", "ask", "deny", "block"):
        error = True
    action = host_action(host, event, action)
    stop = action != "allow"
    if host in _MODULES:
        adapter = get(host)
        out, code = adapter.render(event, action, message)
        if error and stop and adapter.exit2_blocks:
            code = 2
    else:
        out, code = dumps({"decision": "deny", "reason": message}), 2
    # The reason also goes to stderr where exit 2 carries it (the host shows stderr then).
    err = message.encode("utf-8", "replace") + b"\n" if stop and code == 2 else b""
    return out, err, code


def event_name(host: str, payload: object) -> str:
    """The host's event name for ``payload`` ('' when it cannot be told); never raises."""
    try:
        return get(host).event_name(payload)
    except Exception:  # noqa: BLE001 - an unknown host or a strange payload: no event name
        return ""


def fail_closed_reply(host: str, raw: bytes, code: str, detail: str) -> Reply:
    """A deny for an error, in the host's protocol, naming the reason code."""
    event = ""
    try:
        import json

        event = event_name(host, json.loads(raw))
    except BaseException:  # noqa: BLE001, S110 - unreadable input: answer in the default event shape
        pass
    message = f"Domestique denied this ({code}): {detail}; failing closed."
    return render(host, event, "deny", message, error=True)


def parse_event(host: str, raw: bytes) -> HookEvent:
    """Decode ``raw`` and adapt it; raises MalformedInput / UnknownEvent / KeyError (host)."""
    import json

    from domestique.hooks.hosts._common import obj
    from domestique.hooks.protocol import MalformedInput

    adapter = get(host)
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedInput("input is not JSON") from exc
    return adapter.parse(obj(payload, "input"))


def self_protect_globs() -> tuple[str, ...]:
    """Every host's hook settings files: writing one can switch the guard off."""
    return tuple(g for host in all_hosts() for g in host.self_protect)
