#include "webhook/serving/background_worker.h"

#include <algorithm>

namespace aiadmit {

BackgroundWorker::BackgroundWorker(size_t maxPending, size_t threads) : maxPending_(maxPending) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
    threads_.emplace_back([this] { run(); });
}

BackgroundWorker::~BackgroundWorker() {
  stop();
}

bool BackgroundWorker::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || queue_.size() + running_ >= maxPending_) return false;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void BackgroundWorker::stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // Destroyed here, outside the lock: what the jobs hold goes with them.
}

void BackgroundWorker::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    job();
    job = nullptr;
    lock.lock();
    --running_;
  }
}

}  // namespace aiadmit
