"""The report of bench/e2e-latency.sh, from the files its runs leave in WORK:
for each MODE and round R, MODE-R.json (podload's report), MODE-R.samples (each
create's latency), MODE-R.cpu (CPU clock ticks of aiadmit, kube-apiserver and
Kyverno over the run) and MODE-R.SOURCE-{before,after}.prom (/metrics of the
API server, aiadmit and Kyverno). Prints markdown; exits 1 when a create
failed or a path did not change every Pod it should have (or changed one it
should not).

    python3 bench/e2e_latency.py WORK ROUNDS      (settings in BENCH_* variables)
"""
import json, math, os, re, sys

work, rounds = sys.argv[1], int(sys.argv[2])
env = os.environ
hz = float(env["BENCH_HZ"])
# off, plain and on; kyverno and kyverno-native with --kyverno; native and
# exported with --policies.
modes = tuple(env["BENCH_MODES"].split())
kyverno = "kyverno" in modes
compared_modes = [m for m in modes if m != "off"]  # each beside "off"
# A column heading, and what the path does to each GPU Pod of its runs.
titles = {"off": "no admission", "plain": "opted in, no GPU", "on": "aiadmit",
          "kyverno": "Kyverno MutatingPolicy", "kyverno-native": "Kyverno's generated native policy",
          "native": "hand-written native policies", "exported": "aiadmit's exported policies"}
described = {
    "off": "GPU Pods in a namespace that no webhook or admission policy selects (the API server alone)",
    "plain": "Pods without any resources in a namespace opted in to aiadmit, which aiadmit's matchConditions keep "
             "from it (what every other Pod of an opted-in namespace pays)",
    "on": "the GPU Pods in a namespace opted in to aiadmit (applied.mutate and applied.validate called, the "
          "shipped profiles)",
    "kyverno": "the GPU Pods where Kyverno (%s) is called instead, with a MutatingPolicy that adds the same "
               "toleration and node selector (`%s`)" % (env.get("BENCH_KYVERNO", ""),
                                                       env.get("BENCH_KYVERNO_POLICY", "")),
    "kyverno-native": "the GPU Pods where the native MutatingAdmissionPolicy that Kyverno generated from the same "
                      "policy (`spec.autogen`) places them, evaluated by the API server (Kyverno not called)",
    "native": "the GPU Pods where a hand-written MutatingAdmissionPolicy places them and a ValidatingAdmissionPolicy "
              "checks their GPUs (`%s`)" % env.get("BENCH_NATIVE_POLICIES", ""),
    "exported": "the GPU Pods where aiadmit's shipped profiles act as native policies (`aiadmit profiles export "
                "--admission-policies profiles`, bindings moved to a namespace label of their own; no aiadmit "
                "webhook called)",
}
stamping = {"on", "exported"}
placing = {"on", "kyverno", "kyverno-native", "native", "exported"}

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

# A column a mode, each but "off" followed by its difference to "off".
compared = ["", titles["off"]] + [c for m in compared_modes for c in (titles[m], "added")]

def compare(label, values, bold=False, show=ms, diff=added):
    """A row of the modes and their differences to "off" (none when diff is
    None); the bold ones are the webhooks'."""
    off = values["off"]
    row = [label, show(off)]
    for m in compared_modes:
        row += [show(values[m]), "" if diff is None else diff(values[m], off, bold and m != "plain")]
    return row

out = []
def say(*lines):
    out.extend(lines)

# ---------------------------------------------------------------- client side

def nearest_rank(values, p):
    return values[max(0, min(len(values) - 1, math.ceil(p / 100 * len(values)) - 1))]

runs = {m: [] for m in modes}
samples = {m: [] for m in modes}
processes = ("aiadmit", "kube-apiserver") + (("Kyverno",) if kyverno else ())
cpu = {m: [0] * len(processes) for m in modes}  # clock ticks of each process
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
placed = {m: sum(r.get("placedOnGpuPool", 0) for r in runs[m]) for m in modes}
seconds = {m: sum(r["seconds"] for r in runs[m]) for m in modes}
client = {}
for m in modes:
    v = sorted(samples[m])
    client[m] = {} if not v else {"mean": sum(v) / len(v), "p50": nearest_rank(v, 50),
                                  "p90": nearest_rank(v, 90), "p99": nearest_rank(v, 99), "max": v[-1]}

