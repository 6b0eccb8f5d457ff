#!/usr/bin/env bash
# Load test of the firewall proxy: nginx as the fast upstream, wrk against proxy vs direct.
#
#   apt-get update && apt-get install -y nginx wrk
#   bash bench/run_proxy_load.sh [DURATION_S] [WORKERS]
#
# Runs bench/proxy_load.py (unique bodies: a counter in the last user message; one table with
# requests/s, added p50/p99 at 1 and 50 connections for 10 KB and 100 KB, nginx direct, CPU per
# request, RSS, audit verify, a memory phase of 100,000 requests). WORKERS, when given, sets
# DOMESTIQUE_PROXY_WORKERS; without it the proxy runs as installed (one worker per core).
# For A/B runs call proxy_load.py with --config and --rounds. Figures: docs/benchmarks.md
# ("Firewall proxy").
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
args=(--duration "${1:-10}")
if [ -n "${2:-}" ]; then
  args+=(--config "workers$2=DOMESTIQUE_PROXY_WORKERS=$2")
fi
exec "$PY" "$ROOT/bench/proxy_load.py" "${args[@]}" --python "$PY"
