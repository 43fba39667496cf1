#include "webhook/serving/logging.h"

#include <signal.h>
#include <spdlog/async_logger.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "webhook/codec/json.h"
#include "webhook/codec/warnings.h"

namespace aiadmit {

namespace {

// A field's value at most, cut on a UTF-8 boundary and ending in "..." when
// longer: a request's names are at most 253 bytes in Kubernetes, but a forged
// review may carry megabytes in them, and a line must stay a line.
constexpr size_t kMaxFieldBytes = 512;

// What a request line takes of the queue's budget: at least kLogLineBytes,
// else its slot in spdlog's queue (an async_msg, with room for 250 bytes of
// text) and its text, which a line over 250 bytes holds on the heap. A
// request line is 300-500 bytes; a forged review's can reach a few KiB.
constexpr size_t kSlotBytes = sizeof(spdlog::details::async_msg);
static_assert(kSlotBytes < kLogLineBytes);
size_t requestLineCost(size_t textBytes) {
  return std::max(kLogLineBytes, kSlotBytes + textBytes);
}

// The other lines (start, stop, reload, errors) and flushes in the queue at
// most; one more waits for room, so that the queue never fills and a request
// line never waits.
constexpr size_t kOtherLines = 256;

constexpr char kRequestLoggerName[] = "request";

// How long the logging thread rests after a write while lines keep coming,
// and how much it writes at most in one go.
constexpr std::chrono::milliseconds kBatchInterval{20};
constexpr size_t kBatchBytes = 64 * 1024;

std::atomic<uint64_t> droppedLines{0};

// Lines from every thread to stdout: two loggers over one queue and one
// stdout sink, so that lines come out in the order they were logged. The
// request logger's lines are charged to the budget and dropped past it; the
// other logger's lines wait for room instead. Both loggers post with spdlog's
// `block` policy, which never waits since the charges keep the queue from
// filling: spdlog 1.10's other policy, overrun_oldest, would drop the oldest
// line, a lifecycle line as well as a request line, and it has no
// discard_new.
class LogQueue {
 public:
  // Synchronous: each line written by the thread that logs it.
  LogQueue() : sink_(std::make_shared<spdlog::sinks::stdout_sink_mt>()) {
    sink_->set_pattern("%v");
    requests_ = std::make_shared<spdlog::logger>(kRequestLoggerName, sink_);
    lines_ = std::make_shared<spdlog::logger>("aiadmit", sink_);
  }

  LogQueue(size_t budgetBytes, spdlog::level::level_enum level)
      : budgetBytes_(budgetBytes), sink_(std::make_shared<Output>(*this)) {
    sink_->set_pattern("%v");
    const size_t slots = budgetBytes / kLogLineBytes + kOtherLines;
    // Signals are for the server's control loop, never for this thread.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    pool_ = std::make_shared<spdlog::details::thread_pool>(slots, 1);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    requests_ = std::make_shared<spdlog::async_logger>(kRequestLoggerName, sink_, pool_,
                                                       spdlog::async_overflow_policy::block);
    lines_ = std::make_shared<spdlog::async_logger>("aiadmit", sink_, pool_,
                                                    spdlog::async_overflow_policy::block);
    requests_->set_level(level);
    lines_->set_level(level);
  }

  bool shouldLog(spdlog::level::level_enum level) const { return lines_->should_log(level); }

  // Never waits: a line past the budget is counted instead.
  void request(spdlog::level::level_enum level, std::string_view line) {
    if (pool_) {
      const size_t cost = requestLineCost(line.size());
      size_t charged = chargedBytes_.load(std::memory_order_relaxed);
      do {
        if (charged + cost > budgetBytes_) {
          droppedLines.fetch_add(1, std::memory_order_relaxed);
          return;
        }
      } while (
          !chargedBytes_.compare_exchange_weak(charged, charged + cost, std::memory_order_relaxed));
    }
    requests_->log(level, spdlog::string_view_t(line.data(), line.size()));
  }

  // Waits while kOtherLines other lines wait to be written.
  void line(spdlog::level::level_enum level, std::string_view line) {
    if (pool_) takeOtherSlot();
    lines_->log(level, spdlog::string_view_t(line.data(), line.size()));
  }

  // spdlog 1.10's flush of an async logger only queues the flush: the sink
  // says when it came through, after every line queued before it.
  void flush() {
    if (!pool_) return lines_->flush();
    takeOtherSlot();
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t ticket = ++flushesAsked_;
    lock.unlock();
    lines_->flush();
    lock.lock();
    // Once as many flushes came through as were asked up to this one, the
    // last of them was queued after every line logged before this call.
    flushed_.wait(lock, [&] { return flushesDone_ >= ticket; });
  }

 private:
  // A stdout sink that writes lines together: every 64 KiB, and the rest
  // once no line waits behind them in the queue; then it rests for
  // kBatchInterval while the queue collects the next lines. spdlog's own
  // stdout sink writes and flushes each line, and its thread is woken for
  // each: a write and a wake-up per request, which cost a quarter of the
  // throughput at 64 connections. It tells the queue each line and flush it
  // wrote.
  class Output final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
   public:
    explicit Output(LogQueue& queue) : queue_(queue) {}

