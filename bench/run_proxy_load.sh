#!/usr/bin/env bash
# Load test of the firewall proxy: nginx as the fast upstream, wrk against proxy vs direct.
#
#   apt-get update && apt-get install -y nginx wrk
#   bash bench/run_proxy_load.sh [DURATION_S] [WORKERS]
#
# Everything listens on 127.0.0.1 only. Prints wrk's latency distribution on 1 connection
# (proxy and direct, 10 KB and 100 KB bodies), throughput on 50 connections, and the proxy's
# RSS before and after. wrk runs one thread (-t1) to leave the 2 cores to the proxy; wrk
# reports non-2xx answers and socket errors itself. DOMESTIQUE_PROXY_AUDIT_BATCH=0 turns the
# audit group commit off (one transaction per request, inline) for A/B runs. Figures: docs/benchmarks.md ("Firewall proxy").
set -euo pipefail
DUR="${1:-10}"
WORKERS="${2:-1}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
WORK="$(mktemp -d /tmp/dq-bench.XXXXXX)"
NGINX_PORT=18080
PROXY_PORT=18788
export DOMESTIQUE_HOME="$WORK/home"

cleanup() {
  [ -n "${PROXY_PID:-}" ] && kill "$PROXY_PID" 2>/dev/null || true
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  sleep 0.5
  rm -rf "$WORK"
}
trap cleanup EXIT

"$PY" "$ROOT/bench/bench_proxy.py" bodies "$WORK"
ANSWER="$("$PY" "$ROOT/bench/bench_proxy.py" nginx-answer)"
mkdir -p "$WORK/nginx"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx;
  proxy_temp_path $WORK/nginx;
  fastcgi_temp_path $WORK/nginx;
  uwsgi_temp_path $WORK/nginx;
  scgi_temp_path $WORK/nginx;
  client_max_body_size 10m;
  client_body_buffer_size 1m;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    default_type application/json;
    location / { return 200 '$ANSWER'; }
  }
}
CONF
nginx -c "$WORK/nginx.conf"

cat > "$WORK/post.lua" <<'LUA'
local f = io.open(os.getenv("BODY"), "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["content-type"] = "application/json"
wrk.headers["x-api-key"] = "bench-key-not-real"
wrk.headers["anthropic-version"] = "2023-06-01"
LUA

DOMESTIQUE_PROXY_WORKERS="$WORKERS" "$PY" -m domestique proxy --port "$PROXY_PORT" \
  --upstream "anthropic=http://127.0.0.1:$NGINX_PORT" 2>"$WORK/proxy.log" &
PROXY_PID=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" && break || sleep 0.1
done

rss() { # total RSS (KB) of the proxy and its workers
  local pids="$PROXY_PID" child
  for child in $(pgrep -P "$PROXY_PID" || true); do pids="$pids,$child"; done
  ps -o rss= -p "$pids" 2>/dev/null | awk '{s+=$1} END {print s}'
}

cpu_ticks() { # user+system CPU ticks (1/100 s) of the proxy and its workers so far
  local pid total=0
  for pid in "$PROXY_PID" $(pgrep -P "$PROXY_PID" || true); do
    total=$((total + $(awk '{print $14+$15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
# wrk_proxy CONNS ARGS...: run wrk against the proxy, then print the proxy's CPU per request,
# which a loaded machine inflates far less than wall-clock latency.
wrk_proxy() {
  local before after n
  before="$(cpu_ticks)"
  wrk -t1 "$@" "http://127.0.0.1:$PROXY_PORT/v1/messages" > "$WORK/wrk.txt"
  after="$(cpu_ticks)"
  grep -E "^ +(50|75|90|99)%|Requests/sec|requests in|Non-2xx|Socket errors" "$WORK/wrk.txt"
  n="$(awk '/requests in/{print $1}' "$WORK/wrk.txt")"
  awk -v b="$before" -v a="$after" -v n="$n" \
    'BEGIN {printf "   proxy CPU per request: %.2f ms (%d requests)\n", (a-b)*10/n, n}'
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); proxy workers: $WORKERS"
for size in 10k 100k; do
  export BODY="$WORK/body-$size.json"
  curl -s -o /dev/null -w "check $size: %{http_code} via proxy\n" -X POST --data-binary "@$BODY" \
    -H 'content-type: application/json' "http://127.0.0.1:$PROXY_PORT/v1/messages"
  # warm up
  wrk -t1 -c1 -d2s -s "$WORK/post.lua" "http://127.0.0.1:$PROXY_PORT/v1/messages" >/dev/null
  echo "== $size body, 1 connection, direct"
  wrk -t1 -c1 -d"${DUR}s" --latency -s "$WORK/post.lua" "http://127.0.0.1:$NGINX_PORT/v1/messages" \
    | grep -E "^ +(50|75|90|99)%|Requests/sec|Non-2xx|Socket errors"
  echo "== $size body, 1 connection, proxy"
  wrk_proxy -c1 -d"${DUR}s" --latency -s "$WORK/post.lua"
  echo "== $size body, 50 connections, proxy (RSS before: $(rss) KB)"
  wrk_proxy -c50 -d"${DUR}s" --latency -s "$WORK/post.lua"
  echo "   RSS after: $(rss) KB"
done
MEM_S="${MEM_S:-60}"
export BODY="$WORK/body-10k.json"
echo "== memory: 10k body, 50 connections, ${MEM_S}s; RSS (KB) every 10 s:"
wrk -t1 -c50 -d"${MEM_S}s" -s "$WORK/post.lua" "http://127.0.0.1:$PROXY_PORT/v1/messages" \
  > "$WORK/mem.txt" &
WRK_PID=$!
samples="$(rss)"
while kill -0 "$WRK_PID" 2>/dev/null; do sleep 10; samples="$samples $(rss)"; done
echo "   $samples"
grep -E "requests in|Non-2xx|Socket errors" "$WORK/mem.txt" || true
echo "audit records written: $("$PY" -c 'from domestique.audit import AuditStore; s=AuditStore.open(); print(s.count())')"
