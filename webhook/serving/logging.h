// One JSON object per line on stdout. Request lines carry identity and
// decisions only (uid, kind, namespace, name, class, profile, decision, rule
// IDs, latency), never an object's contents, which may hold secrets.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "webhook/engine/engine.h"

namespace aiadmit {

// "trace", "debug", "info", "warn", "error", "off"; false for an unknown level.
bool setupLogging(std::string_view level);

using LogField = std::pair<std::string_view, std::string_view>;
void logInfo(std::string_view message, std::initializer_list<LogField> fields = {});
// Start, stop, reload and rotation events: logged at info, and kept at warn
// and error levels too, which only quieten per-request lines.
void logLifecycle(std::string_view message, std::initializer_list<LogField> fields = {});
void logWarn(std::string_view message, std::initializer_list<LogField> fields = {});
void logError(std::string_view message, std::initializer_list<LogField> fields = {});

void logRequest(Endpoint endpoint, const ReviewAnswer& answer, double seconds);

}  // namespace aiadmit