say("### Admission latency through the real API server", "",
    "`%s`; each run: `%s` (`--gpu --workload batch` but in the plain runs)." % (
        env["BENCH_COMMAND"].strip(), env["BENCH_PODLOAD"]), "",
    "Kubernetes %s (etcd, kube-apiserver, controller manager and scheduler built from source), "
    "%s, podload built with %s; %s cores shared, load average before %s, after %s." % (
        env["BENCH_KUBE"], env["BENCH_AIADMIT"], env["BENCH_GO"], env["BENCH_CORES"],
        env["BENCH_LOAD_BEFORE"], env["BENCH_LOAD_AFTER"]), "",
    " ".join("%s: %s." % (titles[m] if titles[m].startswith("aiadmit") else titles[m][0].upper() + titles[m][1:],
                          described[m]) for m in modes) +
    " The GPU Pods ask for `nvidia.com/gpu: 1` and declare `aiadmit.dev/workload: batch`. Added: the difference "
    "to \"%s\". %d round%s of the %d, pooled." % (titles["off"], rounds, "" if rounds == 1 else "s", len(modes)),
    "")
summary_at = len(out)  # the summary goes here once every figure is known
say("Per Pod create, as the client sees it:", "")
rows = [compare("creates (errors)", {m: "%d (%d)" % (created[m], errors[m]) for m in modes}, show=str, diff=None),
        compare("throughput", {m: "%.0f/s" % (created[m] / seconds[m]) if seconds[m] else "—" for m in modes},
                show=str, diff=None)]
for key in ("mean", "p50", "p90", "p99", "max"):
    rows.append(compare(key, {m: client[m].get(key) for m in modes}, bold=key != "max"))
rows.append(compare("p50 of each round", {m: ", ".join("%.1f" % r["latencyMilliseconds"]["p50"] for r in runs[m])
                                          for m in modes}, show=str, diff=None))
rows.append(compare("stamped by aiadmit", {m: str(stamped[m]) for m in modes}, show=str, diff=None))
rows.append(compare("placed on the GPU pool", {m: str(placed[m]) for m in modes}, show=str, diff=None))
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

def aiadmit_webhook(name):
    return "aiadmit" in name

def kyverno_resource_webhook(name):  # not its webhooks for its own kinds and Leases
    # Those of its ClusterPolicies, and (mpol., nmpol.) of its MutatingPolicies.
    return name.startswith(("mutate.kyverno.svc", "validate.kyverno.svc", "mpol.", "nmpol."))

# Each tool's webhooks, counted over the runs of the mode it is called in.
tools = [("aiadmit", "on", aiadmit_webhook)] + ([("Kyverno", "kyverno", kyverno_resource_webhook)] if kyverno else [])
say("Each %s webhook, `%s` over the runs %s (buckets 5, 25, 100, 500 ms, ...: the mean is "
    "exact, while p50/p99 interpolated in the first bucket only say \"under 5 ms\"):" % (
        "aiadmit and Kyverno" if kyverno else "aiadmit", base, "that call it" if kyverno else "with aiadmit"), "")
rows = []
for _, m, ours in tools:
    names = sorted({d["name"] for d, v in select(api[m], base + "_count", {}) if v > 0 and ours(d["name"])})
    for name in names:
        for kind in sorted({d["type"] for d, v in select(api[m], base + "_count", {"name": name}) if v > 0}):
            where = {"name": name, "type": kind}
            buckets, s, n = histogram(api[m], base, where)
            operations = sorted({d["operation"] for d, v in select(api[m], base + "_count", where) if v > 0})
            within = share_within(buckets, 0.005)
            rows.append(["`%s`" % name, kind, ",".join(operations), "%d" % n,
                         "%d" % total(api[m], base + "_count", dict(where, rejected="true")),
                         ms(to_ms(s / n) if n else None), "—" if within is None else "%.0f%%" % (within * 100),
                         ms(to_ms(quantile(0.5, buckets))), ms(to_ms(quantile(0.99, buckets)))])
