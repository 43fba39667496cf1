#!/usr/bin/env bash
# The admission latency aiadmit adds to each Pod create through a real API
# server (scripts/e2e-cluster: etcd, kube-apiserver, controller manager and
# scheduler built from source, aiadmit registered by its own manifests),
# beside what Kyverno's CEL policies (--kyverno) and Kubernetes' own admission
# policies (--policies) add making the same placement.
#
#   bench/e2e-latency.sh [--kyverno] [--policies] [COUNT] [CLIENTS]   (default: 1000 4)
#
# Namespaces of several kinds, each selected by one path only. In BENCH_ROUNDS
# rounds (default 3), the load generator (tests/e2e/kube/podload: client-go,
# CLIENTS goroutines on one keep-alive connection, no client-side rate limit)
# creates COUNT Pods in each mode, one after the other. The GPU Pods ask for
# nvidia.com/gpu: 1 and declare their class (aiadmit.dev/workload: batch, on
# which aiadmit's exported policies act) in every mode:
#   off     GPU Pods in a namespace no webhook or policy selects;
#   plain   Pods without any resources in a namespace labelled
#           aiadmit.dev/enabled=true: the API server evaluates aiadmit's
#           matchConditions, which keep them from aiadmit (the cost every
#           other Pod of an opted-in namespace pays);
#   on      GPU Pods in a namespace labelled aiadmit.dev/enabled=true: the
#           API server calls applied.mutate.aiadmit.dev and
#           applied.validate.aiadmit.dev;
#   kyverno (--kyverno) GPU Pods where Kyverno's admission controller (built
#           from its Go module, run beside the API server by
#           `scripts/e2e-cluster kyverno DIR start`) is called with the
#           MutatingPolicy bench/operators/kyverno/gpu-pool-mutating-policy.yaml,
#           which adds the GPU pool's toleration and node selector as aiadmit
#           does (namespace label kyverno.aiadmit.dev/enabled=true);
#   kyverno-native (--kyverno) the same policy with spec.autogen, from which
#           Kyverno generates a native MutatingAdmissionPolicy: the API server
#           evaluates it, Kyverno is not called (namespaces named
#           bench-latency-kyverno-native-*: the generated binding keeps no
#           namespace selector);
#   native  (--policies) a hand-written MutatingAdmissionPolicy and
#           ValidatingAdmissionPolicy, bench/policies/gpu-pool-native.yaml: the
#           same placement and the GPU checks CEL can express on the Pod
#           (native.aiadmit.dev/enabled=true);
#   exported (--policies) `aiadmit profiles export --admission-policies
#           profiles`, the shipped profiles as native policies, their
#           bindings moved to namespaces labelled
#           policies.aiadmit.dev/enabled=true (no aiadmit webhook is called).
# The Pods name a scheduler that no scheduler serves, so kube-scheduler stays
# idle. Each run has a new namespace, deleted (and gone) before the next run
# starts, so etcd stays small and no deletion runs beside a measurement.
#
# Reported, as markdown: a summary row per mode (added p50 and p99 per
# create, the API server's admission plugins and CPU per create, the webhook
# process's CPU), then the detail:
#  - per create, as the client sees it: mean, p50, p90, p99 and max of each
#    mode over all rounds, and the differences to "off";
#  - from the API server's /metrics, the change over the runs of
#    apiserver_admission_webhook_admission_duration_seconds for each webhook
#    and of apiserver_request_duration_seconds for POST pods: the mean (exact,
#    from _sum/_count) and p50/p99 estimated from the buckets by linear
#    interpolation, as Prometheus' histogram_quantile does;
#  - aiadmit's own time per review (its aiadmit_request_duration_seconds);
#  - the API server's admission plugins per create (webhooks and admission
#    policies: matching, matchConditions, the calls or the CEL, the patch);
#  - CPU seconds of the aiadmit, kube-apiserver (and Kyverno) processes
#    (/proc/PID/stat utime+stime) per 1,000 creates.
# It exits 1 when a create failed, when aiadmit (or its exported policies)
# did not stamp every Pod of its runs (or stamped one of the others), when a
# path did not place every Pod of its runs on the GPU pool (or one of off's or
# plain's was), or when a webhook was called in another mode's runs. Kyverno,
# when started here, is stopped at exit; the policies applied here are
# deleted.
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
usage="usage: [BENCH_ROUNDS=N] bench/e2e-latency.sh [--kyverno] [--policies] [COUNT] [CLIENTS]"
with_kyverno=false
with_policies=false
while [ "$#" -gt 0 ]; do
  case "$1" in
    --kyverno) with_kyverno=true ;;
    --policies) with_policies=true ;;
    *) break ;;
  esac
  shift
