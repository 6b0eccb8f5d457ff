"""Firewall proxy benchmarks: the pure pipeline in-process, and bodies for the wrk load test.

    python bench/bench_proxy.py core            # inspect_request on 10 KB and 100 KB bodies
    python bench/bench_proxy.py breakdown       # the cold path stage by stage
    python bench/bench_proxy.py joincheck       # one joined scan vs each field scanned alone
    python bench/bench_proxy.py seams OLD.py    # "next turn" at 100 KB: this pipeline vs OLD.py
    python bench/bench_proxy.py bodies DIR      # write body-10k.json / body-100k.json for wrk
    python bench/bench_proxy.py nginx-answer    # the fixed Anthropic answer nginx returns

Bodies are realistic and secret-free: an Anthropic Messages request with a system prompt, user
text, tool_use calls and tool_result blocks holding real source code (files of Python's own
standard library, read at run time; nothing copied into the repository). Every field is scanned.
See bench/run_proxy_load.sh for the wrk load test against nginx, and docs/benchmarks.md.
"""

from __future__ import annotations

import json
import statistics
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

SOURCES = (
    "textwrap.py",
    "colorsys.py",
    "bisect.py",
    "shlex.py",
    "graphlib.py",
    "fnmatch.py",
    "glob.py",
    "heapq.py",
    "queue.py",
    "sched.py",
)


def _code_chunks() -> list[tuple[str, str]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for name in SOURCES:
        path = stdlib / name
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            # Author e-mail lines are personal data: keep the bodies finding-free.
            out.append((name, "\n".join(ln for ln in text.splitlines() if "@" not in ln)))
    return out


def make_body(target_bytes: int) -> dict[str, Any]:
    """A Claude Code-like request of about ``target_bytes`` of JSON, without secrets."""
    chunks = _code_chunks()
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": "Please refactor the helpers in this project and run the tests.",
        }
    ]
    i = 0
    while len(json.dumps({"messages": messages})) < target_bytes:
        name, code = chunks[i % len(chunks)]
        i += 1
        room = target_bytes - len(json.dumps({"messages": messages}))
        snippet = code[: max(200, min(len(code), room - 400))]
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Let me read {name}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i:04d}",
                        "name": "Read",
                        "input": {"file_path": f"/home/dev/project/lib/{name}", "limit": 400},
                    },
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i:04d}", "content": snippet},
                ],
            }
        )
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": [
            {
                "type": "text",
                "text": "You are a careful coding agent working in a Python repository.",
            }
        ],
        "tools": [
            {
                "name": "Read",
                "description": "Read a file from the local filesystem.",
                "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
            }
        ],
        "messages": messages,
    }


NGINX_ANSWER = {
    "id": "msg_bench",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Done: the helpers are refactored and the tests pass."}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 2500, "output_tokens": 12},
}


class _Bound:
    """The built-in policy as the pipeline asks it, for requests to Anthropic."""

    def __init__(self) -> None:
        from domestique.policy import DecisionContext, load_policy
        from domestique.records import Component

        self.policy = load_policy()
        self.ctx = DecisionContext(Component.PROXY, hosts=("api.anthropic.com",))

    def action_for(self, code: str) -> Any:
        return self.policy.action_for(code, self.ctx)

    def decide(self, reasons: Any) -> Any:
        return self.policy.decide(reasons, self.ctx)


def _parts() -> tuple[Any, bytes, Any, Any]:
    """(policy, install key, scanner, the Messages route): what inspect_request is given."""
    from domestique.detect import default_scanner
    from domestique.keys import install_key
    from domestique.proxy.routes import Route, classify

    route = classify("POST", "/v1/messages", {})
    assert isinstance(route, Route)
    return _Bound(), install_key(), default_scanner(), route


