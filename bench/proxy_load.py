"""Load test of the firewall proxy with unique bodies: nginx as the upstream, wrk as the client.

    apt-get update && apt-get install -y nginx wrk
    python bench/proxy_load.py                      # the default `domestique proxy`, one table
    python bench/proxy_load.py --duration 5 --rounds 3 \\
        --config one=DOMESTIQUE_PROXY_WORKERS=1 --config default=   # A/B, alternated per round

Every request body is different: wrk's Lua ``request()`` puts a counter into the text of the last
user message of a realistic Anthropic request (tool results holding real source code, built by
``bench/bench_proxy.py``), so only the conversation history repeats, as with a real agent. Each
round runs, for each config in turn (A/B alternated in the same run, the order reversed every
other round): for 10 KB and 100 KB bodies, nginx direct and the proxy at 1 connection (latency)
and at 50 connections (throughput). A config is ``NAME=ENV=VALUE,ENV=VALUE`` (empty: the default
`domestique proxy`, as installed, no switch). The table gives medians over rounds: requests/s,
added p50 / p99 (proxy minus direct, same round), the proxy's CPU time per request (user + system
of the proxy and its workers from /proc, which a loaded machine inflates far less than wall-clock
latency), non-2xx answers and socket errors, RSS before and after. Then a memory phase (first
config: 10 KB, 50 connections, ``--mem-requests``, RSS sampled) and a check of the audit log
(``domestique audit verify`` and one record per request). Everything listens on 127.0.0.1.
Figures: docs/benchmarks.md ("Firewall proxy").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NGINX_PORT = 18080
PROXY_PORT = 18788
TAG = "@@DQ_TAG@@"
SIZES = (("10k", 10_000), ("100k", 100_000))

LUA = r"""
local f = io.open(os.getenv("BODY"), "rb")
local body = f:read("*a")
f:close()
local cut = body:find("@@DQ_TAG@@", 1, true)
local head, tail = body:sub(1, cut - 1), body:sub(cut + 10)
local counter = 0
local hdrs = {
  ["content-type"] = "application/json",
  ["x-api-key"] = "bench-key-not-real",
  ["anthropic-version"] = "2023-06-01",
}
request = function()
  counter = counter + 1
  return wrk.format("POST", "/v1/messages", hdrs, head .. "step " .. counter .. tail)
