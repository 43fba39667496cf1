#!/usr/bin/env bash
# The admission latency aiadmit adds to each Pod create through a real API
# server (scripts/e2e-cluster: etcd, kube-apiserver, controller manager and
# scheduler built from source, aiadmit registered by its own manifests).
#
#   bench/e2e-latency.sh [COUNT] [CLIENTS]        (default: 1000 4)
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
#   on     GPU Pods in an opted-in namespace: aiadmit is called.
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
#  - CPU seconds of the aiadmit and kube-apiserver processes
#    (/proc/PID/stat utime+stime) per 1,000 creates.
# It exits 1 when a create failed, or when aiadmit did not stamp every Pod of
# the "on" runs (or stamped one of the others).
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

count=${1:-1000}
clients=${2:-4}
rounds=${BENCH_ROUNDS:-3}
for value in "$count" "$clients" "$rounds"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: [BENCH_ROUNDS=N] bench/e2e-latency.sh [COUNT] [CLIENTS] (whole numbers, at least 1)" >&2
    exit 2
  }
done
if [ "$#" -gt 2 ]; then
  echo "usage: [BENCH_ROUNDS=N] bench/e2e-latency.sh [COUNT] [CLIENTS]" >&2
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
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [ -z "$current_ns" ] ||
    "$KUBECTL" delete namespace "$current_ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
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
aiadmit_pid=$(pid_of aiadmit)
apiserver_pid=$(pid_of kube-apiserver)

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
    "https://127.0.0.1:$AIADMIT_E2E_AIADMIT_PORT/metrics" >"$1" || fail "aiadmit's /metrics did not answer (is it running?)"
}

namespace_gone() { ! "$KUBECTL" get namespace "$1" >/dev/null 2>&1; }

# measure MODE ROUND: COUNT Pods in a namespace of their own. MODE off: GPU
# Pods, namespace not opted in; plain: Pods without a GPU in an opted-in
# namespace (the API server evaluates aiadmit's matchConditions, which skip
# it); on: GPU Pods in an opted-in namespace (aiadmit is called).
#
# Every run's namespace has a name never used before: for 30 s after a
# namespace is deleted, the API server's NamespaceLifecycle admission looks a
# namespace of that name up in storage on every create in it (twice per
# create when a webhook's patch makes it run again), which would be charged
# to whichever mode came next.
measure() {
  local mode=$1 round=$2 ns opted_in=true gpu=--gpu status=0 out
  ns=bench-latency-$mode-$round-$$
  case "$mode" in
    off) opted_in=false ;;
    plain) gpu="" ;;
  esac
  out=$work/$mode-$round
  current_ns=$ns
  bench_namespace "$ns" "$opted_in" || fail "could not make namespace $ns"
  apiserver_metrics "$out.apiserver-before.prom"
  aiadmit_metrics "$out.aiadmit-before.prom"
  local aiadmit_before apiserver_before aiadmit_after apiserver_after
  aiadmit_before=$(cpu_ticks "$aiadmit_pid") || fail "aiadmit (pid $aiadmit_pid) exited"
  apiserver_before=$(cpu_ticks "$apiserver_pid") || fail "kube-apiserver (pid $apiserver_pid) exited"
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
print("e2e-latency: round %s %-5s %d created, %d errors, %d stamped by aiadmit, %.0f/s, p50 %.2f ms, p99 %.2f ms"
      % (sys.argv[2], sys.argv[3], r["created"], r["errors"], r["stampedByAiadmit"], r["throughputPerSecond"],
         l["p50"], l["p99"]), file=sys.stderr)