def bench_core(repeat: int = 200) -> None:
    from domestique.keys import Fingerprinter
    from domestique.proxy.pipeline import ScanCache, inspect_request
    from domestique.redact import PlaceholderMaker

    policy, key, scanner, route = _parts()

    def run(raw: bytes, cache: ScanCache | None) -> Any:
        return inspect_request(
            route,
            raw,
            content_encoding="",
            scanner=scanner,
            policy=policy,
            maker=PlaceholderMaker(key),
            fingerprinter=Fingerprinter(key),
            cache=cache,
        )

    for size in (10_000, 100_000):
        body = make_body(size)
        n = repeat if size < 50_000 else repeat // 4
        # "cold": every field new (no cache); "next turn": the history was scanned before and
        # only the last tool result is new (what an agent's next request looks like); "same":
        # the identical request again (every field cached).
        for label in ("cold", "next turn", "same"):
            cache = None if label == "cold" else ScanCache()
            if cache is not None:
                run(json.dumps(body).encode(), cache)
            last = body["messages"][-1]["content"][0]
            base = last["content"]
            times = []
            for i in range(n):
                if label == "next turn":
                    last["content"] = f"# turn {i}\n" + base
                raw = json.dumps(body).encode()
                t0 = time.perf_counter()
                ins = run(raw, cache)
                times.append(time.perf_counter() - t0)
            last["content"] = base
            assert ins.body is not None, [r.code for r in ins.reasons]
            times.sort()
            print(
                f"core {len(raw):>7} B {label:<9} fields {ins.fields_scanned:>4} "
                f"action {ins.action.value:<6} p50 {statistics.median(times) * 1000:6.2f} ms  "
                f"p99 {times[max(0, int(len(times) * 0.99) - 1)] * 1000:6.2f} ms"
            )


def bench_breakdown(repeat: int = 60) -> None:
    """Where the cold time of one request goes, stage by stage (medians, in-process)."""
    import json as std_json

    import orjson

    from domestique.audit import record_decision
    from domestique.detect import default_scanner
    from domestique.keys import domestique_home
    from domestique.proxy.body import BodyLimits, decode_body, parse_json_object
    from domestique.proxy.fields import extract_fields
    from domestique.proxy.pipeline import _SEPARATOR
    from domestique.records import (
        Action,
        Component,
        DecisionRecord,
        PolicyRef,
        Subject,
    )

    scanner = default_scanner()
    home = domestique_home()

    def med(fn: Any) -> float:
        fn()
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1000

    record = DecisionRecord(
        component=Component.PROXY,
        action=Action.ALLOW,
        reasons=(),
        subject=Subject(user="bench", host="bench", agent="claude-code", markers=()),
        object={"provider": "anthropic", "route": "anthropic.messages", "bytes_in": 100_000},
        policy=PolicyRef(id="bench", sha256="0" * 64),
        engine={"proxy": "1"},
        latency_us=1,
    )
    for size in (10_000, 100_000):
        raw = std_json.dumps(make_body(size)).encode()
        body = parse_json_object(raw)
        ex = extract_fields(body, 64)
        joined = _SEPARATOR.join(f.text for f in ex.fields)
        rows = {
            "decode + JSON parse (stdlib)": med(
                lambda: parse_json_object(decode_body(raw, "", BodyLimits()))  # noqa: B023
            ),
            "JSON parse (orjson, not used)": med(lambda: orjson.loads(raw)),  # noqa: B023
            "field extraction": med(lambda: extract_fields(body, 64)),  # noqa: B023
            "join fields": med(lambda: _SEPARATOR.join(f.text for f in ex.fields)),  # noqa: B023
            "detection scan (one call)": med(lambda: scanner.scan(joined)),  # noqa: B023
            "JSON encode (orjson, used)": med(lambda: orjson.dumps(body)),  # noqa: B023
            "JSON encode (stdlib, before)": med(
                lambda: std_json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()  # noqa: B023
            ),
            "audit record append": med(lambda: record_decision(record, home=home)),
        }
        print(f"breakdown {len(raw)} B, {ex.scanned} fields, {len(joined)} chars scanned")
        for name, ms in rows.items():
            print(f"  {name:<32} {ms:7.3f} ms")