say(table(["webhook", "type", "operation", "calls", "rejected", "mean", "under 5 ms", "p50", "p99"],
          rows or [["(none counted)", "", "", "0", "", "", "", "", ""]]), "")
stray_calls = {}
for tool, called_in, ours in tools:
    for m in modes:
        stray = sum(v for d, v in select(api[m], base + "_count", {}) if ours(d["name"])) if m != called_in else 0
        if stray:
            stray_calls[(tool, m)] = stray
            say("%d %s webhook calls were counted during the %s runs." % (stray, tool, m), "")

# The API server's whole webhook admission plugins: finding the webhooks
# that match (namespace selector, CEL matchConditions), the calls, applying
# the patch. The metric has no resource label: every CREATE in the window
# counts, and the Pods are nearly all of them.
base = "apiserver_admission_controller_admission_duration_seconds"
rows = []
plugins = ("MutatingAdmissionWebhook", "ValidatingAdmissionWebhook", "MutatingAdmissionPolicy",
           "ValidatingAdmissionPolicy")
for plugin in plugins:
    where = {"name": plugin, "operation": "CREATE"}
    rows.append(compare(plugin, {m: to_ms(total(api[m], base + "_sum", where) / created[m]) if created[m] else None
                                 for m in modes}))
say("The API server's webhook and admission policy plugins (matching, matchConditions, the calls or the CEL, "
    "the patch), `%s` summed over CREATEs, per Pod create:" % base, "")
say(table(["plugin"] + compared[1:], rows), "")

# Each admission policy's own evaluations (the API server counts one check
# per mutation evaluated, and again when a policy is reinvoked; a policy
# whose matchConditions do not hold is not counted).
rows = []
for kind, base in (("mutating", "apiserver_mutating_admission_policy_check_duration_seconds"),
                   ("validating", "apiserver_validating_admission_policy_check_duration_seconds")):
    for m in modes:
        names = sorted({d["policy"] for d, v in select(api[m], base + "_count", {}) if v > 0})
        n = sum(total(api[m], base + "_count", {"policy": p}) for p in names)
        if n and created[m]:
            rows.append([titles[m], kind, "%d" % len(names), "%.1f" % (n / created[m]),
                         "%.3f ms" % (sum(total(api[m], base + "_sum", {"policy": p}) for p in names)
                                      * 1000 / created[m])])
if rows:
    say("The admission policies' checks as the API server times them "
        "(`apiserver_{mutating,validating}_admission_policy_check_duration_seconds`: one per mutation or "
        "validation pass of a policy whose matchConditions hold, again when it is reinvoked), per create:", "")
    say(table(["path", "kind", "policies that acted", "checks per create", "their time per create"], rows), "")

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
if kyverno:
    base = "kyverno_admission_review_duration_seconds"
    buckets, s, n = histogram(summed("kyverno", "kyverno"), base, {"resource_kind": "Pod"})
    within = share_within(buckets, 0.005)
    if n:
        say("Kyverno's own time per Pod review (its `%s`: %d reviews, %.2f ms on average, %s under 5 ms; its "
            "buckets start at 5 ms)." % (base, n, s / n * 1000, "—" if within is None else "%.0f%%" % (within * 100)),
            "")

def seconds_shown(v):
    return "—" if v is None else "%.3f s" % v

def per_thousand(values):
    return {m: None if values[m] is None or not created[m] else values[m] / created[m] * 1000 for m in modes}

