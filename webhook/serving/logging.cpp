#include "webhook/serving/logging.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/warnings.h"

namespace aiadmit {

namespace {

// How long the writer collects lines between two writes while they keep coming.
constexpr std::chrono::milliseconds kBatchInterval{20};
// A field's value at most, cut on a UTF-8 boundary and ending in "..." when
// longer: a request's names are at most 253 bytes in Kubernetes, but a forged
// review may carry megabytes in them, and a line must stay a line.
constexpr size_t kMaxFieldBytes = 512;

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
  void start(size_t capacityBytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacityBytes_ = capacityBytes;
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
    if (droppable && pending_.size() + line.size() > capacityBytes_) {
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
  size_t capacityBytes_ = kDefaultLogQueueBytes;
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

// A line is written as RapidJSON's Writer would write it (the same bytes),
// straight into one string: per request, a Writer and a printf of the
// time stamp cost more than the rest of the line.
void field(std::string& line, std::string_view key, std::string_view value) {
  line.push_back(',');
  appendJsonString(line, key);
  line.push_back(':');
  if (value.size() <= kMaxFieldBytes) return appendJsonString(line, value);
  appendJsonString(line, cutAtUtf8(value, kMaxFieldBytes));
}

void numberField(std::string& line, std::string_view key, int64_t value) {
  line.push_back(',');
  appendJsonString(line, key);
  line.push_back(':');
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  line.append(digits, static_cast<size_t>(end - digits));
}

// "2026-11-30T10:00:00.123Z". The date and time of the current second are
// formatted once per second and thread.
void appendTimestamp(std::string& line) {
  struct Second {
    int64_t unix = -1;
    char text[64];  // room for any int the fields could hold, so the format never truncates
  };
  thread_local Second second;
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t unix = millis / 1000;
  if (unix != second.unix) {
    const std::time_t seconds = static_cast<std::time_t>(unix);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    std::snprintf(second.text, sizeof second.text, "%04d-%02d-%02dT%02d:%02d:%02d.",
                  utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                  utc.tm_sec);
    second.unix = unix;
  }
  const auto fraction = static_cast<int>(millis % 1000);
  line.push_back('"');
  line.append(second.text);
  line.push_back(static_cast<char>('0' + fraction / 100));
  line.push_back(static_cast<char>('0' + fraction / 10 % 10));
  line.push_back(static_cast<char>('0' + fraction % 10));
  line += "Z\"";
}

std::string begin(std::string_view level, std::string_view message) {
  std::string line;
  line.reserve(384);
  line += R"({"ts":)";
  appendTimestamp(line);
  field(line, "level", level);
  field(line, "msg", message);
  return line;
}

void finish(std::string line, bool droppable) {
  line += "}\n";
  lineQueue().push(std::move(line), droppable);
}

void emit(Level level, std::string_view levelName, std::string_view message,
          std::initializer_list<LogField> fields) {
  if (!shouldLog(level)) return;
  std::string line = begin(levelName, message);
  for (const auto& [key, value] : fields) field(line, key, value);
  finish(std::move(line), false);
}

}  // namespace

bool setupLogging(std::string_view level, size_t queueBytes) {
  static constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};
  int parsed = -1;
  for (int i = 0; i <= kOff; ++i) {
    if (level == kNames[i]) parsed = i;
  }
  if (level == "warning") parsed = kWarn;
  if (level == "err") parsed = kError;
  if (parsed < 0) return false;
  currentLevel.store(parsed);
  lineQueue().start(queueBytes);
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
  std::string line = begin("info", message);
  for (const auto& [key, value] : fields) field(line, key, value);
  finish(std::move(line), false);
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
  std::string line = begin(level == kWarn ? "warn" : "info", "admission");
  field(line, "endpoint", endpointName(endpoint));
  field(line, "uid", answer.uid);
  field(line, "operation", answer.operation);
  field(line, "kind", answer.kind);
  field(line, "namespace", answer.namespaceName);
  field(line, "name", answer.name);
  field(line, "class", className(answer.evaluation.workloadClass));
  field(line, "profile", answer.evaluation.profile);
  field(line, "decision", decisionName(answer.decision));
  line += R"(,"rules":[)";
  bool first = true;
  for (const auto* list :
       {&answer.evaluation.denials, &answer.evaluation.warnings, &answer.evaluation.audited}) {
    for (const Violation& violation : *list) {
      if (!first) line.push_back(',');
      first = false;
      appendJsonString(line, violation.rule.name());
    }
  }
  line.push_back(']');
  numberField(line, "latency_us", static_cast<int64_t>(seconds * 1e6));
  numberField(line, "status", answer.httpStatus);
  finish(std::move(line), true);
}

}  // namespace aiadmit
