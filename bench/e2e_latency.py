"""The report of bench/e2e-latency.sh, from the files its runs leave in WORK:
for each MODE and round R, MODE-R.json (podload's report), MODE-R.samples (each
create's latency), MODE-R.cpu (CPU clock ticks of aiadmit, kube-apiserver and
Kyverno over the run) and MODE-R.SOURCE-{before,after}.prom (/metrics of the
API server, aiadmit and Kyverno). Prints markdown; exits 1 when a create
failed or a webhook did not change every Pod it should have (or changed one
it should not).

    python3 bench/e2e_latency.py WORK ROUNDS      (settings in BENCH_* variables)
"""
import json, math, os, re, sys

work, rounds = sys.argv[1], int(sys.argv[2])
env = os.environ
hz = float(env["BENCH_HZ"])
# off, plain and on; kyverno with --kyverno.
modes = tuple(env["BENCH_MODES"].split())
kyverno = "kyverno" in modes

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
compared = ["", "no webhook" if kyverno else "without aiadmit", "with aiadmit", "added by aiadmit",
            "opted in, no GPU", "added"] + (["with Kyverno", "added by Kyverno"] if kyverno else [])

def compare(label, values, bold=False, show=ms, diff=added):
    """A row of the modes and their differences to "off" (none when diff is
    None); the bold ones are the webhooks'."""
    off = values["off"]
    row = [label, show(off)]
    for m in ("on", "plain", "kyverno")[:3 if kyverno else 2]:
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
    "`%s`; each run: `%s` (`--gpu` but in the plain runs)." % (env["BENCH_COMMAND"].strip(), env["BENCH_PODLOAD"]), "",
    "Kubernetes %s (etcd, kube-apiserver, controller manager and scheduler built from source), "
    "%s, podload built with %s; %s cores shared, load average before %s, after %s." % (
        env["BENCH_KUBE"], env["BENCH_AIADMIT"], env["BENCH_GO"], env["BENCH_CORES"],
        env["BENCH_LOAD_BEFORE"], env["BENCH_LOAD_AFTER"]), "",
    "Without aiadmit: GPU Pods in a namespace that is not opted in (the API server alone). With aiadmit: the "
    "same Pods in an opted-in namespace (applied.mutate and applied.validate called). Opted in, no GPU: Pods "
    "without any resources in the opted-in namespace, which aiadmit's matchConditions keep from it (what every "
    "other Pod of an opted-in namespace pays).%s Added: the difference to \"%s\". %d round%s of the "
    "%s, pooled." % (
        " With Kyverno (%s): the same GPU Pods in a namespace where Kyverno's webhook is called instead, with "
        "a ClusterPolicy that adds the same toleration and node selector (`%s`)." % (
            env.get("BENCH_KYVERNO", ""), env.get("BENCH_KYVERNO_POLICY", "")) if kyverno else "",
        compared[1], rounds, "" if rounds == 1 else "s", "four" if kyverno else "three"),
    "", "Per Pod create, as the client sees it:", "")
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
    return name.startswith(("mutate.kyverno.svc", "validate.kyverno.svc"))

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
print("\n".join(out))

problems = []
if sum(errors.values()):
    problems.append("%d creates failed (the errors are above)" % sum(errors.values()))
if stamped["on"] != created["on"]:
    problems.append("aiadmit stamped %d of the %d Pods created in the opted-in namespace: it was not in "
                    "the path of every create" % (stamped["on"], created["on"]))
for m in ("on",) + (("kyverno",) if kyverno else ()):
    if placed[m] != created[m]:
        problems.append("%d of the %d Pods of the %s runs were placed on the GPU pool: the webhook did not "
                        "change every create" % (placed[m], created[m], m))
others = [m for m in modes if m != "on"]
if sum(stamped[m] for m in others):
    problems.append("%d Pods that aiadmit should not have seen carry its stamp" % sum(stamped[m] for m in others))
if placed["off"] or placed["plain"]:
    problems.append("%d Pods that no webhook should have changed were placed on the GPU pool"
                    % (placed["off"] + placed["plain"]))
for (tool, m), calls in sorted(stray_calls.items()):
    problems.append("%d %s webhook calls in the %s runs: it was registered for a namespace it should not be"
                    % (calls, tool, m))
for p in problems:
    print("e2e-latency: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
