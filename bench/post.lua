-- wrk script: POSTs the review in $REVIEW on every request and prints one
-- machine-readable RESULT line at the end.
local file = assert(io.open(os.getenv("REVIEW"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("RESULT requests=%d rps=%.0f p50_us=%d p99_us=%d p999_us=%d socket_errors=%d status_errors=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    errors.connect + errors.read + errors.write + errors.timeout, errors.status))
end