for e in r["errorSamples"]:
    print("e2e-latency:   error: " + e, file=sys.stderr)' "$out.json" "$round" "$mode"
  aiadmit_after=$(cpu_ticks "$aiadmit_pid") || fail "aiadmit (pid $aiadmit_pid) exited during the run in $ns"
  apiserver_after=$(cpu_ticks "$apiserver_pid") || fail "kube-apiserver (pid $apiserver_pid) exited during the run in $ns"
  echo "$((aiadmit_after - aiadmit_before)) $((apiserver_after - apiserver_before))" >"$out.cpu"
  apiserver_metrics "$out.apiserver-after.prom"
  aiadmit_metrics "$out.aiadmit-after.prom"
  # The Pods are never bound to a Node (no scheduler serves their
  # schedulerName), so the namespace controller removes them at once, a
  # collection at a time; this waits for that before the next round.
  bench_delete_namespace "$ns"
  bench_wait $((120 + count / 10)) "namespace $ns and its Pods to be deleted" namespace_gone "$ns" ||
    fail "namespace $ns was not deleted in time ($("$KUBECTL" get pods -n "$ns" --no-headers 2>/dev/null | wc -l) Pods left)"
  current_ns=""
}

load_before=$(uptime)
say "$rounds round(s) of $count Pod creates from $clients clients each: GPU Pods not opted in (off)," \
  "Pods without a GPU opted in (plain), GPU Pods opted in (on)"
for round in $(seq "$rounds"); do
  measure off "$round"
  measure plain "$round"
  measure on "$round"
done
load_after=$(uptime)

kube_version=$("$KUBECTL" get --raw /version | python3 -c 'import json, sys; print(json.load(sys.stdin)["gitVersion"])')
aiadmit_version=$("$root/build/aiadmit" --version)
commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  commit="$commit with uncommitted changes"
fi

BENCH_COMMAND=$command_line \
  BENCH_PODLOAD="build/kube/podload --kubeconfig \$KUBECONFIG --namespace NS --count $count --clients $clients [--gpu] -o json" \
  BENCH_KUBE=$kube_version BENCH_AIADMIT="$aiadmit_version ($commit)" BENCH_GO=$(go version | cut -d' ' -f3) \
  BENCH_CORES=$(nproc) BENCH_LOAD_BEFORE=${load_before#*load average: } BENCH_LOAD_AFTER=${load_after#*load average: } \
  BENCH_HZ=$(getconf CLK_TCK) python3 - "$work" "$rounds" <<'EOF'
import json, math, os, re, sys

work, rounds = sys.argv[1], int(sys.argv[2])
env = os.environ
hz = float(env["BENCH_HZ"])
modes = ("off", "plain", "on")

# ---------------------------------------------------------------- Prometheus text

sample_line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
label_pair = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

def parse(path):
    series = {}
    with open(path) as f:
        for line in f:
            m = sample_line.match(line)
            if m:
                name, labels, value = m.groups()
                series[(name, tuple(sorted(label_pair.findall(labels or ""))))] = float(value)
    return series

def run_delta(mode, r, source):
    prefix = os.path.join(work, "%s-%d.%s" % (mode, r, source))
    before, after = parse(prefix + "-before.prom"), parse(prefix + "-after.prom")
    return {k: v - before.get(k, 0.0) for k, v in after.items()}

def summed(mode, source):
    total = {}
    for r in range(1, rounds + 1):
        for k, v in run_delta(mode, r, source).items():
            total[k] = total.get(k, 0.0) + v
    return total

def select(series, name, where):
    """(labels, value) of each series of name whose labels match where (an
    absent label matches "")."""
    for (n, labels), v in series.items():
        d = dict(labels)
        if n == name and all(d.get(k, "") == want for k, want in where.items()):
            yield d, v

def total(series, name, where):
    return sum(v for _, v in select(series, name, where))

def histogram(series, base, where):
    """Cumulative buckets [(upper bound, count)] summed over the series of
    base that match where, with the sum and count."""
    buckets = {}
    for d, v in select(series, base + "_bucket", where):
        buckets[float(d["le"])] = buckets.get(float(d["le"]), 0.0) + v
    return (sorted(buckets.items()), total(series, base + "_sum", where),
            total(series, base + "_count", where))

def quantile(q, buckets):
    """Prometheus' histogram_quantile: linear interpolation within the bucket
    that holds the rank (from 0 for the first); the highest finite bound
    when the rank falls in +Inf."""
    if len(buckets) < 2 or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    b = next(i for i, (_, c) in enumerate(buckets) if c >= rank or i == len(buckets) - 1)
    if math.isinf(buckets[b][0]):
        return buckets[-2][0]
    start, below = (0.0, 0.0) if b == 0 else buckets[b - 1]
    inside = buckets[b][1] - below
    return buckets[b][0] if inside <= 0 else start + (buckets[b][0] - start) * (rank - below) / inside

def share_within(buckets, bound):
    within = next((c for le, c in buckets if le == bound), None)
    return None if within is None or not buckets[-1][1] else within / buckets[-1][1]

# ---------------------------------------------------------------- formatting

def ms(v):
    return "—" if v is None else "%.2f ms" % v

def difference(unit, digits):
    def show(v, base, bold=False):
        if v is None or base is None:
            return "—"
        text = "%+.*f %s" % (digits, v - base, unit)
        return "**%s**" % text if bold else text
    return show

added = difference("ms", 2)

def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])

