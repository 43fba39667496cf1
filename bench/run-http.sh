#!/usr/bin/env bash
# HTTP benchmark over TLS: wrk against `aiadmit serve` and against nginx
# serving a static answer of the same size with the same certificate, in the
# same run, at several keep-alive connection counts. The headline figure is
# aiadmit's throughput as a fraction of nginx's.
#
#   bench/run-http.sh [DURATION_SECONDS] [REVIEWS...]
#
# Reviews: gpu-pod gpu-deployment plain-pod big-pod (default: all four).
# Connections: $BENCH_CONNECTIONS (default "2 64 256").
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-10}
shift || true
reviews=("$@")
[ ${#reviews[@]} -gt 0 ] || reviews=(gpu-pod gpu-deployment plain-pod big-pod)
connections=${BENCH_CONNECTIONS:-"2 64 256"}

scripts/install-deps bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target aiadmit make_inputs >/dev/null

work=$(mktemp -d)
cleanup() {
  [ -n "${aiadmit_pid:-}" ] && kill "$aiadmit_pid" 2>/dev/null && wait "$aiadmit_pid" 2>/dev/null
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

certs/gen-dev-certs.sh "$work/certs" >/dev/null
cp bench/reviews/*.json "$work/"
build/bench/make_inputs "$work"

free_port() {
  local candidate=$1
  while ss -ltn | grep -q ":$candidate "; do candidate=$((candidate + 1)); done
  echo "$candidate"
}
port=$(free_port 18443)
# Request lines are logged at info; the benchmark measures serving, not logging.
build/aiadmit serve --profiles profiles --tls-cert "$work/certs/tls.crt" \
  --tls-key "$work/certs/tls.key" --listen "127.0.0.1:$port" --log-level warn --shutdown-delay 0 \
  > "$work/aiadmit.log" 2>&1 &
aiadmit_pid=$!
for _ in $(seq 100); do
  curl -sf --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 0.1
done

# nginx answers each review's path with aiadmit's own answer to it, as a
# static string, so both servers send the same bytes.
nginx_port=$(free_port $((port + 1)))
{
  echo "worker_processes 2; pid $work/nginx.pid; error_log $work/nginx-error.log;"
  echo "events { worker_connections 4096; }"
  echo "http { access_log off; keepalive_requests 100000000; keepalive_timeout 120s;"
  echo " client_max_body_size 8m; client_body_buffer_size 2m;"
  echo " server { listen 127.0.0.1:$nginx_port ssl; ssl_protocols TLSv1.2 TLSv1.3;"
  echo "  ssl_certificate $work/certs/tls.crt; ssl_certificate_key $work/certs/tls.key;"
  echo "  default_type application/json;"
  for review in "${reviews[@]}"; do
    answer=$(curl -s --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
      --data-binary @"$work/$review.json" "https://127.0.0.1:$port/mutate")
    printf '%s' "$answer" > "$work/$review.answer"
    escaped=$(printf '%s' "$answer" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
    echo "  location = /$review { return 200 '$escaped'; }"
  done
  echo " }"
  echo "}"
} > "$work/nginx.conf"
nginx -p "$work" -c "$work/nginx.conf"

run_wrk() {  # url review connections
  REVIEW="$work/$2.json" wrk -t2 -c"$3" -d"${duration}s" --timeout 10s -s bench/post.lua "$1" \
    | grep '^RESULT' | sed 's/^RESULT //'
}
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }

printf '%-15s %5s | %9s %7s %7s %8s %5s | %9s %7s %7s | %6s\n' review conns \
  "aiadmit/s" "p50 ms" "p99 ms" "p99.9 ms" "errs" "nginx/s" "p50 ms" "p99 ms" ratio
for review in "${reviews[@]}"; do
  for conns in $connections; do
    ours=$(run_wrk "https://127.0.0.1:$port/mutate" "$review" "$conns")
    theirs=$(run_wrk "https://127.0.0.1:$nginx_port/$review" "$review" "$conns")
    awk -v r="$review" -v c="$conns" \
      -v a="$(field "$ours" rps)" -v a50="$(field "$ours" p50_us)" -v a99="$(field "$ours" p99_us)" \
      -v a999="$(field "$ours" p999_us)" \
      -v e="$(( $(field "$ours" socket_errors) + $(field "$ours" status_errors) ))" \
      -v n="$(field "$theirs" rps)" -v n50="$(field "$theirs" p50_us)" -v n99="$(field "$theirs" p99_us)" \
      'BEGIN { printf "%-15s %5d | %9d %7.2f %7.2f %8.2f %5d | %9d %7.2f %7.2f | %6.2f\n",
               r, c, a, a50/1000, a99/1000, a999/1000, e, n, n50/1000, n99/1000, (n > 0 ? a/n : 0) }'
  done
done
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$aiadmit_pid/status"; }
echo "aiadmit resident memory: $(grep -E 'VmRSS|VmHWM' /proc/$aiadmit_pid/status | tr -s ' \t' ' ' | tr '\n' ' ')"

# Memory under sustained load: RSS after the first ~100k requests of the
# reference review at 64 connections, then after BENCH_MEMORY_REQUESTS in all.
if [ -n "${BENCH_MEMORY_REQUESTS:-}" ]; then
  total=0
  rounds=0
  first_rss=""
  while [ "$total" -lt "$BENCH_MEMORY_REQUESTS" ] && [ "$rounds" -lt 200 ]; do
    result=$(run_wrk "https://127.0.0.1:$port/mutate" gpu-pod 64)
    total=$((total + $(field "$result" requests)))
    rounds=$((rounds + 1))
    if [ -z "$first_rss" ] && [ "$total" -ge 100000 ]; then
      first_rss=$(rss_kib)
      first_total=$total
    fi
  done
  last_rss=$(rss_kib)
  echo "memory: RSS ${first_rss} KiB after ${first_total} requests, ${last_rss} KiB after ${total} requests (growth $((last_rss - first_rss)) KiB)"
fi
echo "answer sizes (bytes): $(for r in "${reviews[@]}"; do printf '%s=%s ' "$r" "$(wc -c < "$work/$r.answer")"; done)"
