#!/usr/bin/env bash
# The admission latency aiadmit adds to each Pod create through a real API
# server (scripts/e2e-cluster: etcd, kube-apiserver, controller manager and
# scheduler built from source, aiadmit registered by its own manifests), and
# with --kyverno what Kyverno adds making the same placement.
#
#   bench/e2e-latency.sh [--kyverno] [COUNT] [CLIENTS]   (default: 1000 4)
#
# Namespaces of two kinds: labelled aiadmit.dev/enabled=true (the API server
# calls applied.mutate.aiadmit.dev and applied.validate.aiadmit.dev for every
# GPU Pod) and not (the API server alone, with aiadmit's webhooks registered
# but not matching). In BENCH_ROUNDS rounds (default 3), the load generator
# (tests/e2e/kube/podload: client-go, CLIENTS goroutines on one keep-alive
# connection, no client-side rate limit) creates COUNT Pods three times:
#   off    GPU Pods (nvidia.com/gpu: 1) in a namespace not opted in;
#   plain  Pods without any resources in an opted-in namespace: the API
#          server evaluates aiadmit's matchConditions, which keep them from
#          aiadmit (the cost every other Pod of an opted-in namespace pays);
#   on     GPU Pods in an opted-in namespace: aiadmit is called;
#   kyverno (with --kyverno) GPU Pods in a namespace not opted in but
#          labelled kyverno.aiadmit.dev/enabled=true: Kyverno's admission
#          controller (built from its Go module, run beside the API server by
#          `scripts/e2e-cluster kyverno DIR start`) is called instead, with
#          the ClusterPolicy bench/operators/kyverno/gpu-pool.yaml, which adds
#          the GPU pool's toleration and node selector as aiadmit does.
# The Pods name a scheduler that no scheduler serves, so kube-scheduler stays
# idle. Each run has a new namespace, deleted (and gone) before the next run
# starts, so etcd stays small and no deletion runs beside a measurement.
#
# Reported, as a markdown table:
#  - per create, as the client sees it: mean, p50, p90, p99 and max of each
#    mode over all rounds, and the differences to "off";
#  - from the API server's /metrics, the change over the runs of
#    apiserver_admission_webhook_admission_duration_seconds for each aiadmit
#    webhook and of apiserver_request_duration_seconds for POST pods: the
#    mean (exact, from _sum/_count) and p50/p99 estimated from the buckets by
#    linear interpolation, as Prometheus' histogram_quantile does;
#  - aiadmit's own time per review (its aiadmit_request_duration_seconds);
#  - the API server's webhook admission plugins per create (matching,
#    matchConditions, the calls, the patch);
#  - CPU seconds of the aiadmit, kube-apiserver (and Kyverno) processes
#    (/proc/PID/stat utime+stime) per 1,000 creates.
# It exits 1 when a create failed, when aiadmit did not stamp every Pod of
# the "on" runs (or stamped one of the others), when a webhook did not place
# every Pod of its runs on the GPU pool (or one of off's or plain's was), or
# when a webhook was called in another mode's runs. Kyverno, when started
# here, is stopped at exit and its webhook configurations deleted.
#
# With AIADMIT_E2E_DIR naming a running cluster of scripts/e2e-cluster it
# uses that one, else it starts one in build/bench-e2e and stops it at exit
# (bench/e2e-lib.sh). The machine is shared: the figure to read is the
# difference within one run, next to the load average it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command_line="bench/e2e-latency.sh $*"
[ -z "${BENCH_ROUNDS:-}" ] || command_line="BENCH_ROUNDS=$BENCH_ROUNDS $command_line"
usage="usage: [BENCH_ROUNDS=N] bench/e2e-latency.sh [--kyverno] [COUNT] [CLIENTS]"
with_kyverno=false
if [ "${1:-}" = --kyverno ]; then
  with_kyverno=true
  shift
fi

count=${1:-1000}
clients=${2:-4}
rounds=${BENCH_ROUNDS:-3}
for value in "$count" "$clients" "$rounds"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || {
    echo "$usage (whole numbers, at least 1)" >&2
    exit 2
  }
done
if [ "$#" -gt 2 ]; then
  echo "$usage" >&2
  exit 2
fi

