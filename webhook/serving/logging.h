// One JSON object per line on stdout. Request lines carry identity and
// decisions only (uid, kind, namespace, name, class, profile, decision, rule
// IDs, latency), never an object's contents, which may hold secrets.
//
// Lines are handed to a writer thread through a queue bounded in bytes: the
// I/O threads never wait on stdout. A request line that finds the queue full
// is dropped and counted; start, stop, reload and error lines always go in.
// Every field's value is cut to 512 bytes ("..." at the end when it was).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "webhook/engine/engine.h"

namespace aiadmit {

// "trace", "debug", "info", "warn", "error", "off"; false for an unknown level.
// The request lines waiting for the writer at most, in bytes.
inline constexpr size_t kDefaultLogQueueBytes = 4 * 1024 * 1024;
// Starts the writer thread; `queueBytes` bounds the request lines waiting.
bool setupLogging(std::string_view level, size_t queueBytes = kDefaultLogQueueBytes);
// Writes out everything queued; the server calls it before it exits.
void flushLogging();
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
