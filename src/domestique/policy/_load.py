"""Reading the policy layers, merging them, and caching the validated result.

Layers, in order: every ``builtin/*.toml`` (sorted by name), the system file
(``/etc/domestique/policy.toml``), the user file (``$DOMESTIQUE_HOME/policy.toml``), an optional
explicit ``--policy`` file, the organisation layer (the signed bundle from the fleet hub, on an
enrolled endpoint), then project files (``.domestique/policy.toml`` from the project directory
upward, outermost first) which may only tighten. When an organisation layer is present, the
system, user and ``--policy`` layers may only tighten too: the organisation's rules are the
floor on every enrolled machine.

The organisation layer is read from ``$DOMESTIQUE_HOME/hub/bundle.json`` and its signature is
verified again against the keys pinned at enrolment (and the organisation id) whenever the
policy is built: a bundle edited on the endpoint makes the policy invalid, which denies. An
endpoint whose organisation requires a bundle and has none installed denies every decision
with ``hub.bundle.required``. Every decision record's ``policy.bundle`` is the bundle revision.

:func:`load_policy` never raises. Any invalid or unreadable layer yields an invalid
:class:`EffectivePolicy` that stops every decision with ``policy.invalid``.

The hook process loads the policy for every shell command, and importing :mod:`tomllib` alone
costs more than our budget, so the validated, merged policy is cached as JSON under
``$DOMESTIQUE_HOME/cache/``. The cache key covers every layer file that exists (path and
sha256 of its bytes) and what the reason-code registry is built from (path, size, mtime, ctime
and inode of ``reason_codes.py``, ``*/codes.py`` and the detection rule files): any change to
them, or a new project file, is a miss. The cache carries an HMAC under a key derived from the
install key, so a hand-edited cache is not trusted. A cache that cannot be read, verified,
parsed or written is ignored: the policy is then read from the TOML files.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from domestique import frozen_class
from domestique.digest import compare_digest, hmac_sha256, sha256
from domestique.frozen_class import dataclass
from domestique.keys import domestique_home, ensure_private_dir
from domestique.policy._locate import Positions, line_col_of_offset
from domestique.policy._model import (
    ENFORCE,
    DecisionContext,
    EffectivePolicy,
    LayerInfo,
    PolicySettings,
    Rule,
)
from domestique.policy._validate import PROJECT, LayerResult
from domestique.records import JUDGING_COMPONENTS, Action, Actor, Component, PolicyRef

TYPE_CHECKING = False  # not typing's: a hook deciding in-process does not load typing
if TYPE_CHECKING:
    from typing import Any

_DEFAULT_SETTINGS = {"unmatched": Action.DENY, "unknown_tool": Action.ASK}

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
SYSTEM_POLICY = Path("/etc/domestique/policy.toml")
USER_POLICY_NAME = "policy.toml"
PROJECT_POLICY = Path(".domestique") / "policy.toml"
CACHE_FORMAT = 3
ORGANISATION = "organisation"
HUB_DIR = "hub"
HUB_ENDPOINT = "endpoint.json"
HUB_BUNDLE = "bundle.json"
BUNDLE_REQUIRED = "hub.bundle.required"
_TIGHTEN_ONLY_UNDER_ORG = frozenset({"system", "user", "file"})
_CACHE_KEY_LABEL = b"domestique policy cache v1"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_REGISTRY_FILES = (
    _PACKAGE_DIR / "reason_codes.py",
    *(_PACKAGE_DIR / sub / "codes.py" for sub in ("detect", "guard", "proxy", "hooks", "hub")),
    # The validator and model decide what a valid policy is: a change there (an upgrade in an
    # editable install) must not be served a policy cached under the old rules.
    _PACKAGE_DIR / "policy" / "_validate.py",
    _PACKAGE_DIR / "policy" / "_model.py",
)

_DETECT_RULES_DIR = _PACKAGE_DIR / "detect" / "rules"


@dataclass(frozen=True, slots=True)
class LayerFile:
    """A layer to read: its kind, its path, and whether it must exist (``--policy``)."""

    kind: str
    path: Path
    required: bool = False
    signed: bool = False  # a signed bundle envelope (the organisation layer), not TOML


def project_policy_files(project_dir: Path) -> list[Path]:
    """``.domestique/policy.toml`` in ``project_dir`` and each parent, outermost first."""
    found: list[Path] = []
    try:
        start = project_dir.expanduser().resolve()
    except (OSError, RuntimeError):
        start = project_dir.absolute()
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_POLICY
        # Anything there is a layer: a directory, FIFO or dangling link is an error that
        # denies, not a file to skip (the project's tightening must not vanish silently).
        if os.path.lexists(candidate):
            found.append(candidate)
    found.reverse()
    return found


def discover_layers(
    *,
    home: Path,
    project_dir: Path | None,
    policy_file: Path | None,
    system_file: Path | None,
) -> list[LayerFile]:
    """Every layer that applies, in merge order. Optional files that do not exist are skipped."""
    layers: list[LayerFile] = []
    try:  # scandir and strings: this runs on every decision
        with os.scandir(BUILTIN_DIR) as entries:
            names = sorted(
                e.name for e in entries if e.name.endswith(".toml") and e.name != ".toml"
            )
        builtin = [BUILTIN_DIR / name for name in names]
    except OSError:
        builtin = []
    layers += [LayerFile("builtin", p, required=True) for p in builtin]
    if system_file is not None and os.path.exists(system_file):
        layers.append(LayerFile("system", system_file))
    user = home / USER_POLICY_NAME
    if os.path.exists(user):
        layers.append(LayerFile("user", user))
    if policy_file is not None:
        layers.append(LayerFile("file", Path(os.path.abspath(policy_file)), required=True))
    organisation = _organisation_layer(home)
    if organisation is not None:
        layers.append(organisation)
    if project_dir is not None:
        layers += [LayerFile(PROJECT, p) for p in project_policy_files(project_dir)]
    return layers


def _organisation_layer(home: Path) -> LayerFile | None:
    """The signed bundle, on an enrolled endpoint that has one or whose organisation requires
    one (then a missing bundle is an error that denies)."""
    hub = home / HUB_DIR
    bundle = hub / HUB_BUNDLE
    if os.path.lexists(bundle):
        return LayerFile(ORGANISATION, bundle, required=True, signed=True)
    endpoint = hub / HUB_ENDPOINT
    if not os.path.lexists(endpoint):
        return None
    try:
        required = bool(json.loads(read_policy_bytes(endpoint)).get("require_bundle", False))
    except (OSError, ValueError, AttributeError):
        required = True  # an unreadable enrolment cannot tell us a bundle is optional
    return LayerFile(ORGANISATION, bundle, required=True, signed=True) if required else None


# -- reading one layer ---------------------------------------------------------------------


def _toml_error_position(text: str, message: str) -> tuple[int, int, str]:
    """tomllib (3.11) puts the position into the message: ``… (at line 3, column 10)``."""
    import re

    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if m:
        return int(m.group(1)), int(m.group(2)), message[: m.start()]
    m = re.search(r"\s*\(at end of document\)\s*$", message)
    if m:
        line, col = line_col_of_offset(text, len(text))
        return line, col, message[: m.start()] + " (at end of file)"
    return 1, 1, message


MAX_POLICY_BYTES = 1024 * 1024  # far above any real policy; more is a mistake or an attack


def read_policy_bytes(path: Path) -> bytes:
    """The bytes of a policy file: a regular file of at most :data:`MAX_POLICY_BYTES`.

    ``/dev/zero``, a FIFO or a huge file would otherwise hang or exhaust every decision that
    loads the policy. Raises OSError (unreadable) or ValueError (not a policy-sized file).
    """
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file; a policy must be a regular TOML file")
        data = fh.read(MAX_POLICY_BYTES + 1)
    if len(data) > MAX_POLICY_BYTES:
        raise ValueError(f"policy file larger than {MAX_POLICY_BYTES} bytes")
    return data


def read_layer(layer: LayerFile, registered: Sequence[str]) -> LayerResult | None:
    """Parse and validate one layer; None when an optional file has gone away."""
    name = str(layer.path)
    try:
        raw = read_policy_bytes(layer.path)
    except FileNotFoundError:
        if not layer.required:
            return None
        return LayerResult(errors=[f"{name}:1:1: policy file not found"])
    except OSError as exc:
        return LayerResult(errors=[f"{name}:1:1: cannot read policy file: {exc.strerror}"])
    except ValueError as exc:
        return LayerResult(errors=[f"{name}:1:1: {exc}"])
    return _read_text(raw, layer, name, registered)


def _read_text(raw: bytes, layer: LayerFile, name: str, registered: Sequence[str]) -> LayerResult:
    import tomllib

    from domestique.policy._locate import locate
    from domestique.policy._validate import LayerValidator

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8", "replace")
        line, col = line_col_of_offset(good, len(good))
        return LayerResult(errors=[f"{name}:{line}:{col}: not UTF-8 text"])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        lineno = getattr(exc, "lineno", None)
        colno = getattr(exc, "colno", None)
        if isinstance(lineno, int) and isinstance(colno, int):
            msg = str(getattr(exc, "msg", str(exc)))
            line, col = lineno, colno
        else:
            line, col, msg = _toml_error_position(text, str(exc))
        if "overwrite" in msg:
            # tomllib points past the value (often at the end of the file): name the key.
            dups = locate(text).duplicates
            if dups:
                path, (line, col) = dups[0]
                msg = f"{msg}: key {'.'.join(str(p) for p in path)!r} is set twice"
        return LayerResult(errors=[f"{name}:{line}:{col}: TOML syntax error: {msg}"])
    positions: Positions = locate(text)
    return LayerValidator(registered).validate(
        data, kind=layer.kind, filename=name, positions=positions
    )


def read_organisation(layer: LayerFile, registered: Sequence[str]) -> tuple[LayerResult, int]:
    """The signed organisation layer: verified against the pinned keys, then validated.

    Returns the layer and the bundle revision. Any doubt is an error (which denies): no
    bundle where one is required, an unreadable enrolment, a bundle that no longer verifies.
    """
    from domestique.hub.bundle import BundleRejected, verify_bundle

    name = str(layer.path)
    try:
        raw = read_policy_bytes(layer.path)
    except FileNotFoundError:
        return LayerResult(
            errors=[
                f"{name}:1:1: {BUNDLE_REQUIRED}: the organisation requires a signed policy "
                "bundle and none is installed; run 'domestique sync'"
            ]
        ), 0
    except (OSError, ValueError) as exc:
        return LayerResult(errors=[f"{name}:1:1: cannot read the policy bundle: {exc}"]), 0
    try:
        endpoint = json.loads(read_policy_bytes(layer.path.parent / HUB_ENDPOINT))
        pinned = tuple(str(k) for k in endpoint["signing_keys"])
        org = str(endpoint["org"])
    except (OSError, ValueError, KeyError, TypeError):
        return LayerResult(errors=[f"{name}:1:1: the enrolment ({HUB_ENDPOINT}) is unreadable"]), 0
    try:
        bundle = verify_bundle(raw, pinned=pinned, org=org)
    except BundleRejected as exc:
        return LayerResult(errors=[f"{name}:1:1: {exc.code}: {exc.message}"]), 0
    label = f"{name} (organisation policy, revision {bundle.revision})"
    return _read_text(bundle.policy.encode("utf-8"), layer, label, registered), bundle.revision


# -- merging ---------------------------------------------------------------------------------


def _covered_contexts(rule: Rule) -> Iterator[DecisionContext]:
    components = sorted(rule.match.components) or [c.value for c in JUDGING_COMPONENTS]
    actors = sorted(rule.match.actors) or [a.value for a in Actor]
    agent = min(rule.match.agents) if rule.match.agents else None
    tool = min(rule.match.tools) if rule.match.tools else None
    for component in components:
        for actor in actors:
            yield DecisionContext(Component(component), Actor(actor), agent=agent, tool=tool)


def merge_layers(
    loaded: Sequence[tuple[LayerFile, LayerResult]], registered: Sequence[str]
) -> EffectivePolicy:
    """Merge validated layers in order; project layers may only add stricter rules."""
    infos = [LayerInfo(layer.kind, str(layer.path)) for layer, _ in loaded]
    errors = [e for _, result in loaded for e in result.errors]
    if errors:
        return EffectivePolicy.invalid(errors, infos)
    settings: dict[str, Action] = {}
    mode = ENFORCE
    base: dict[str, Rule] = {}
    project: dict[str, Rule] = {}
    tighten_only = {PROJECT}
    if any(layer.kind == ORGANISATION for layer, _ in loaded):
        tighten_only |= _TIGHTEN_ONLY_UNDER_ORG
    # Tighten-only layers go last, so their rules and settings are judged against the whole
    # base (the organisation's rules included), whatever their place in the order.
    ordered = [x for x in loaded if x[0].kind not in tighten_only]
    ordered += [x for x in loaded if x[0].kind in tighten_only]
    for layer, result in ordered:
        if layer.kind in tighten_only:
            for rule in result.rules:
                if rule.id in base:
                    errors.append(
                        f"{rule.source}:1: a {layer.kind} policy cannot replace rule "
                        f"{rule.id!r} of the {base[rule.id].layer} policy; give the stricter "
                        "rule its own id"
                    )
                project.pop(rule.id, None)
                project[rule.id] = rule
            for key, action in result.settings.items():
                # Under an organisation layer, lower layers may only make a setting stricter.
                if action.severity > settings.get(key, _DEFAULT_SETTINGS[key]).severity:
                    settings[key] = action
            if result.mode == ENFORCE:
                mode = ENFORCE  # enforcing is stricter; monitor from a lower layer is ignored
            continue
        settings.update(result.settings)
        mode = result.mode or mode
        for rule in result.rules:
            earlier = base.pop(rule.id, None)  # a later layer's rule replaces it, ranks later
            if earlier is not None and layer.kind == "builtin" and earlier.layer == "builtin":
                # Builtin files are written by different components: a shared id is a clash,
                # not an override.
                errors.append(
                    f"{rule.source}:1: rule id {rule.id!r} is already defined at {earlier.source}"
                )
            base[rule.id] = rule
    policy_settings = PolicySettings(
        unmatched=settings.get("unmatched", Action.DENY),
        unknown_tool=settings.get("unknown_tool", Action.ASK),
        mode=mode,
    )
    without_project = EffectivePolicy(
        settings=policy_settings, rules=list(base.values()), layers=infos
    )
    for rule in project.values():
        message = _loosens(rule, without_project, registered)
        if message:
            errors.append(message)
    if errors:
        return EffectivePolicy.invalid(errors, infos)
    if not project:
        return without_project
    return EffectivePolicy(
        settings=policy_settings,
        rules=list(base.values()),
        project_rules=list(project.values()),
        layers=infos,
    )


def _loosens(rule: Rule, base: EffectivePolicy, registered: Sequence[str]) -> str | None:
    """A message when the project rule asks for less than the base policy gives somewhere."""
    for code in registered:
        if rule.specificity(code) is None:
            continue
        for ctx in _covered_contexts(rule):
            host = rule.match.hosts[0] if rule.match.hosts else None
            path = rule.match.paths[0] if rule.match.paths else None
            ctx_one = DecisionContext(
                ctx.component,
                ctx.actor,
                agent=ctx.agent,
                tool=ctx.tool,
                hosts=(host,) if host else (),
                paths=(path,) if path else (),
            )
            given = base.policy_action_for(code, ctx_one)
            if rule.action.severity < given.severity:
                return (
                    f"{rule.source}:1: a {rule.layer} policy may only tighten: rule {rule.id!r} "
                    "sets "
                    f"{rule.action.value!r} for {code} ({ctx.component.value}, {ctx.actor.value})"
                    f" where the policy already says {given.value!r}"
                )
    return None


# -- the cache -------------------------------------------------------------------------------


def _stat_key(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _registry_files() -> list[str]:
    """The files the reason-code registry is built from (detection rule ids are codes too).
    Plain strings and ``scandir``: this runs on every decision."""
    files = [str(p) for p in _REGISTRY_FILES]
    with contextlib.suppress(OSError), os.scandir(_DETECT_RULES_DIR) as entries:
        files += sorted(e.path for e in entries if e.is_file())
    return files


# path -> (device, inode, size, mtime_ns, ctime_ns, when hashed (ns), sha256): a long-lived
# process (the hook daemon) hashes a layer file again only when its stat changed.
_HASHED: dict[str, tuple[int, int, int, int, int, int, str]] = {}
# A file timestamp is taken from a coarse clock (a few ms on Linux, 1-2 s on some file systems):
# a second write within that tick leaves the same stat. A hash is reused only for a file whose
# last change (ctime, which no one can set back) came this long before the hash was taken.
_RACY_NS = 2_000_000_000


def _content_key(path: Path) -> str | None:
    """sha256 of a layer file: policy files are small, and timestamps can be too coarse to
    tell two quick edits apart, so a stat only stands in for the hash of a file that had not
    changed for :data:`_RACY_NS` when it was hashed (else it is read and hashed again)."""
    try:
        st = os.stat(path)
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        known = _HASHED.get(str(path))
        if known is not None and known[:5] == stamp and st.st_ctime_ns + _RACY_NS < known[5]:
            return known[6]
        hashed_at = time.time_ns()
        data = read_policy_bytes(path)
        digest = sha256(data).hexdigest()
        after = os.stat(path)
        if (after.st_dev, after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (
            stamp
        ):
            if len(_HASHED) >= 256:
                _HASHED.clear()
            _HASHED[str(path)] = (*stamp, hashed_at, digest)
        return digest
    except (OSError, ValueError):
        return None


def _cache_key(layers: Sequence[LayerFile], home: Path | None = None) -> tuple[str, str]:
    """(file name for this set of layer paths, key over their content stamps)."""
    from domestique import __version__

    names = [[layer.kind, str(layer.path)] for layer in layers]
    stamps = {
        "format": CACHE_FORMAT,
        "version": __version__,
        "layers": [[layer.kind, str(layer.path), _content_key(layer.path)] for layer in layers],
        "registry": [_stat_key(p) for p in _registry_files()],
        # The pinned keys and organisation decide whether the bundle layer verifies.
        "enrolment": _content_key(home / HUB_DIR / HUB_ENDPOINT) if home else None,
    }
    name = sha256(json.dumps(names).encode()).hexdigest()[:24]
    key = sha256(json.dumps(stamps, sort_keys=True).encode()).hexdigest()
    return name, key


def _from_cache(data: dict[str, Any]) -> EffectivePolicy:
    layers = [LayerInfo(str(x["kind"]), str(x["path"])) for x in data["layers"]]
    if data["errors"]:
        return EffectivePolicy.invalid([str(e) for e in data["errors"]], layers)
    settings = PolicySettings(
        unmatched=Action(data["settings"]["unmatched"]),
        unknown_tool=Action(data["settings"]["unknown_tool"]),
        mode=str(data["settings"].get("mode", ENFORCE)),
    )
    rules = [Rule.from_json(r, source=str(r.get("source", ""))) for r in data["rules"]]
    prules = [Rule.from_json(r, source=str(r.get("source", ""))) for r in data["project_rules"]]
    bundle = data["ref"].get("bundle")
    ref = PolicyRef(
        str(data["ref"]["id"]),
        str(data["ref"]["sha256"]),
        bundle=int(bundle) if bundle is not None else None,
    )
    return EffectivePolicy(
        settings=settings, rules=rules, project_rules=prules, layers=layers, ref=ref
    )


def _to_cache(policy: EffectivePolicy, key: str) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT,
        "key": key,
        "layers": [x.to_json() for x in policy.layers],
        "errors": list(policy.errors),
        "ref": policy.ref.to_json(),
        "settings": policy.settings.to_json(),
        "rules": [{**r.to_json(), "source": r.source} for r in policy.rules],
        "project_rules": [{**r.to_json(), "source": r.source} for r in policy.project_rules],
    }


def _cache_mac_key(home: Path) -> bytes:
    """The cache's HMAC key, derived from the install key (separate from fingerprints)."""
    from domestique.keys import install_key

    return hmac_sha256(install_key(home), _CACHE_KEY_LABEL)


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac_sha256(key, body).hex().encode("ascii")