def to_ms(seconds):  # None stays None
    return None if seconds is None else seconds * 1000

# Three columns a mode and two differences, both against "off".
compared = ["", "without aiadmit", "with aiadmit", "added by aiadmit", "opted in, no GPU", "added"]

def compare(label, values, bold=False, show=ms, diff=added):
    """A row of the three modes and the two differences to "off" (none
    when diff is None)."""
    off, on, plain = values["off"], values["on"], values["plain"]
    if diff is None:
        return [label, show(off), show(on), "", show(plain), ""]
    return [label, show(off), show(on), diff(on, off, bold), show(plain), diff(plain, off)]

out = []
def say(*lines):
    out.extend(lines)

# ---------------------------------------------------------------- client side

def nearest_rank(values, p):
    return values[max(0, min(len(values) - 1, math.ceil(p / 100 * len(values)) - 1))]

runs = {m: [] for m in modes}
samples = {m: [] for m in modes}
cpu = {m: [0, 0] for m in modes}  # ticks of aiadmit, kube-apiserver
for m in modes:
    for r in range(1, rounds + 1):
        prefix = os.path.join(work, "%s-%d" % (m, r))
        with open(prefix + ".json") as f:
            runs[m].append(json.load(f))
        with open(prefix + ".samples") as f:
            samples[m] += [float(line) for line in f if line.strip()]
        with open(prefix + ".cpu") as f:
            for i, ticks in enumerate(f.read().split()):
                cpu[m][i] += int(ticks)

created = {m: sum(r["created"] for r in runs[m]) for m in modes}
errors = {m: sum(r["errors"] for r in runs[m]) for m in modes}
stamped = {m: sum(r["stampedByAiadmit"] for r in runs[m]) for m in modes}
seconds = {m: sum(r["seconds"] for r in runs[m]) for m in modes}
client = {}
for m in modes:
    v = sorted(samples[m])
    client[m] = {} if not v else {"mean": sum(v) / len(v), "p50": nearest_rank(v, 50),
                                  "p90": nearest_rank(v, 90), "p99": nearest_rank(v, 99), "max": v[-1]}

say("### Admission latency through the real API server", "",
    "`%s`; each run: `%s` (`--gpu` but in the plain runs)." % (env["BENCH_COMMAND"].strip(), env["BENCH_PODLOAD"]), "",
    "Kubernetes %s (etcd, kube-apiserver, controller manager and scheduler built from source), "
    "%s, podload built with %s; %s cores shared, load average before %s, after %s." % (
        env["BENCH_KUBE"], env["BENCH_AIADMIT"], env["BENCH_GO"], env["BENCH_CORES"],
        env["BENCH_LOAD_BEFORE"], env["BENCH_LOAD_AFTER"]), "",
    "Without aiadmit: GPU Pods in a namespace that is not opted in (the API server alone). With aiadmit: the "
    "same Pods in an opted-in namespace (applied.mutate and applied.validate called). Opted in, no GPU: Pods "
    "without any resources in the opted-in namespace, which aiadmit's matchConditions keep from it (what every "
    "other Pod of an opted-in namespace pays). Added: the difference to \"without aiadmit\". %d round%s of the "
    "three, pooled." % (rounds, "" if rounds == 1 else "s"),
    "", "Per Pod create, as the client sees it:", "")