   private:
    void sink_it_(const spdlog::details::log_msg& message) override {
      formatter_->format(message, batch_);
      if (std::string_view(message.logger_name.data(), message.logger_name.size()) ==
          kRequestLoggerName) {
        batchCharge_ += requestLineCost(message.payload.size());
      } else {
        ++batchOtherLines_;
      }
      if (batch_.size() >= kBatchBytes) return writeOut();
      if (queue_.pool_->queue_size() > 0) return;
      writeOut();
      std::this_thread::sleep_for(kBatchInterval);
    }
    void flush_() override {
      writeOut();
      queue_.flushed();
    }
    // The lines' room in the queue is given back once they are written.
    void writeOut() {
      std::string_view text(batch_.data(), batch_.size());
      while (!text.empty()) {
        const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // stdout is gone; nothing better to do with the lines
        text.remove_prefix(static_cast<size_t>(n));
      }
      batch_.clear();
      queue_.written(batchCharge_, batchOtherLines_);
      batchCharge_ = 0;
      batchOtherLines_ = 0;
    }

    LogQueue& queue_;
    spdlog::memory_buf_t batch_;
    size_t batchCharge_ = 0;
    size_t batchOtherLines_ = 0;
  };

  void takeOtherSlot() {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return otherLines_ < kOtherLines; });
    ++otherLines_;
  }

  void written(size_t requestCharge, size_t otherLines) {
    if (requestCharge > 0) chargedBytes_.fetch_sub(requestCharge, std::memory_order_relaxed);
    if (otherLines == 0) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      otherLines_ -= otherLines;
    }
    room_.notify_all();
  }

  void flushed() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --otherLines_;
      ++flushesDone_;
    }
    room_.notify_one();
    flushed_.notify_all();
  }

  const size_t budgetBytes_ = 0;
  std::atomic<size_t> chargedBytes_{0};
  std::mutex mutex_;
  std::condition_variable room_;
  std::condition_variable flushed_;
  size_t otherLines_ = 0;
  uint64_t flushesAsked_ = 0;
  uint64_t flushesDone_ = 0;
  std::shared_ptr<spdlog::sinks::sink> sink_;
  std::shared_ptr<spdlog::details::thread_pool> pool_;
  std::shared_ptr<spdlog::logger> requests_;
  std::shared_ptr<spdlog::logger> lines_;
};

// setupLogging's queue; none before it is called. Never destroyed: a thread
// may log through a queue until the process exits.
std::atomic<LogQueue*> currentQueue{nullptr};

// Every queue setupLogging made, the current one last: a queue that is no
// longer current still has its thread and may still be logged through, so
// it stays reachable rather than lost.
std::vector<std::unique_ptr<LogQueue>>& everyQueue() {
  static auto* queues = new std::vector<std::unique_ptr<LogQueue>>();
  return *queues;
}
std::mutex everyQueueMutex;

LogQueue& logQueue() {
  if (LogQueue* queue = currentQueue.load(std::memory_order_acquire)) return *queue;
  static auto* synchronous = new LogQueue();
  return *synchronous;
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

void emit(spdlog::level::level_enum level, std::string_view levelName, std::string_view message,
          std::initializer_list<LogField> fields) {
  LogQueue& queue = logQueue();
  if (!queue.shouldLog(level)) return;
  std::string line = begin(levelName, message);
  for (const auto& [key, value] : fields) field(line, key, value);
  line.push_back('}');  // the sink's pattern ends the line
  queue.line(level, line);
}

}  // namespace

bool setupLogging(std::string_view level, size_t queueBytes) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace},  {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},    {"warn", spdlog::level::warn},
      {"warning", spdlog::level::warn}, {"error", spdlog::level::err},
      {"err", spdlog::level::err},      {"off", spdlog::level::off}};
  const auto* found = std::find_if(std::begin(kLevels), std::end(kLevels),
                                   [&](const auto& entry) { return entry.first == level; });
  if (found == std::end(kLevels)) return false;
  // Lines already queued come out before the new queue's. The previous queue
  // is never destroyed: another thread may still hold it.
  logQueue().flush();
  std::lock_guard<std::mutex> lock(everyQueueMutex);
  auto& queue = everyQueue().emplace_back(std::make_unique<LogQueue>(queueBytes, found->second));
  currentQueue.store(queue.get(), std::memory_order_release);
  return true;
}

void flushLogging() {
  logQueue().flush();
}

uint64_t logLinesDropped() {
  return droppedLines.load(std::memory_order_relaxed);
}

void logInfo(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::info, "info", message, fields);
}
// Passed to spdlog as critical, which every level but off lets through; the
// line says info.
void logLifecycle(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::critical, "info", message, fields);
}

void logWarn(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::warn, "warn", message, fields);
}
void logError(std::string_view message, std::initializer_list<LogField> fields) {
  emit(spdlog::level::err, "error", message, fields);
}

void logRequest(Endpoint endpoint, const ReviewAnswer& answer, double seconds) {
  const bool errored = answer.decision == Decision::Errored;
  const auto level = errored ? spdlog::level::warn : spdlog::level::info;
  LogQueue& queue = logQueue();
  if (!queue.shouldLog(level)) return;
  std::string line = begin(errored ? "warn" : "info", "admission");
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
  line.push_back('}');
  queue.request(level, line);
}

}  // namespace aiadmit
