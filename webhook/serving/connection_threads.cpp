#include "webhook/serving/connection_threads.h"

#include <pthread.h>

#include <chrono>

namespace aiadmit {

namespace {
// An idle thread beyond the kept ones exits after this long without work.
constexpr auto kIdleExit = std::chrono::seconds(30);
}  // namespace

ConnectionThreads::ConnectionThreads(size_t maxThreads, size_t stackBytes, size_t idleThreadsKept)
    : maxThreads_(maxThreads), stackBytes_(stackBytes), idleThreadsKept_(idleThreadsKept) {}

ConnectionThreads::~ConnectionThreads() {
  shutdown();
}

bool ConnectionThreads::startThread() {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, stackBytes_);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const bool started =
      pthread_create(&thread, &attributes, &ConnectionThreads::threadMain, this) == 0;
  pthread_attr_destroy(&attributes);
  if (started) ++threads_;
  return started;
}

void ConnectionThreads::enqueue(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  tasks_.push_back(std::move(task));
  // Start a thread when none is idle for this task; at the cap, it waits.
  if (idle_ < tasks_.size() && threads_ < maxThreads_) startThread();
  work_.notify_one();
}

void* ConnectionThreads::threadMain(void* self) {
  static_cast<ConnectionThreads*>(self)->work();
  return nullptr;
}

void ConnectionThreads::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    const bool gotWork =
        work_.wait_for(lock, kIdleExit, [&] { return !tasks_.empty() || shutdown_; });
    --idle_;
    if (tasks_.empty()) {
      if (shutdown_ || (!gotWork && idle_ >= idleThreadsKept_)) break;
      continue;
    }
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // release captured state outside the lock
    lock.lock();
  }
  --threads_;
  exited_.notify_all();
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  shutdown_ = true;
  // Tasks queued while no thread could be started still get one.
  if (!tasks_.empty() && threads_ == 0) startThread();
  work_.notify_all();
  exited_.wait(lock, [&] { return threads_ == 0; });
}

size_t ConnectionThreads::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_;
}

}  // namespace aiadmit
