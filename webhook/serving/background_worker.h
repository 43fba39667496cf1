// Work that must not hold an I/O thread: loading a profiles ConfigMap's YAML
// takes milliseconds for the shipped set and more for a large one, while the
// I/O threads answer every admission. One thread of its own runs the jobs in
// turn; at most `maxPending` are queued or running, and past that a job is
// refused at once, so no client can make it queue without bound.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace aiadmit {

class BackgroundWorker {
 public:
  explicit BackgroundWorker(size_t maxPending);
  // Stops: see stop().
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Queues `job`; false (and `job` not kept) when maxPending are already
  // queued or running, or after stop().
  bool submit(std::function<void()> job);
  // Lets the running job finish, drops the queued ones and joins the thread.
  void stop();

 private:
  void run();

  const size_t maxPending_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false;  // a job is being run
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace aiadmit
