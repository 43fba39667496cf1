// One JSON object per line on stdout. Request lines carry identity and
// decisions only (uid, kind, namespace, name, class, profile, decision, rule
// IDs, latency), never an object's contents, which may hold secrets.
//
// Lines go through spdlog's async logger: its queue and its thread
// (spdlog::details::thread_pool) hand them to a stdout sink whose pattern is
// "%v", so a line is exactly the JSON made here, and which writes them in
// batches (logging.cpp says why). The I/O threads never wait on stdout. The
// queue is bounded: a request line that finds the request lines' budget
// spent is dropped and counted; start, stop, reload and error lines always
// go in, waiting for room if 256 of them already wait.
// Every field's value is cut to 512 bytes ("..." at the end when it was).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "webhook/engine/engine.h"

namespace aiadmit {

// The request lines' budget in the queue, in bytes. A request line is charged
// kLogLineBytes (its slot in spdlog's queue, which the queue allocates up
// front, and its text), or its slot and its text when that is more, so the
// queue holds queueBytes / kLogLineBytes request lines at most: 4,096 for the
// default 4 MiB.
inline constexpr size_t kDefaultLogQueueBytes = 4 * 1024 * 1024;
inline constexpr size_t kLogLineBytes = 1024;
// `level`: "trace", "debug", "info", "warn", "error", "off" (also "warning",
// "err"); false for an unknown level. Starts the logging thread. Before it is
// called, lines are written at once by the thread that logs, at level info.
bool setupLogging(std::string_view level, size_t queueBytes = kDefaultLogQueueBytes);
// Returns once every line logged before the call is written out; the server
// calls it before it exits.
void flushLogging();
// Request lines dropped because the queue was full, since the process started.
uint64_t logLinesDropped();

using LogField = std::pair<std::string_view, std::string_view>;
void logInfo(std::string_view message, std::initializer_list<LogField> fields = {});
// Start, stop, reload and rotation events: logged at info, and kept at warn
// and error levels too, which only quieten per-request lines.
void logLifecycle(std::string_view message, std::initializer_list<LogField> fields = {});
void logWarn(std::string_view message, std::initializer_list<LogField> fields = {});
void logError(std::string_view message, std::initializer_list<LogField> fields = {});

void logRequest(Endpoint endpoint, const ReviewAnswer& answer, double seconds);

}  // namespace aiadmit
