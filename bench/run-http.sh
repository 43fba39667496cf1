#!/usr/bin/env bash
# HTTP benchmark over TLS, everything on loopback, bounded in time:
#  1. throughput: wrk against `aiadmit serve`, against nginx serving a static
#     answer of the same size with the same certificate, and (with
#     BENCH_OLD_BINARY) against another aiadmit build, in the same run, at
#     several keep-alive connection counts. The headline figure is aiadmit's
#     throughput as a fraction of nginx's; a second table gives what each
#     server spent per request meanwhile (CPU, preemptions), which says how
#     much of the ratio is the machine's;
#  2. idle: the CPU that 2,000 idle keep-alive connections cost;
#  3. slow: a new client's latency while 2,000 clients trickle headers and 300
#     handshakes stall;
#  4. memory: resident memory after hostile requests (30 MiB of headers, a
#     200 MiB request line) and under 16 concurrent 7.9 MiB reviews.
#
#   bench/run-http.sh [DURATION_SECONDS] [REVIEWS...]
#
# Reviews: gpu-pod gpu-deployment plain-pod big-pod (default: all four).
# Connections: $BENCH_CONNECTIONS (default "2 64 256").
# Sections: $BENCH_SECTIONS (default "throughput idle slow memory"); with
# BENCH_MEMORY_REQUESTS=N also "sustained": RSS over N requests at 64 connections.
# BENCH_OLD_BINARY=path: an older aiadmit measured beside this one;
# BENCH_BINARY=path: the aiadmit to measure (default build/aiadmit).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-10}
shift || true
reviews=("$@")
[ ${#reviews[@]} -gt 0 ] || reviews=(gpu-pod gpu-deployment plain-pod big-pod)
connections=${BENCH_CONNECTIONS:-"2 64 256"}
sections=${BENCH_SECTIONS:-"throughput idle slow memory"}
old_binary=${BENCH_OLD_BINARY:-}
binary=${BENCH_BINARY:-build/aiadmit}

scripts/install-deps bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target aiadmit make_inputs >/dev/null

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

certs/gen-dev-certs.sh "$work/certs" >/dev/null
ca="$work/certs/ca.crt"
cp bench/reviews/*.json "$work/"
build/bench/make_inputs "$work"

free_port() {
  local candidate=$1
  while ss -ltn | grep -q ":$candidate "; do candidate=$((candidate + 1)); done
  echo "$candidate"
}

# start_server NAME BINARY ARGS...: starts it on a free port; sets $port and $pid.
# At the default log level (info: a line per request, to a file), as served;
# BENCH_LOG_LEVEL=warn leaves request lines out.
start_server() {
  local name=$1 binary=$2
  shift 2
  port=$(free_port $((18443 + RANDOM % 2000)))
  "$binary" serve --profiles profiles --tls-cert "$work/certs/tls.crt" \
    --tls-key "$work/certs/tls.key" --listen "127.0.0.1:$port" --log-level "${BENCH_LOG_LEVEL:-info}" \
    --shutdown-delay 0 "$@" > "$work/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    curl -sf --cacert "$ca" "https://127.0.0.1:$port/healthz" >/dev/null && return
    sleep 0.1
  done
  echo "$name did not start" >&2
  exit 1
}
stop_server() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null || true; }
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run_wrk() {  # url review connections [seconds]
  REVIEW="$work/$2.json" wrk -t2 -c"$3" -d"${4:-$duration}s" --timeout 10s -s bench/post.lua "$1" \
    | grep '^RESULT' | sed 's/^RESULT //'
}
# usage PID...: the CPU ticks (user, system) and the context switches
# (preempted, waited) of these processes' threads so far.
usage() {
  local pid user=0 system=0 preempted=0 waited=0 u s p w
  for pid in "$@"; do
    read -r u s < <(awk '{print $14, $15}' "/proc/$pid/stat")
    read -r p w < <(awk '$1 == "nonvoluntary_ctxt_switches:" {p += $2}
                         $1 == "voluntary_ctxt_switches:" {w += $2} END {print p + 0, w + 0}' \
      /proc/"$pid"/task/*/status)
    user=$((user + u)) system=$((system + s)) preempted=$((preempted + p)) waited=$((waited + w))
  done
  echo "$user $system $preempted $waited"
}
# measured_wrk URL REVIEW CONNECTIONS PID...: run_wrk's fields, and what the
# server's processes spent per request meanwhile: CPU in microseconds (user,
# system) and context switches (preempted, waited).
measured_wrk() {
  local url=$1 review=$2 conns=$3 before result after
  shift 3
  before=$(usage "$@")
  result=$(run_wrk "$url" "$review" "$conns")
  after=$(usage "$@")
  echo "$result $(awk -v b="$before" -v a="$after" -v n="$(field "$result" requests)" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { split(b, x, " "); split(a, y, " "); n = (n > 0 ? n : 1)
             printf "user_us=%.1f sys_us=%.1f preempted=%.2f waited=%.2f",
               (y[1] - x[1]) / hz / n * 1e6, (y[2] - x[2]) / hz / n * 1e6,
               (y[3] - x[3]) / n, (y[4] - x[4]) / n }')"
}
field() { echo "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2; }
cost_row() {  # review connections server measured_wrk-fields
  awk -v r="$1" -v c="$2" -v s="$3" -v u="$(field "$4" user_us)" -v y="$(field "$4" sys_us)" \
    -v p="$(field "$4" preempted)" -v w="$(field "$4" waited)" \
    'BEGIN { printf "%-15s %5d | %-8s | %7.1f %7.1f %7.1f | %9.2f %7.2f\n", r, c, s, u, y, u + y, p, w }'
}
errors_of() { echo $(( $(field "$1" socket_errors) + $(field "$1" status_errors) )); }

throughput() {
  start_server aiadmit "$binary"
  local ours_port=$port ours_pid=$pid old_port="" old_pid=""
  if [ -n "$old_binary" ]; then
    start_server old "$old_binary"
    old_port=$port old_pid=$pid
  fi
  # nginx answers each review's path with aiadmit's own answer to it, as a
  # static string, so both servers send the same bytes.
  local nginx_port
  nginx_port=$(free_port $((ours_port + 10)))
  {
    echo "worker_processes 2; pid $work/nginx.pid; error_log $work/nginx-error.log;"
    echo "events { worker_connections 4096; }"
    echo "http { access_log off; keepalive_requests 100000000; keepalive_timeout 120s;"
    echo " client_max_body_size 8m; client_body_buffer_size 2m;"
    echo " server { listen 127.0.0.1:$nginx_port ssl; ssl_protocols TLSv1.2 TLSv1.3;"
    echo "  ssl_certificate $work/certs/tls.crt; ssl_certificate_key $work/certs/tls.key;"
    echo "  default_type application/json;"
    for review in "${reviews[@]}"; do
      answer=$(curl -s --cacert "$ca" -H 'Content-Type: application/json' \
        --data-binary @"$work/$review.json" "https://127.0.0.1:$ours_port/mutate")
      printf '%s' "$answer" > "$work/$review.answer"
      escaped=$(printf '%s' "$answer" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
      echo "  location = /$review { return 200 '$escaped'; }"
    done
    echo " }"
    echo "}"
  } > "$work/nginx.conf"
  nginx -p "$work" -c "$work/nginx.conf"
  local nginx_workers
  nginx_workers=$(pgrep -P "$(cat "$work/nginx.pid")" | tr '\n' ' ')
  local costs=()

  printf '%-15s %5s | %9s %7s %7s %8s %5s | %9s %7s %7s | %9s %7s %5s | %6s %6s\n' review conns \
    "aiadmit/s" "p50 ms" "p99 ms" "p99.9 ms" "errs" "nginx/s" "p50 ms" "p99 ms" \
    "old/s" "p99 ms" "errs" ratio "old"
  for review in "${reviews[@]}"; do
    for conns in $connections; do
      ours=$(measured_wrk "https://127.0.0.1:$ours_port/mutate" "$review" "$conns" "$ours_pid")
      # shellcheck disable=SC2086 # one argument per worker
      theirs=$(measured_wrk "https://127.0.0.1:$nginx_port/$review" "$review" "$conns" $nginx_workers)
      old="rps=0 p99_us=0 socket_errors=0 status_errors=0"
      [ -n "$old_port" ] && old=$(measured_wrk "https://127.0.0.1:$old_port/mutate" "$review" "$conns" "$old_pid")
      costs+=("$(cost_row "$review" "$conns" aiadmit "$ours")" "$(cost_row "$review" "$conns" nginx "$theirs")")
      [ -n "$old_port" ] && costs+=("$(cost_row "$review" "$conns" old "$old")")
      awk -v r="$review" -v c="$conns" \
        -v a="$(field "$ours" rps)" -v a50="$(field "$ours" p50_us)" -v a99="$(field "$ours" p99_us)" \
        -v a999="$(field "$ours" p999_us)" -v e="$(errors_of "$ours")" \
        -v n="$(field "$theirs" rps)" -v n50="$(field "$theirs" p50_us)" -v n99="$(field "$theirs" p99_us)" \
        -v o="$(field "$old" rps)" -v o99="$(field "$old" p99_us)" -v oe="$(errors_of "$old")" \
        'BEGIN { printf "%-15s %5d | %9d %7.2f %7.2f %8.2f %5d | %9d %7.2f %7.2f | %9d %7.2f %5d | %6.2f %6.2f\n",
                 r, c, a, a50/1000, a99/1000, a999/1000, e, n, n50/1000, n99/1000, o, o99/1000, oe,
                 (n > 0 ? a/n : 0), (n > 0 ? o/n : 0) }'
    done
  done
  echo
  echo "per request, while each was measured: CPU (µs) and context switches"
  printf '%-15s %5s | %-8s | %7s %7s %7s | %9s %7s\n' review conns server user system total preempted waited
  printf '%s\n' "${costs[@]}"
  echo "aiadmit resident memory after the throughput runs: $(status_kib "$ours_pid" VmRSS) KiB" \
    "(peak $(status_kib "$ours_pid" VmHWM) KiB)"
  kill "$(cat "$work/nginx.pid")"
  rm -f "$work/nginx.pid"
  stop_server "$ours_pid"
  [ -n "$old_port" ] && stop_server "$pid"
}

# wait_ready FILE: until a hostile.py run printed READY (at most 60 s).
wait_ready() {
  for _ in $(seq 600); do
    grep -q READY "$1" 2>/dev/null && return
    sleep 0.1
  done
  echo "hostile clients never got ready: $(cat "$1")" >&2
  exit 1
}

idle_cpu() {  # name binary
  start_server "$1-idle" "$2"
  local server=$pid
  python3 bench/hostile.py "$port" "$ca" idle 2000 40 > "$work/idle.out" 2>&1 &
  local clients=$!
  wait_ready "$work/idle.out"
  local before after hz
  hz=$(getconf CLK_TCK)
  before=$(cpu_ticks "$server")
  sleep 10
  after=$(cpu_ticks "$server")
  awk -v n="$1" -v t=$((after - before)) -v hz="$hz" -v rss="$(status_kib "$server" VmRSS)" \
    'BEGIN { printf "idle: %-8s 2000 idle keep-alive connections cost %.1f%% of a core (RSS %d KiB)\n",
             n, 100 * t / hz / 10, rss }'
  kill "$clients" 2>/dev/null || true
  wait "$clients" 2>/dev/null || true
  stop_server "$server"
}