end
"""


def write_bodies(work: Path) -> None:
    from bench_proxy import make_body

    for label, size in SIZES:
        body = make_body(size)
        last = body["messages"][-1]
        assert last["role"] == "user"
        assert isinstance(last["content"], list)
        last["content"].append({"type": "text", "text": f"Now go on with {TAG} of the plan."})
        (work / f"body-{label}.json").write_text(json.dumps(body))


def nginx_conf(work: Path) -> Path:
    from bench_proxy import NGINX_ANSWER

    (work / "nginx").mkdir(exist_ok=True)
    answer = json.dumps(NGINX_ANSWER)
    temp = "".join(
        f"  {k}_temp_path {work}/nginx;\n"
        for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = work / "nginx.conf"
    conf.write_text(
        f"worker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/nginx/error.log warn;\n"
        "events { worker_connections 1024; }\nhttp {\n  access_log off;\n" + temp + "  "
        "client_max_body_size 10m;\n  client_body_buffer_size 1m;\n"
        "  keepalive_requests 1000000;\n"
        f"  server {{\n    listen 127.0.0.1:{NGINX_PORT};\n    default_type application/json;\n"
        f"    location / {{ return 200 '{answer}'; }}\n  }}\n}}\n"
    )
    return conf


@dataclass
class Wrk:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    bad: int  # non-2xx answers + socket errors


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * _UNITS[m.group(2)]


def run_wrk(url: str, conns: int, duration: int, body: Path, lua: Path) -> Wrk:
    out = subprocess.run(
        ["wrk", "-t1", f"-c{conns}", f"-d{int(duration)}s", "--latency", "-s", str(lua), url],
        env={**os.environ, "BODY": str(body)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pct = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", out))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        bad += sum(int(g) for g in m.groups())
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return Wrk(rps, _ms(pct["50"]), _ms(pct["99"]), requests, bad)


class Proxy:
    """``python -m domestique proxy`` with ``env`` added; its CPU ticks and RSS with workers."""

    def __init__(self, python: str, home: Path, env: dict[str, str], log: Path) -> None:
        self.log = log.open("ab")
        full = {**os.environ, "DOMESTIQUE_HOME": str(home), **env}
        self.proc = subprocess.Popen(
            [
                python,
                "-m",
                "domestique",
                "proxy",
                "--port",
                str(PROXY_PORT),
                "--upstream",
                f"anthropic=http://127.0.0.1:{NGINX_PORT}",
            ],
            env=full,
            stderr=self.log,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PROXY_PORT}/", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the proxy did not start; see " + str(log))

    def pids(self) -> list[int]:
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                kids = []
            todo.extend(int(k) for k in kids)
        return out

    def cpu_s(self) -> float:
        total = 0
        for pid in self.pids():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(stat[11]) + int(stat[12])
        return total / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        total = 0
        for pid in self.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            m = re.search(r"VmRSS:\s+(\d+) kB", status)
            total += int(m.group(1)) if m else 0
        return total / 1024

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@dataclass
class Sample:
    rps: list[float] = field(default_factory=list)
    add50: list[float] = field(default_factory=list)
    add99: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    bad: int = 0
    requests: int = 0


def check_unique(url: str, body: Path) -> None:
    """One request by hand: it must pass, unredacted (the tag is not a finding)."""
    raw = body.read_bytes().replace(TAG.encode(), b"step 0")
    req = urllib.request.Request(
        url,
        data=raw,
        headers={"content-type": "application/json", "x-api-key": "bench-key-not-real"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        action = resp.headers.get("x-domestique-action")
        assert resp.status == 200, resp.status
    if action not in (None, "allow"):
        raise SystemExit(f"the bench body is not clean: x-domestique-action {action}")


def one_round(
    proxy: Proxy, work: Path, duration: int, results: dict[str, Sample], direct: dict[str, Sample]
) -> None:
    lua = work / "post.lua"
    purl = f"http://127.0.0.1:{PROXY_PORT}/v1/messages"
    durl = f"http://127.0.0.1:{NGINX_PORT}/v1/messages"
    for label, _ in SIZES:
        body = work / f"body-{label}.json"
        check_unique(purl, body)
        run_wrk(purl, 1, 2, body, lua)  # warm up
        for conns in (1, 50):
            key = f"{label} c{conns}"
            base = run_wrk(durl, conns, duration, body, lua)
            direct.setdefault(key, Sample()).rps.append(base.rps)
            direct[key].add50.append(base.p50_ms)
            direct[key].add99.append(base.p99_ms)
            rss0 = proxy.rss_mb()
            cpu0 = proxy.cpu_s()
            got = run_wrk(purl, conns, duration, body, lua)
            cpu = proxy.cpu_s() - cpu0
            s = results.setdefault(key, Sample())
            s.rps.append(got.rps)
            s.add50.append(got.p50_ms - base.p50_ms)
            s.add99.append(got.p99_ms - base.p99_ms)
            s.cpu_ms.append(cpu * 1000 / max(1, got.requests))
            s.bad += got.bad + base.bad
            s.requests += got.requests
            print(
                f"  {key:>9}: {got.rps:8.0f} req/s  added p50 {got.p50_ms - base.p50_ms:6.2f} ms"
                f"  p99 {got.p99_ms - base.p99_ms:6.2f} ms  CPU {s.cpu_ms[-1]:.2f} ms/req"
                f"  (direct {base.rps:.0f} req/s, p50 {base.p50_ms:.2f} p99 {base.p99_ms:.2f} ms)"
                f"  bad {got.bad}  RSS {rss0:.0f}->{proxy.rss_mb():.0f} MB",
                flush=True,
            )


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def table(
    names: list[str], results: dict[str, dict[str, Sample]], direct: dict[str, Sample]
) -> str:
    head = "| medians | " + " | ".join(names) + " | nginx direct |"
    rows = [head, "|" + "---|" * (len(names) + 2)]
    for label, _ in SIZES:
        key = f"{label} c50"
        cells = [f"{med(results[n][key].rps):,.0f}" for n in names]
        rows.append(
            f"| {label}, 50 conns, req/s | "
            + " | ".join(cells)
            + f" | {med(direct[key].rps):,.0f} |"
        )
        for conns in (1, 50):
            key = f"{label} c{conns}"
            cells = [
                f"{med(results[n][key].add50):.2f} / {med(results[n][key].add99):.2f}"
                for n in names
            ]
            d = f"{med(direct[key].add50):.2f} / {med(direct[key].add99):.2f}"
            rows.append(
                f"| {label}, {conns} conn, added p50 / p99 ms | "
                + " | ".join(cells)
                + f" | ({d}) |"
            )
        for conns in (1, 50):
            key = f"{label} c{conns}"
            cells = [f"{med(results[n][key].cpu_ms):.2f}" for n in names]
            rows.append(
                f"| {label}, {conns} conn, proxy CPU ms/req | " + " | ".join(cells) + " | |"
            )
    bad = [str(sum(s.bad for s in results[n].values())) for n in names]
    rows.append("| non-2xx + socket errors | " + " | ".join(bad) + " | |")
    return "\n".join(rows)


def verify(python: str, home: Path) -> str:
    env = {**os.environ, "DOMESTIQUE_HOME": str(home)}
    out = subprocess.run(
        [python, "-m", "domestique", "audit", "verify"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    count = subprocess.run(
        [python, "-c", "from domestique.audit import AuditStore; print(AuditStore.open().count())"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    said = (out.stdout + out.stderr).strip()[:120]
    return f"verify exit {out.returncode} ({said}); records {count.stdout.strip()}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--duration", type=int, default=10, help="seconds per wrk phase (10)")
    p.add_argument("--rounds", type=int, default=1, help="rounds; medians are over rounds (1)")
    p.add_argument("--mem-requests", type=int, default=100_000, help="memory phase (0: none)")
    p.add_argument("--config", action="append", default=[], metavar="NAME=ENV=V,ENV=V")
    p.add_argument("--python", default=str(ROOT / ".venv/bin/python"))
    args = p.parse_args()
    for tool in ("nginx", "wrk"):
        if shutil.which(tool) is None:
            raise SystemExit(f"needs {tool}: apt-get install -y nginx wrk")
    configs: dict[str, dict[str, str]] = {}
    for item in args.config or ["default="]:
        name, _, envs = item.partition("=")
        configs[name] = dict(e.split("=", 1) for e in envs.split(",") if e)
    names = list(configs)
    work = Path(tempfile.mkdtemp(prefix="dq-load."))
    nginx = None
    try:
        write_bodies(work)
        (work / "post.lua").write_text(LUA)
        subprocess.run(["nginx", "-c", str(nginx_conf(work))], check=True)
        nginx = work / "nginx.pid"
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"machine: {os.cpu_count()} cores, load {' '.join(load)}; configs: {configs}")
        results: dict[str, dict[str, Sample]] = {n: {} for n in names}
        direct: dict[str, Sample] = {}
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                print(f"round {r + 1}, {name}:", flush=True)
                proxy = Proxy(
                    args.python, work / f"home-{name}", configs[name], work / f"{name}.log"
                )
                try:
                    one_round(proxy, work, args.duration, results[name], direct)
                finally:
                    proxy.stop()
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"\nload at the end: {' '.join(load)}; {args.rounds} round(s) of {args.duration} s")
        print(table(names, results, direct))
        for name in names:
            print(
                f"audit ({name}): {verify(args.python, work / f'home-{name}')}; "
                f"wrk counted {sum(s.requests for s in results[name].values())} proxied"
            )
        if args.mem_requests:
            memory(args, work, names[0], configs[names[0]])
    finally:
        if nginx is not None and nginx.exists():
            os.kill(int(nginx.read_text()), signal.SIGTERM)
        time.sleep(0.5)
        shutil.rmtree(work, ignore_errors=True)
    return 0


def memory(args: argparse.Namespace, work: Path, name: str, env: dict[str, str]) -> None:
    """10 KB, 50 connections until about ``--mem-requests`` requests; RSS every 10 s."""
    home = work / "home-mem"
    proxy = Proxy(args.python, home, env, work / "mem.log")
    try:
        body = work / "body-10k.json"
        run_wrk(f"http://127.0.0.1:{PROXY_PORT}/v1/messages", 50, 3, body, work / "post.lua")
        probe = run_wrk(
            f"http://127.0.0.1:{PROXY_PORT}/v1/messages", 50, 5, body, work / "post.lua"
        )
        seconds = max(10, round(args.mem_requests / max(1.0, probe.rps)))
        samples = [proxy.rss_mb()]
        wrk = subprocess.Popen(
            [
                "wrk",
                "-t1",
                "-c50",
                f"-d{seconds}s",
                "-s",
                str(work / "post.lua"),
                f"http://127.0.0.1:{PROXY_PORT}/v1/messages",
            ],
            env={**os.environ, "BODY": str(body)},
            stdout=subprocess.PIPE,
            text=True,
        )
        while wrk.poll() is None:
            time.sleep(min(10, seconds / 10))
            samples.append(proxy.rss_mb())
        out = wrk.stdout.read() if wrk.stdout else ""
        n = re.search(r"(\d+) requests in", out)
        errors = re.findall(r"(Non-2xx.*|Socket errors.*)", out)
        print(
            f"memory ({name}, 10k, 50 conns, {seconds} s, {n.group(1) if n else '?'} requests, "
            f"errors: {errors or 'none'}): RSS MB " + " ".join(f"{x:.0f}" for x in samples)
        )
    finally:
        proxy.stop()
    print(f"audit (memory phase): {verify(args.python, home)}")


if __name__ == "__main__":
    sys.exit(main())
