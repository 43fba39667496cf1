#include "webhook/serving/logging.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace aiadmit {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void field(Writer& writer, std::string_view key, std::string_view value) {
  writer.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void begin(Writer& writer, std::string_view level, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis % 1000));
  writer.StartObject();
  field(writer, "ts", stamp);
  field(writer, "level", level);
  field(writer, "msg", message);
}

void emit(spdlog::level::level_enum level, std::string_view levelName, std::string_view message,
          std::initializer_list<LogField> fields) {
  if (!spdlog::should_log(level)) return;
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, levelName, message);
  for (const auto& [key, value] : fields) field(writer, key, value);
  writer.EndObject();
  spdlog::log(level, "{}", std::string_view(buffer.GetString(), buffer.GetSize()));
}

}  // namespace

bool setupLogging(std::string_view level) {
  auto logger = spdlog::stdout_logger_mt("aiadmit");
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  const auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  spdlog::flush_on(spdlog::level::trace);
  return true;
}

void logInfo(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::info, "info", message, fields);
}
void logLifecycle(std::string_view message, std::initializer_list<LogField> fields) {
  if (spdlog::get_level() == spdlog::level::off) return;
  const auto level = std::max(spdlog::get_level(), spdlog::level::info);
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, "info", message);
  for (const auto& [key, value] : fields) field(writer, key, value);
  writer.EndObject();
  spdlog::log(level, "{}", std::string_view(buffer.GetString(), buffer.GetSize()));
}

void logWarn(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::warn, "warn", message, fields);
}
void logError(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::err, "error", message, fields);
}

void logRequest(Endpoint endpoint, const ReviewAnswer& answer, double seconds) {
  const auto level =
      answer.decision == Decision::Errored ? spdlog::level::warn : spdlog::level::info;
  if (!spdlog::should_log(level)) return;
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, level == spdlog::level::warn ? "warn" : "info", "admission");
  field(writer, "endpoint", endpointName(endpoint));
  field(writer, "uid", answer.uid);
  field(writer, "operation", answer.operation);
  field(writer, "kind", answer.kind);
  field(writer, "namespace", answer.namespaceName);
  field(writer, "name", answer.name);
  field(writer, "class", className(answer.evaluation.workloadClass));
  field(writer, "profile", answer.evaluation.profile);
  field(writer, "decision", decisionName(answer.decision));
  writer.Key("rules");
  writer.StartArray();
  for (const auto* list :
       {&answer.evaluation.denials, &answer.evaluation.warnings, &answer.evaluation.audited}) {
    for (const Violation& violation : *list) {
      const std::string name = violation.rule.name();
      writer.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    }
  }
  writer.EndArray();
  writer.Key("latency_us");
  writer.Int64(static_cast<int64_t>(seconds * 1e6));
  writer.Key("status");
  writer.Int(answer.httpStatus);
  writer.EndObject();
  spdlog::log(level, "{}", std::string_view(buffer.GetString(), buffer.GetSize()));
}

}  // namespace aiadmit