rows = [compare("creates (errors)", {m: "%d (%d)" % (created[m], errors[m]) for m in modes}, show=str, diff=None),
        compare("throughput", {m: "%.0f/s" % (created[m] / seconds[m]) if seconds[m] else "—" for m in modes},
                show=str, diff=None)]
for key in ("mean", "p50", "p90", "p99", "max"):
    rows.append(compare(key, {m: client[m].get(key) for m in modes}, bold=key != "max"))
rows.append(compare("p50 of each round", {m: ", ".join("%.1f" % r["latencyMilliseconds"]["p50"] for r in runs[m])
                                          for m in modes}, show=str, diff=None))
rows.append(compare("stamped by aiadmit", {m: str(stamped[m]) for m in modes}, show=str, diff=None))
say(table(compared, rows), "")

# ---------------------------------------------------------------- API server

api = {m: summed(m, "apiserver") for m in modes}

base = "apiserver_request_duration_seconds"
where = {"verb": "POST", "resource": "pods", "subresource": ""}
server = {}
for m in modes:
    buckets, s, n = histogram(api[m], base, where)
    server[m] = {"n": "%d" % n, "mean": to_ms(s / n) if n else None,
                 "p50": to_ms(quantile(0.5, buckets)), "p99": to_ms(quantile(0.99, buckets))}
say("The API server's own time per create, `%s{verb=\"POST\",resource=\"pods\"}` (mean from "
    "`_sum`/`_count`; p50/p99 interpolated in its buckets):" % base, "")
rows = [compare("creates", {m: server[m]["n"] for m in modes}, show=str, diff=None)]
rows += [compare(k, {m: server[m][k] for m in modes}, bold=k == "mean") for k in ("mean", "p50", "p99")]
say(table(compared, rows), "")

base = "apiserver_admission_webhook_admission_duration_seconds"
say("Each aiadmit webhook, `%s` over the runs with aiadmit (buckets 5, 25, 100, 500 ms, ...: the mean is "
    "exact, while p50/p99 interpolated in the first bucket only say \"under 5 ms\"):" % base, "")
rows = []
names = sorted({d["name"] for d, v in select(api["on"], base + "_count", {}) if v > 0 and "aiadmit" in d["name"]})
for name in names:
    for kind in sorted({d["type"] for d, v in select(api["on"], base + "_count", {"name": name}) if v > 0}):
        where = {"name": name, "type": kind}
        buckets, s, n = histogram(api["on"], base, where)
        operations = sorted({d["operation"] for d, v in select(api["on"], base + "_count", where) if v > 0})
        within = share_within(buckets, 0.005)
        rows.append(["`%s`" % name, kind, ",".join(operations), "%d" % n,
                     "%d" % total(api["on"], base + "_count", dict(where, rejected="true")),
                     ms(to_ms(s / n) if n else None), "—" if within is None else "%.0f%%" % (within * 100),
                     ms(to_ms(quantile(0.5, buckets))), ms(to_ms(quantile(0.99, buckets)))])
say(table(["webhook", "type", "operation", "calls", "rejected", "mean", "under 5 ms", "p50", "p99"],
          rows or [["(none counted)", "", "", "0", "", "", "", "", ""]]), "")
for m, what in (("off", "without aiadmit"), ("plain", "opted in without a GPU")):
    stray = sum(v for d, v in select(api[m], base + "_count", {}) if "aiadmit" in d["name"])
    if stray:
        say("%d aiadmit webhook calls were counted during the runs %s." % (stray, what), "")

# The API server's whole webhook admission plugins: finding the webhooks
# that match (namespace selector, CEL matchConditions), the calls, applying
# the patch. The metric has no resource label: every CREATE in the window
# counts, and the Pods are nearly all of them.
base = "apiserver_admission_controller_admission_duration_seconds"
rows = []
for plugin in ("MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"):
    where = {"name": plugin, "operation": "CREATE"}
    rows.append(compare(plugin, {m: to_ms(total(api[m], base + "_sum", where) / created[m]) if created[m] else None
                                 for m in modes}))