rows = [compare(process, per_thousand({m: cpu[m][i] / hz for m in modes}), show=seconds_shown,
                diff=difference("s", 3))
        for i, process in enumerate(processes)]
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
if kyverno:
    reviews = sum(v for d, v in select(api["kyverno"], "apiserver_admission_webhook_admission_duration_seconds_count",
                                       {}) if kyverno_resource_webhook(d["name"]))
    if reviews:
        # What it spends with no review to answer (leases, informers), from
        # the runs without it, over as long as the runs with it took.
        idle = cpu["off"][2] / hz / seconds["off"] * seconds["kyverno"] if seconds["off"] else 0
        say("", "Kyverno: %.3f CPU seconds per 1,000 reviews (%d reviews: one mutation per create), of which "
            "%.3f s is what it spends meanwhile without any review (its rate in the runs without it)." % (
                cpu["kyverno"][2] / hz / reviews * 1000, reviews, idle / reviews * 1000))
say("", "Published anchor, not a comparison (another machine, another load): Kyverno's scaling documentation "
    "gives 44.28 ms on average (p90 67.64 ms) for the whole Pod create through the API server with Kyverno "
    "in the path (1 replica, the 17 Pod Security Standards policies in Enforce mode), at 100 k6 virtual users "
    "and 1,000 iterations, on KinD on a 32-core EPYC 7502P; it gives no figure without Kyverno.")
# One row a path: what it adds, where the time and CPU go.
plugin_ms = {m: sum(total(api[m], "apiserver_admission_controller_admission_duration_seconds_sum",
                          {"name": p, "operation": "CREATE"}) for p in plugins) * 1000 / created[m]
             if created[m] else None for m in modes}
apiserver_cpu = per_thousand({m: cpu[m][processes.index("kube-apiserver")] / hz for m in modes})
webhook_process = {"on": "aiadmit", "kyverno": "Kyverno"}
webhook_cpu = {m: per_thousand({k: cpu[k][processes.index(webhook_process[m])] / hz for k in modes})[m]
               if m in webhook_process else None for m in modes}

def with_added(values, m, unit="ms", digits=2):
    """values[m], with its difference to "off" in the other paths' rows."""
    v, base = values[m], values["off"]
    if v is None:
        return "—"
    shown = "%.*f %s" % (digits, v, unit)
    return shown if m == "off" or base is None else "%s (**%+.*f**)" % (shown, digits, v - base)

p50 = {m: client[m].get("p50") for m in modes}
p99 = {m: client[m].get("p99") for m in modes}
server_mean = {m: server[m]["mean"] for m in modes}
rows = [[titles[m], with_added(p50, m), with_added(p99, m), with_added(server_mean, m),
         with_added(plugin_ms, m), with_added(apiserver_cpu, m, "s"),
         "—" if webhook_cpu[m] is None else "%.2f s" % webhook_cpu[m], "%d of %d" % (placed[m], created[m])]
        for m in modes]
out[summary_at:summary_at] = [
    "Summary (added: the difference to \"%s\"):" % titles["off"], "",
    table(["path", "p50 per create", "p99 per create", "API server's time per create (mean)",
           "admission plugins per create", "kube-apiserver CPU per 1,000 creates",
           "webhook process CPU per 1,000 creates", "placed on the GPU pool"], rows), ""]
print("\n".join(out))

problems = []
if sum(errors.values()):
    problems.append("%d creates failed (the errors are above)" % sum(errors.values()))
for m in modes:
    if m in stamping and stamped[m] != created[m]:
        problems.append("%d of the %d Pods of the %s runs carry aiadmit's stamp: it was not in the path of every "
                        "create" % (stamped[m], created[m], m))
    if m not in stamping and stamped[m]:
        problems.append("%d Pods of the %s runs, which aiadmit should not have seen, carry its stamp"
                        % (stamped[m], m))
    if m in placing and placed[m] != created[m]:
        problems.append("%d of the %d Pods of the %s runs were placed on the GPU pool: the path did not change "
                        "every create" % (placed[m], created[m], m))
    if m not in placing and placed[m]:
        problems.append("%d Pods of the %s runs, which nothing should have changed, were placed on the GPU pool"
                        % (placed[m], m))
for (tool, m), calls in sorted(stray_calls.items()):
    problems.append("%d %s webhook calls in the %s runs: it was registered for a namespace it should not be"
                    % (calls, tool, m))
for p in problems:
    print("e2e-latency: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