def bench_joincheck() -> None:
    """The one joined scan per request against scanning each field alone.

    Every example of every built-in rule is split at up to 40 points into two fields; the
    findings of the joined scan (mapped back to fields) are compared with each field scanned
    on its own. For a field-alone finding the joined scan lacks: "recoded" when the same span
    is found under another code, "wider" when joined findings cover every character of it,
    "fewer" otherwise; "extra" counts findings only the joined scan has. A cached per-field
    answer redacts at least what the field's own scan would iff "fewer" is 0.
    """
    import collections
    import tomllib

    import domestique.detect
    from domestique.detect import default_scanner
    from domestique.proxy.pipeline import _SEPARATOR, _locate

    scanner = default_scanner()
    rules_dir = Path(domestique.detect.__file__).parent / "rules"
    examples = [
        (rule["id"], example)
        for path in sorted(rules_dir.glob("*.toml"))
        for rule in tomllib.loads(path.read_text()).get("rules", [])
        for example in rule.get("examples", [])
    ]

    def alone(fields: list[str]) -> set[tuple[str, int, int, int]]:
        return {(h.code, i, h.start, h.end) for i, f in enumerate(fields) for h in scanner.scan(f)}

    def joined(fields: list[str]) -> set[tuple[str, int, int, int]]:
        starts, lengths, pos = [], [], 0
        for f in fields:
            starts.append(pos)
            lengths.append(len(f))
            pos += len(f) + len(_SEPARATOR)
        found = scanner.scan(_SEPARATOR.join(fields))
        return {(h.code, h.field_index, h.start, h.end) for h in _locate(found, starts, lengths)}

    counts: collections.Counter[str] = collections.Counter()
    for _rule, example in examples:
        step = max(1, len(example) // 40)
        for k in range(1, len(example), step):
            fields = [example[:k], example[k:]]
            counts["splits"] += 1
            a, b = alone(fields), joined(fields)
            for _code, i, start, end in a - b:
                same_span = any(x[1:] == (i, start, end) for x in b)
                # Covered: every character of the span is inside some joined finding.
                inside = [(x[2], x[3]) for x in b if x[1] == i]
                covered = all(any(lo <= c < hi for lo, hi in inside) for c in range(start, end))
                counts["recoded" if same_span else "wider" if covered else "fewer"] += 1
            counts["extra"] += len(b - a)
    print(f"joincheck over {len(examples)} rule examples: {dict(counts)}")


def bench_seams(old_file: str, rounds: int = 400) -> None:
    """ "next turn" at 100 KB, the pipeline of this tree against another ``pipeline.py`` (say,
    a checkout of an earlier commit), called alternately in one process: medians and ratio.
    A third arm runs this tree's pipeline without the seam scan: the floor it can reach."""
    import importlib.util

    from domestique.keys import Fingerprinter
    from domestique.proxy import pipeline as new
    from domestique.redact import PlaceholderMaker

    spec = importlib.util.spec_from_file_location("pipeline_old", old_file)
    assert spec is not None
    assert spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["pipeline_old"] = old  # dataclasses look their module up
    spec.loader.exec_module(old)
    policy, key, scanner, route = _parts()
    body = make_body(100_000)
    arms: dict[str, Any] = {"old": old, "new": new, "no seams": new}
    caches = {name: module.ScanCache() for name, module in arms.items()}
    seam_hits = new._seam_hits

    def run(name: str, raw: bytes) -> Any:
        new._seam_hits = (lambda *a, **k: []) if name == "no seams" else seam_hits
        try:
            return arms[name].inspect_request(
                route,
                raw,
                content_encoding="",
                scanner=scanner,
                policy=policy,
                maker=PlaceholderMaker(key),
                fingerprinter=Fingerprinter(key),
                cache=caches[name],
            )
        finally:
            new._seam_hits = seam_hits

    for name in arms:
        run(name, json.dumps(body).encode())
    last = body["messages"][-1]["content"][0]
    base = last["content"]
    times: dict[str, list[float]] = {name: [] for name in arms}
    names = list(arms)
    for i in range(rounds):
        last["content"] = f"# turn {i}\n" + base
        raw = json.dumps(body).encode()
        order = names[i % 3 :] + names[: i % 3]
        for name in order:
            t0 = time.perf_counter()
            run(name, raw)
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(ts) * 1000 for name, ts in times.items()}
    for name, value in med.items():
        print(f"seams {len(raw):>7} B next turn {name:<9} p50 {value:6.3f} ms")
    floor = med["no seams"]
    print(f"seams new/old {med['new'] / med['old']:.2f}  new/no-seams {med['new'] / floor:.2f}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] == "core":
        bench_core()
        return 0
    if argv[0] == "breakdown":
        bench_breakdown()
        return 0
    if argv[0] == "joincheck":
        bench_joincheck()
        return 0
    if argv[0] == "seams" and len(argv) > 1:
        bench_seams(argv[1])
        return 0
    if argv[0] == "bodies":
        out = Path(argv[1])
        out.mkdir(parents=True, exist_ok=True)
        for label, size in (("10k", 10_000), ("100k", 100_000)):
            (out / f"body-{label}.json").write_text(json.dumps(make_body(size)))
        return 0
    if argv[0] == "nginx-answer":
        sys.stdout.write(json.dumps(NGINX_ANSWER))
        return 0
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
