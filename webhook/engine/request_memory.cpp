#include "webhook/engine/request_memory.h"

namespace aiadmit {

namespace {

// Pools' chunks beyond the first, which only a large review needs: as large
// as glibc maps on its own (serve's M_MMAP_THRESHOLD), so that they go back
// to the system when the review ends. Smaller ones came from the deciding
// thread's arena and stayed there: sixteen 3 MiB reviews left 87 MB behind.
constexpr size_t kFurtherChunkBytes = 1024 * 1024;

struct ThreadMemory {
  RequestMemory memory;
  bool leased = false;
};

ThreadMemory& threadMemory() {
  // Made on a thread's first review, freed when the thread ends; on the heap,
  // as a thread_local object itself would be in every thread's static TLS.
  thread_local std::unique_ptr<ThreadMemory> memory;
  if (memory == nullptr) memory = std::make_unique<ThreadMemory>();
  return *memory;
}

}  // namespace

RequestMemory::RequestMemory()
    : document_(documentChunk_.data(), documentChunk_.size(), kFurtherChunkBytes, &documentBase_),
      stack_(stackChunk_.data(), stackChunk_.size(), kFurtherChunkBytes, &stackBase_) {}

void RequestMemory::reset() {
  document_.Clear();
  stack_.Clear();
  if (buffer_.capacity() > kKeptBufferBytes) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
}

RequestMemoryLease::RequestMemoryLease() {
  ThreadMemory& thread = threadMemory();
  if (thread.leased) {
    own_ = std::make_unique<RequestMemory>();
    memory_ = own_.get();
  } else {
    thread.leased = true;
    memory_ = &thread.memory;
  }
}

RequestMemoryLease::~RequestMemoryLease() {
  if (own_ != nullptr) return;
  memory_->reset();
  threadMemory().leased = false;
}

}  // namespace aiadmit