def _read_cache(path: Path, key: str, mac_key: bytes) -> EffectivePolicy | None:
    """The cached policy if its HMAC and key match; None for any doubt."""
    try:
        raw = path.read_bytes()
        mac, _, body = raw.partition(b"\n")
        if not compare_digest(mac, _mac(mac_key, body)):
            return None
        data = json.loads(body)
        if data.get("format") != CACHE_FORMAT or data.get("key") != key:
            return None
        return _from_cache(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_cache(path: Path, policy: EffectivePolicy, key: str, mac_key: bytes) -> None:
    """First line: HMAC of the rest; then the JSON. Written to a temp file, then renamed."""
    try:
        ensure_private_dir(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        body = json.dumps(_to_cache(policy, key), sort_keys=True).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_mac(mac_key, body) + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        return


# -- entry point -------------------------------------------------------------------------------


def _registered_codes() -> tuple[list[str], str | None]:
    try:
        from domestique.reason_codes import registry

        return sorted(registry()), None
    except Exception as exc:  # noqa: BLE001 - a broken registry makes the policy invalid
        return [], f"reason-code registry unavailable ({type(exc).__name__}); failing closed"


def build_policy(layers: Sequence[LayerFile]) -> EffectivePolicy:
    """Read, validate and merge ``layers`` (no cache)."""
    registered, problem = _registered_codes()
    infos = [LayerInfo(layer.kind, str(layer.path)) for layer in layers]
    if problem:
        return EffectivePolicy.invalid([f"{BUILTIN_DIR}:1:1: {problem}"], infos)
    if not any(layer.kind == "builtin" for layer in layers):
        return EffectivePolicy.invalid([f"{BUILTIN_DIR}:1:1: no builtin policy files"], infos)
    loaded: list[tuple[LayerFile, LayerResult]] = []
    revision: int | None = None
    for layer in layers:
        if layer.signed:
            result, revision = read_organisation(layer, registered)
            loaded.append((layer, result))
            continue
        found = read_layer(layer, registered)
        if found is not None:
            loaded.append((layer, found))
    policy = merge_layers(loaded, registered)
    if revision and policy.valid:
        policy.ref = frozen_class.replace(policy.ref, bundle=revision)
    return policy


# In a long-lived process (the hook daemon, the proxy) the policy last loaded for each set of
# layers, under the same content key as the file cache: a request whose layers did not change
# skips reading, checking and rebuilding the cached policy (a quarter of a hook decision).
_MEMO: dict[str, tuple[str, EffectivePolicy]] = {}
_MEMO_SIZE = 64


def load_policy(
    *,
    home: Path | None = None,
    project_dir: Path | None = None,
    policy_file: Path | None = None,
    system_file: Path | None = SYSTEM_POLICY,
    use_cache: bool = True,
) -> EffectivePolicy:
    """The effective policy for this user, project and explicit file. Never raises.

    ``project_dir`` None reads no project files. ``system_file`` is a parameter so tests can
    point it elsewhere; the command line always uses ``/etc/domestique/policy.toml``.
    """
    try:
        home = home if home is not None else domestique_home()
        layers = discover_layers(
            home=home, project_dir=project_dir, policy_file=policy_file, system_file=system_file
        )
        if not use_cache:
            return build_policy(layers)
        try:
            mac_key = _cache_mac_key(home)
        except OSError:  # no usable install key: no cache, read the TOML files
            return build_policy(layers)
        name, key = _cache_key(layers, home)
        cache_path = home / "cache" / f"policy-{name}.json"
        memo = _MEMO.get(str(cache_path))
        if memo is not None and memo[0] == key:
            return memo[1]  # the same layers, byte for byte: what the file cache would give
        policy = _read_cache(cache_path, key, mac_key)
        if policy is None:
            policy = build_policy(layers)
            _write_cache(cache_path, policy, key, mac_key)
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[str(cache_path)] = (key, policy)
        return policy
    except Exception as exc:  # noqa: BLE001 - loading must never raise: it fails closed
        where = str(policy_file) if policy_file is not None else str(BUILTIN_DIR)
        return EffectivePolicy.invalid(
            [f"{where}:1:1: policy could not be loaded ({type(exc).__name__}); failing closed"]
        )