say() { echo "e2e-latency: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
  export PATH=/usr/local/go/bin:$PATH
fi
command -v go >/dev/null || fail "Go is needed to build tests/e2e/kube/podload (looked on PATH and in /usr/local/go/bin)"
command -v python3 >/dev/null || fail "python3 is needed for the report"

# The load generator first: a compile error should not wait for a cluster.
podload=$root/build/kube/podload
mkdir -p "$root/build/kube"
(cd tests/e2e/kube && go build -o "$podload" ./podload) || fail "could not build tests/e2e/kube/podload"

# shellcheck source=e2e-lib.sh
source bench/e2e-lib.sh
bench_e2e_up

# bench_e2e_up leaves a trap that stops the cluster it started; ours runs
# first and then that one. `trap -p` quotes the command for eval.
lib_exit=""
if lib_trap=$(trap -p EXIT) && [ -n "$lib_trap" ]; then
  eval "set -- ${lib_trap#trap -- }"
  lib_exit=$1
fi
work=$(mktemp -d)
current_ns=""
kyverno_policy=bench/operators/kyverno/gpu-pool.yaml
kyverno_started=false
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [ -z "$current_ns" ] ||
    "$KUBECTL" delete namespace "$current_ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  if [ "$kyverno_started" = true ]; then
    "$KUBECTL" delete -f "$kyverno_policy" --ignore-not-found >/dev/null 2>&1 || true
    scripts/e2e-cluster kyverno "$E2E_DIR" stop >/dev/null 2>&1 || say "could not stop Kyverno in $E2E_DIR"
  fi
  rm -rf "$work"
  [ -z "$lib_exit" ] || eval "$lib_exit" || true
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pid_of() {
  local pid
  pid=$(cat "$AIADMIT_E2E_DIR/run/$1.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null ||
    fail "$1 is not running in $AIADMIT_E2E_DIR (no live pid in run/$1.pid)"
  echo "$pid"
}
# A GPU Pod created (dry run) in namespace $1 comes back placed on the pool.
kyverno_places() {
  "$KUBECTL" create --dry-run=server -n "$1" -o jsonpath='{.spec.nodeSelector.accelerator}' -f - <<'EOF' |
apiVersion: v1
kind: Pod
metadata:
  name: kyverno-probe
spec:
  restartPolicy: Never
  containers:
    - name: probe
      image: busybox
      resources:
        limits:
          nvidia.com/gpu: 1
EOF
    grep -qx nvidia
}

policy_ready() {
  [ "$("$KUBECTL" get clusterpolicy gpu-pool-placement -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

if [ "$with_kyverno" = true ]; then
  say "starting Kyverno (scripts/e2e-cluster kyverno $E2E_DIR start; its first build takes a while)"
  kyverno_started=true
  scripts/e2e-cluster kyverno "$E2E_DIR" start >&2 || fail "Kyverno did not start"
  # shellcheck disable=SC1091
  source "$E2E_DIR/kyverno/kyverno.env"
  "$KUBECTL" apply -f "$kyverno_policy" >/dev/null 2>&1 || fail "could not apply $kyverno_policy"
  bench_wait 120 "the ClusterPolicy of $kyverno_policy to be ready" policy_ready || exit 1
  current_ns=bench-latency-kyverno-probe-$$
  bench_namespace "$current_ns" false "$AIADMIT_E2E_KYVERNO_LABEL=true" || fail "could not make namespace $current_ns"
  bench_wait 120 "Kyverno to place a GPU Pod (dry run) in $current_ns" kyverno_places "$current_ns" || exit 1
  bench_delete_namespace "$current_ns"
  current_ns=""
fi

processes=(aiadmit kube-apiserver)
[ "$with_kyverno" = false ] || processes+=(kyverno)
pids=()
for name in "${processes[@]}"; do
  pid=$(pid_of "$name") || exit 1
  pids+=("$pid")
done

# utime + stime of a process, in clock ticks (after the command name, which
# is in parentheses, they are the 12th and 13th fields).
cpu_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  awk '{print $12 + $13}' <<<"${stat##*) }"
}

apiserver_metrics() { "$KUBECTL" get --raw /metrics >"$1" || fail "kubectl get --raw /metrics failed"; }
aiadmit_metrics() {
  curl -sf --max-time 10 --cacert "$AIADMIT_E2E_AIADMIT_CA" \
    --cert "$AIADMIT_E2E_AIADMIT_CLIENT_CERT" --key "$AIADMIT_E2E_AIADMIT_CLIENT_KEY" \
    "https://127.0.0.1:$AIADMIT_E2E_AIADMIT_PORT/metrics" >"$1" || fail "aiadmit's /metrics did not answer (is it running?)"
}

kyverno_metrics() {
  curl -sf --max-time 10 "$AIADMIT_E2E_KYVERNO_METRICS" >"$1" || fail "Kyverno's /metrics did not answer (is it running?)"
}

# Each process's clock ticks, on one line.
all_cpu_ticks() {
  local i ticks=()
  for i in "${!pids[@]}"; do
    ticks+=("$(cpu_ticks "${pids[$i]}")") || fail "${processes[$i]} (pid ${pids[$i]}) exited"
  done
  echo "${ticks[*]}"
}

namespace_gone() { ! "$KUBECTL" get namespace "$1" >/dev/null 2>&1; }

# snapshot_metrics WHEN: /metrics of the API server and the webhooks into
# $out.SOURCE-WHEN.prom.
snapshot_metrics() {
  apiserver_metrics "$out.apiserver-$1.prom"
  aiadmit_metrics "$out.aiadmit-$1.prom"
  [ "$with_kyverno" = false ] || kyverno_metrics "$out.kyverno-$1.prom"
}

# measure MODE ROUND: COUNT Pods in a namespace of their own. MODE off: GPU
# Pods, namespace not opted in; plain: Pods without a GPU in an opted-in
# namespace (the API server evaluates aiadmit's matchConditions, which skip
# it); on: GPU Pods in an opted-in namespace (aiadmit is called); kyverno:
# GPU Pods in a namespace that Kyverno's webhook selects, not opted in.
#
# Every run's namespace has a name never used before: for 30 s after a
# namespace is deleted, the API server's NamespaceLifecycle admission looks a
# namespace of that name up in storage on every create in it (twice per
# create when a webhook's patch makes it run again), which would be charged
# to whichever mode came next.
measure() {
  local mode=$1 round=$2 ns opted_in=true gpu=--gpu status=0 out label=""
  ns=bench-latency-$mode-$round-$$
  case "$mode" in
    off) opted_in=false ;;
    plain) gpu="" ;;
    kyverno)
      opted_in=false
      label=$AIADMIT_E2E_KYVERNO_LABEL=true
      ;;
  esac
  out=$work/$mode-$round
  current_ns=$ns
  bench_namespace "$ns" "$opted_in" "$label" || fail "could not make namespace $ns"
  snapshot_metrics before
  local before after
  before=$(all_cpu_ticks)
  # shellcheck disable=SC2086 # $gpu: one flag or none
  "$podload" --kubeconfig "$KUBECONFIG" --namespace "$ns" --count "$count" --clients "$clients" $gpu \
    --timeout "$((60 + count / 5))s" -o json --samples "$out.samples" >"$out.json" || status=$?
  # 1: some creates failed (the report counts them); anything else: no report.
  if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
    fail "podload failed in $ns (exit $status)"
  fi
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
l = r["latencyMilliseconds"]
print("e2e-latency: round %s %-7s %d created, %d errors, %d stamped by aiadmit, %d placed on the GPU pool, "
      "%.0f/s, p50 %.2f ms, p99 %.2f ms" % (sys.argv[2], sys.argv[3], r["created"], r["errors"],
      r["stampedByAiadmit"], r["placedOnGpuPool"], r["throughputPerSecond"], l["p50"], l["p99"]), file=sys.stderr)
for e in r["errorSamples"]:
    print("e2e-latency:   error: " + e, file=sys.stderr)' "$out.json" "$round" "$mode"
  after=$(all_cpu_ticks)
  python3 -c 'import sys; print(" ".join(str(int(a) - int(b)) for a, b in zip(sys.argv[1].split(), sys.argv[2].split())))' \
    "$after" "$before" >"$out.cpu"
  snapshot_metrics after
  # The Pods are never bound to a Node (no scheduler serves their
  # schedulerName), so the namespace controller removes them at once, a
  # collection at a time; this waits for that before the next round.
  bench_delete_namespace "$ns"
  bench_wait $((120 + count / 10)) "namespace $ns and its Pods to be deleted" namespace_gone "$ns" ||
    fail "namespace $ns was not deleted in time ($("$KUBECTL" get pods -n "$ns" --no-headers 2>/dev/null | wc -l) Pods left)"
  current_ns=""
}

