// cpp-httplib serves each connection on one task for the connection's whole
// life, keep-alive included. A fixed pool therefore caps open connections:
// idle or slow clients would pin every worker and new clients would wait.
// This task queue starts a thread per connection on demand (up to a cap),
// with small stacks, keeps a few idle ones for reuse and lets the rest exit.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace aiadmit {

class ConnectionThreads final : public httplib::TaskQueue {
 public:
  ConnectionThreads(size_t maxThreads, size_t stackBytes, size_t idleThreadsKept);
  ~ConnectionThreads() override;

  void enqueue(std::function<void()> task) override;
  // Runs what is queued, waits for running tasks, then returns.
  void shutdown() override;

  size_t threads() const;

 private:
  static void* threadMain(void* self);
  void work();
  bool startThread();  // with mutex_ held

  const size_t maxThreads_;
  const size_t stackBytes_;
  const size_t idleThreadsKept_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable exited_;
  std::deque<std::function<void()>> tasks_;
  size_t threads_ = 0;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace aiadmit