say("The API server's webhook admission plugins (matching, matchConditions, the calls, the patch), "
    "`%s` summed over CREATEs, per Pod create:" % base, "")
say(table(["plugin"] + compared[1:], rows), "")

# ---------------------------------------------------------------- aiadmit

own = summed("on", "aiadmit")
base = "aiadmit_request_duration_seconds"
rows = []
for endpoint in sorted({d["endpoint"] for d, v in select(own, base + "_count", {}) if v > 0}):
    buckets, s, n = histogram(own, base, {"endpoint": endpoint})
    rows.append(["`/%s`" % endpoint, "%d" % n, "%.0f µs" % (s / n * 1e6),
                 "%.0f µs" % (quantile(0.5, buckets) * 1e6), ms(to_ms(quantile(0.99, buckets)))])
if rows:
    say("aiadmit's own time per review, from the first bytes of the request read to the encoded answer (its "
        "`%s`, p50/p99 from its buckets; it includes waiting for the rest of the request):" % base, "")
    say(table(["endpoint", "reviews", "mean", "p50", "p99"], rows), "")

def seconds_shown(v):
    return "—" if v is None else "%.3f s" % v

def per_thousand(values):
    return {m: None if values[m] is None or not created[m] else values[m] / created[m] * 1000 for m in modes}

rows = [compare(process, per_thousand({m: cpu[m][i] / hz for m in modes}), show=seconds_shown,
                diff=difference("s", 3))
        for i, process in enumerate(("aiadmit", "kube-apiserver"))]
# The Go runtime's own accounting of the API server: its garbage collector's
# CPU (an estimate, and in whole cycles: one per heap's worth of allocation,
# so it comes in steps) and the bytes it allocated, which noise hardly moves.
gc = {m: api[m].get(("go_cpu_classes_gc_total_cpu_seconds_total", ())) for m in modes}
if None not in gc.values():
    rows.append(compare("kube-apiserver's GC (Go runtime estimate)", per_thousand(gc), show=seconds_shown,
                        diff=difference("s", 3)))
say("CPU time per 1,000 creates (utime + stime, `/proc/PID/stat`, clock ticks of %d ms):" % (1000 / hz), "")
say(table(["process"] + compared[1:], rows), "")
allocated = {m: api[m].get(("go_memstats_alloc_bytes_total", ())) for m in modes}
if None not in allocated.values():
    kb = {m: allocated[m] / created[m] / 1000 if created[m] else None for m in modes}
    say("Memory the API server allocates per create (`go_memstats_alloc_bytes_total`; everything it did "
        "meanwhile counts, the Pods nearly all of it):", "")
    say(table(compared, [compare("kube-apiserver", kb, show=lambda v: "—" if v is None else "%.0f KB" % v,
                                 diff=difference("KB", 0))]), "")
reviews = sum(v for d, v in select(api["on"], "apiserver_admission_webhook_admission_duration_seconds_count", {})
              if "aiadmit" in d["name"])
if reviews:
    say("aiadmit: %.3f CPU seconds per 1,000 reviews (%d reviews: a /mutate and a /validate per create)."
        % (cpu["on"][0] / hz / reviews * 1000, reviews))
say("", "Published anchor, not a comparison (another machine, another load): Kyverno's scaling documentation "
    "gives 44.28 ms on average (p90 67.64 ms) for the whole Pod create through the API server with Kyverno "
    "in the path (1 replica, the 17 Pod Security Standards policies in Enforce mode), at 100 k6 virtual users "
    "and 1,000 iterations, on KinD on a 32-core EPYC 7502P; it gives no figure without Kyverno.")
print("\n".join(out))

problems = []
if sum(errors.values()):
    problems.append("%d creates failed (the errors are above)" % sum(errors.values()))
if stamped["on"] != created["on"]:
    problems.append("aiadmit stamped %d of the %d Pods created in the opted-in namespace: it was not in "
                    "the path of every create" % (stamped["on"], created["on"]))
if stamped["off"] or stamped["plain"]:
    problems.append("%d Pods that aiadmit should not have seen carry its stamp" % (stamped["off"] + stamped["plain"]))
for p in problems:
    print("e2e-latency: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
