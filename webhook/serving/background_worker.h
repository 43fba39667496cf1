// Work that must not hold an I/O thread: loading a profiles ConfigMap's YAML
// takes milliseconds for the shipped set and more for a large one, and a
// large review takes milliseconds to decide, while the I/O threads answer
// every admission. Threads of its own run the jobs in turn; at most
// `maxPending` are queued or running, and past that a job is refused at
// once, so no client can make it queue without bound.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace aiadmit {

class BackgroundWorker {
 public:
  explicit BackgroundWorker(size_t maxPending, size_t threads = 1);
  // Stops: see stop().
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Queues `job`; false (and `job` not kept) when maxPending are already
  // queued or running, or after stop().
  bool submit(std::function<void()> job);
  // Lets the running jobs finish, drops the queued ones and joins the threads.
  void stop();

 private:
  void run();

  const size_t maxPending_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  size_t running_ = 0;  // jobs being run
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace aiadmit
