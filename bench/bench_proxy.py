"""Firewall proxy benchmarks: the pure pipeline in-process, and bodies for the wrk load test.

    python bench/bench_proxy.py core            # inspect_request on 10 KB and 100 KB bodies
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


def bench_core(repeat: int = 200) -> None:
    from domestique.detect import default_scanner
    from domestique.keys import Fingerprinter, install_key
    from domestique.policy import DecisionContext, load_policy
    from domestique.proxy.pipeline import inspect_request
    from domestique.proxy.routes import Route, classify
    from domestique.records import Component
    from domestique.redact import PlaceholderMaker

    policy = load_policy()
    ctx = DecisionContext(Component.PROXY, hosts=("api.anthropic.com",))

    class Bound:
        def action_for(self, code: str) -> Any:
            return policy.action_for(code, ctx)

        def decide(self, reasons: Any) -> Any:
            return policy.decide(reasons, ctx)

    from domestique.proxy.pipeline import ScanCache

    key = install_key()
    scanner = default_scanner()
    route = classify("POST", "/v1/messages", {})
    assert isinstance(route, Route)

    def run(raw: bytes, cache: ScanCache | None) -> Any:
        return inspect_request(
            route,
            raw,
            content_encoding="",
            scanner=scanner,
            policy=Bound(),
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


def main(argv: list[str]) -> int:
    if not argv or argv[0] == "core":
        bench_core()
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