load_before=$(uptime)
modes=(off plain on)
[ "$with_kyverno" = false ] || modes+=(kyverno)
say "$rounds round(s) of $count Pod creates from $clients clients each: GPU Pods not opted in (off)," \
  "Pods without a GPU opted in (plain), GPU Pods opted in (on)$([ "$with_kyverno" = false ] ||
    echo ", GPU Pods in Kyverno's namespace (kyverno)")"
for round in $(seq "$rounds"); do
  for mode in "${modes[@]}"; do
    measure "$mode" "$round"
  done
done
load_after=$(uptime)

kube_version=$("$KUBECTL" get --raw /version | python3 -c 'import json, sys; print(json.load(sys.stdin)["gitVersion"])')
aiadmit_version=$("$root/build/aiadmit" --version)
commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  commit="$commit with uncommitted changes"
fi

BENCH_MODES="${modes[*]}" BENCH_KYVERNO="${AIADMIT_E2E_KYVERNO_VERSION:-}" BENCH_KYVERNO_POLICY=$kyverno_policy \
  BENCH_COMMAND=$command_line \
  BENCH_PODLOAD="build/kube/podload --kubeconfig \$KUBECONFIG --namespace NS --count $count --clients $clients [--gpu] -o json" \
  BENCH_KUBE=$kube_version BENCH_AIADMIT="$aiadmit_version ($commit)" BENCH_GO=$(go version | cut -d' ' -f3) \
  BENCH_CORES=$(nproc) BENCH_LOAD_BEFORE=${load_before#*load average: } BENCH_LOAD_AFTER=${load_after#*load average: } \
  BENCH_HZ=$(getconf CLK_TCK) python3 bench/e2e_latency.py "$work" "$rounds"