slow_clients() {
  # Deadlines raised so that the slow clients are held during the whole measurement.
  start_server slow "$binary" --header-timeout 120s --handshake-timeout 120s
  local server=$pid
  local quiet
  quiet=$(run_wrk "https://127.0.0.1:$port/mutate" gpu-pod 4 5)
  python3 bench/hostile.py "$port" "$ca" slow 2000 300 60 > "$work/slow.out" 2>&1 &
  local clients=$!
  wait_ready "$work/slow.out"
  local loaded
  loaded=$(run_wrk "https://127.0.0.1:$port/mutate" gpu-pod 4 5)
  echo "slow: a new client (4 connections) alone: p99 $(awk -v v="$(field "$quiet" p99_us)" 'BEGIN{print v/1000}') ms," \
    "$(field "$quiet" rps)/s; beside 2000 slow-header clients and 300 stalled handshakes:" \
    "p99 $(awk -v v="$(field "$loaded" p99_us)" 'BEGIN{print v/1000}') ms, $(field "$loaded" rps)/s," \
    "errors $(errors_of "$loaded")"
  kill "$clients" 2>/dev/null || true
  wait "$clients" 2>/dev/null || true
  stop_server "$server"
}

memory() {
  start_server memory "$binary"
  local server=$pid base
  base=$(status_kib "$server" VmRSS)
  echo "memory: at start RSS $base KiB"
  echo "memory: 30 MiB of small headers on one connection: $(python3 bench/hostile.py "$port" "$ca" headers $((30 << 20)))," \
    "peak RSS +$(( $(status_kib "$server" VmHWM) - base )) KiB"
  echo "memory: a 200 MiB request line: $(python3 bench/hostile.py "$port" "$ca" line $((200 << 20)))," \
    "peak RSS +$(( $(status_kib "$server" VmHWM) - base )) KiB"
  stop_server "$server"
  start_server memory-big "$binary"
  server=$pid
  echo "memory: 16 concurrent 2.9 MiB reviews: $(python3 bench/hostile.py "$port" "$ca" big 16 "$work/huge-pod.json")," \
    "peak RSS $(status_kib "$server" VmHWM) KiB, after $(status_kib "$server" VmRSS) KiB"
  stop_server "$server"
}