done

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
kyverno_policy=bench/operators/kyverno/gpu-pool-mutating-policy.yaml
native_policies=bench/policies/gpu-pool-native.yaml
kyverno_started=false
applied=() # files of policies applied here, deleted at exit
cleanup() {
  local status=$? file
  trap - EXIT INT TERM
  [ -z "$current_ns" ] ||
    "$KUBECTL" delete namespace "$current_ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  for file in "${applied[@]}"; do
    "$KUBECTL" delete -f "$file" --ignore-not-found >/dev/null 2>&1 || true
  done
  if [ "$kyverno_started" = true ]; then
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

# The namespace label (KEY=VALUE) that selects a mode's path, beside
# aiadmit.dev/enabled=true for plain and on.
mode_label() {
  case "$1" in
    kyverno) echo "$AIADMIT_E2E_KYVERNO_LABEL=true" ;;
    kyverno-native) echo kyverno-native.aiadmit.dev/enabled=true ;; # its matchCondition reads the name
    native) echo native.aiadmit.dev/enabled=true ;;
    exported) echo policies.aiadmit.dev/enabled=true ;;
  esac
}

# A GPU Pod as podload makes it, created (dry run) in namespace $1, comes
# back placed on the pool.
places() {
  "$KUBECTL" create --dry-run=server -n "$1" -o jsonpath='{.spec.nodeSelector.accelerator}' -f - <<'EOF' |
apiVersion: v1
kind: Pod
metadata:
  name: placement-probe
  annotations:
    aiadmit.dev/workload: batch
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

# wait_placed MODE: until a GPU Pod created in a namespace of MODE is placed
# (a policy takes effect once the API server or Kyverno has compiled it).
wait_placed() {
  current_ns=bench-latency-$1-probe-$$
  bench_namespace "$current_ns" false "$(mode_label "$1")" || fail "could not make namespace $current_ns"
  bench_wait 120 "a GPU Pod (dry run) to be placed in $current_ns ($1)" places "$current_ns" || exit 1
  bench_delete_namespace "$current_ns"
  current_ns=""
}

mutating_policy_ready() {
  [ "$("$KUBECTL" get mutatingpolicy "$1" -o jsonpath='{.status.conditionStatus.ready}')" = true ]
}

apply_policies() {
  "$KUBECTL" apply -f "$1" >/dev/null || fail "could not apply $1"
  applied+=("$1")
}

# with_binding_label KEY: the objects kubectl prints with -o json (on stdin,
# one after another), as one List with every binding's namespace selector
# set to KEY=true.
with_binding_label() {
  python3 -c 'import json, sys
text, decoder, at, items = sys.stdin.read(), json.JSONDecoder(), 0, []
while text[at:].strip():
    o, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
    items += o.get("items", [o]) if o.get("kind") == "List" else [o]
for o in items:
    if o["kind"].endswith("Binding"):
        o["spec"]["matchResources"] = {"namespaceSelector": {"matchLabels": {sys.argv[1]: "true"}}}
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)' "$1"
}

if [ "$with_kyverno" = true ]; then
  say "starting Kyverno (scripts/e2e-cluster kyverno $E2E_DIR start; its first build takes a while)"
  kyverno_started=true
  scripts/e2e-cluster kyverno "$E2E_DIR" start >&2 || fail "Kyverno did not start"
  # shellcheck disable=SC1091
  source "$E2E_DIR/kyverno/kyverno.env"
  apply_policies "$kyverno_policy"
  # The same policy again, for Kyverno to generate a native one from: with
  # its pod-controller rules off (Kyverno generates none for a policy that
  # has them), and scoped by a matchCondition on the namespace's name, since
  # the generated policy and binding keep no namespace selector.
  "$KUBECTL" create --dry-run=client -o json -f "$kyverno_policy" | python3 -c 'import json, sys
