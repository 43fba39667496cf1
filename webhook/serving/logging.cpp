#include "webhook/serving/logging.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

namespace aiadmit {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// How long the writer collects lines between two writes while they keep coming.
constexpr std::chrono::milliseconds kBatchInterval{20};

enum Level { kTrace, kDebug, kInfo, kWarn, kError, kOff };

std::atomic<int> currentLevel{kInfo};

bool shouldLog(Level level) {
  return level >= currentLevel.load(std::memory_order_relaxed) &&
         currentLevel.load(std::memory_order_relaxed) != kOff;
}

void writeAll(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stdout is gone; nothing better to do with the line
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Lines from every thread to stdout, written by one thread in batches.
class LineQueue {
 public:
  void start(size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
    if (writer_.joinable()) return;
    // Signals are for the server's control loop, never for this thread.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    writer_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  // Never blocks on the writer: a droppable line over the bound is counted instead.
  void push(std::string line, bool droppable) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!writer_.joinable()) {
      lock.unlock();
      writeAll(line);
      return;
    }
    if (droppable && pendingLines_ >= capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    pending_ += line;
    ++pendingLines_;
    const bool wake = writerWaiting_;
    writerWaiting_ = false;
    lock.unlock();
    if (wake) wakeWriter_.notify_one();
  }

  void flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!writer_.joinable()) return;
    const uint64_t target = queued_ + pendingLines_;
    writerWaiting_ = false;
    wakeWriter_.notify_one();
    written_.wait(lock, [&] { return writtenLines_ >= target; });
  }

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  [[noreturn]] void run() {
    std::string batch;
    for (;;) {
      size_t lines = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        while (pendingLines_ == 0) {
          writerWaiting_ = true;
          wakeWriter_.wait(lock);
        }
        batch.swap(pending_);
        lines = pendingLines_;
        queued_ += lines;
        pendingLines_ = 0;
      }
      writeAll(batch);
      batch.clear();
      if (batch.capacity() > (1u << 20)) std::string().swap(batch);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        writtenLines_ += lines;
        written_.notify_all();
      }
      // Under load, lines are collected for a while before the next write:
      // a wake-up and a write per batch, not per line. Idle, the writer
      // sleeps until a line comes.
      std::this_thread::sleep_for(kBatchInterval);
    }
  }

  std::mutex mutex_;
  std::condition_variable wakeWriter_;
  std::condition_variable written_;
  std::thread writer_;
  std::string pending_;
  size_t pendingLines_ = 0;
  size_t capacity_ = 8192;
  uint64_t queued_ = 0;
  uint64_t writtenLines_ = 0;
  bool writerWaiting_ = false;
  std::atomic<uint64_t> dropped_{0};
};

// Never destroyed: the writer thread runs until the process exits.
LineQueue& lineQueue() {
  static auto* queue = new LineQueue();
  return *queue;
}

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

void finish(rapidjson::StringBuffer& buffer, Writer& writer, bool droppable) {
  writer.EndObject();
  std::string line(buffer.GetString(), buffer.GetSize());
  line += '\n';
  lineQueue().push(std::move(line), droppable);
}

void emit(Level level, std::string_view levelName, std::string_view message,
          std::initializer_list<LogField> fields) {
  if (!shouldLog(level)) return;
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, levelName, message);
  for (const auto& [key, value] : fields) field(writer, key, value);
  finish(buffer, writer, false);
}

}  // namespace

bool setupLogging(std::string_view level, size_t queueLines) {
  static constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};
  int parsed = -1;
  for (int i = 0; i <= kOff; ++i) {
    if (level == kNames[i]) parsed = i;
  }
  if (level == "warning") parsed = kWarn;
  if (level == "err") parsed = kError;
  if (parsed < 0) return false;
  currentLevel.store(parsed);
  lineQueue().start(queueLines);
  return true;
}

void flushLogging() {
  lineQueue().flush();
}

uint64_t logLinesDropped() {
  return lineQueue().dropped();
}

void logInfo(std::string_view message, std::initializer_list<LogField> fields) {
  emit(kInfo, "info", message, fields);
}
void logLifecycle(std::string_view message, std::initializer_list<LogField> fields) {
  if (currentLevel.load(std::memory_order_relaxed) == kOff) return;
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, "info", message);
  for (const auto& [key, value] : fields) field(writer, key, value);
  finish(buffer, writer, false);
}

void logWarn(std::string_view message, std::initializer_list<LogField> fields) {
  emit(kWarn, "warn", message, fields);
}
void logError(std::string_view message, std::initializer_list<LogField> fields) {
  emit(kError, "error", message, fields);
}

void logRequest(Endpoint endpoint, const ReviewAnswer& answer, double seconds) {
  const Level level = answer.decision == Decision::Errored ? kWarn : kInfo;
  if (!shouldLog(level)) return;
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  begin(writer, level == kWarn ? "warn" : "info", "admission");
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
  finish(buffer, writer, true);
}

}  // namespace aiadmit