# Memory under sustained load: RSS after the first ~100k requests of the
# reference review at 64 connections, then after BENCH_MEMORY_REQUESTS in all.
sustained() {
  start_server sustained "$binary"
  local server=$pid total=0 rounds=0 first_rss="" first_total=0 result
  while [ "$total" -lt "$BENCH_MEMORY_REQUESTS" ] && [ "$rounds" -lt 200 ]; do
    result=$(run_wrk "https://127.0.0.1:$port/mutate" gpu-pod 64)
    total=$((total + $(field "$result" requests)))
    rounds=$((rounds + 1))
    if [ -z "$first_rss" ] && [ "$total" -ge 100000 ]; then
      first_rss=$(status_kib "$server" VmRSS)
      first_total=$total
    fi
  done
  local last_rss
  last_rss=$(status_kib "$server" VmRSS)
  echo "sustained: RSS ${first_rss:-?} KiB after $first_total requests, $last_rss KiB after $total requests"
  stop_server "$server"
}

[ -n "${BENCH_MEMORY_REQUESTS:-}" ] && sections="$sections sustained"
for section in $sections; do
  case "$section" in
    throughput) throughput ;;
    idle)
      idle_cpu aiadmit "$binary"
      [ -n "$old_binary" ] && idle_cpu old "$old_binary"
      ;;
    slow) slow_clients ;;
    memory) memory ;;
    sustained) sustained ;;
    *) echo "unknown section $section" >&2; exit 2 ;;
  esac
done
echo "answer sizes (bytes): $(for r in "${reviews[@]}"; do [ -f "$work/$r.answer" ] && printf '%s=%s ' "$r" "$(wc -c < "$work/$r.answer")"; done)"