p = json.load(sys.stdin)
p["metadata"]["name"] = "gpu-pool-placement-generated"
p["spec"]["autogen"] = {"mutatingAdmissionPolicy": {"enabled": True}, "podControllers": {"controllers": []}}
p["spec"]["matchConstraints"].pop("namespaceSelector")
p["spec"]["matchConditions"].insert(0, {"name": "in-a-kyverno-native-run",
                                        "expression": "request.namespace.startsWith(\x27bench-latency-kyverno-native-\x27)"})
json.dump(p, sys.stdout)' >"$work/kyverno-generated.json"
  apply_policies "$work/kyverno-generated.json"
  bench_wait 120 "the MutatingPolicy of $kyverno_policy to be ready" \
    mutating_policy_ready gpu-pool-placement-cel || exit 1
  bench_wait 120 "Kyverno to generate a MutatingAdmissionPolicy" \
    "$KUBECTL" get mutatingadmissionpolicy mpol-gpu-pool-placement-generated || exit 1
  wait_placed kyverno
  wait_placed kyverno-native
fi

if [ "$with_policies" = true ]; then
  apply_policies "$native_policies"
  # The shipped profiles exported, their bindings moved to a label of their
  # own, so that aiadmit's webhooks are not called beside them.
  "$root/build/aiadmit" profiles export --admission-policies profiles -o "$work/exported.yaml" 2>/dev/null ||
    fail "aiadmit profiles export --admission-policies profiles failed"
  "$KUBECTL" create --dry-run=client -o json -f "$work/exported.yaml" |
    with_binding_label "$(mode_label exported | cut -d= -f1)" >"$work/exported.json"
  apply_policies "$work/exported.json"
  wait_placed native
  wait_placed exported
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

# measure MODE ROUND: COUNT Pods in a namespace of their own, labelled for
# MODE (see the top of this file): GPU Pods declaring the batch class in
# every mode but plain, whose Pods ask for nothing.
#
# Every run's namespace has a name never used before: for 30 s after a
# namespace is deleted, the API server's NamespaceLifecycle admission looks a
# namespace of that name up in storage on every create in it (twice per
# create when a webhook's patch makes it run again), which would be charged
# to whichever mode came next.
measure() {
  local mode=$1 round=$2 ns opted_in=false gpu=(--gpu --workload batch) status=0 out label
  ns=bench-latency-$mode-$round-$$
  label=$(mode_label "$mode")
  case "$mode" in
    on) opted_in=true ;;
    plain)
      opted_in=true
      gpu=()
      ;;
  esac
  out=$work/$mode-$round
  current_ns=$ns
  bench_namespace "$ns" "$opted_in" "$label" || fail "could not make namespace $ns"
  snapshot_metrics before
  local before after
  before=$(all_cpu_ticks)
  "$podload" --kubeconfig "$KUBECONFIG" --namespace "$ns" --count "$count" --clients "$clients" "${gpu[@]}" \
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
[ "$with_kyverno" = false ] || modes+=(kyverno kyverno-native)
[ "$with_policies" = false ] || modes+=(native exported)
say "$rounds round(s) of $count Pod creates from $clients clients in each mode: ${modes[*]}"
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
  BENCH_NATIVE_POLICIES=$native_policies \
  BENCH_COMMAND=$command_line \
  BENCH_PODLOAD="build/kube/podload --kubeconfig \$KUBECONFIG --namespace NS --count $count --clients $clients [--gpu --workload batch] -o json" \
  BENCH_KUBE=$kube_version BENCH_AIADMIT="$aiadmit_version ($commit)" BENCH_GO=$(go version | cut -d' ' -f3) \
  BENCH_CORES=$(nproc) BENCH_LOAD_BEFORE=${load_before#*load average: } BENCH_LOAD_AFTER=${load_after#*load average: } \
  BENCH_HZ=$(getconf CLK_TCK) python3 bench/e2e_latency.py "$work" "$rounds"

