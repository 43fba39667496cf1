// The memory a decoded review lives in, kept by each thread from one review
// to the next: the copy of the body that the document's strings point into,
// the document's first chunk and its parse stack's. A review the size the
// API server sends then decodes without a call to malloc; a bigger one takes
// further chunks from malloc, given back when it ends.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "webhook/codec/json.h"
#include "webhook/codec/non_copyable.h"

namespace aiadmit {

class RequestMemory : NonCopyable {
 public:
  // The reference Pod's review takes about 12 KiB of values and 1 KiB of
  // stack; a Deployment or a JobSet with several templates a few times that.
  static constexpr size_t kDocumentBytes = 48 * 1024;
  static constexpr size_t kStackBytes = 8 * 1024;
  // A body copy bigger than this is not kept for the next review: one large
  // request must not pin its size in every thread.
  static constexpr size_t kKeptBufferBytes = 256 * 1024;

  RequestMemory();

  std::string& buffer() { return buffer_; }
  JsonAllocator& documentAllocator() { return document_; }
  JsonAllocator& stackAllocator() { return stack_; }

  // Everything given out since the last reset is free again. The document
  // built in it must be gone by then.
  void reset();

 private:
  alignas(16) std::array<char, kDocumentBytes> documentChunk_;
  alignas(16) std::array<char, kStackBytes> stackChunk_;
  // The pools' further chunks come from malloc through these (a pool without
  // one would allocate one with new).
  rapidjson::CrtAllocator documentBase_;
  rapidjson::CrtAllocator stackBase_;
  JsonAllocator document_;
  JsonAllocator stack_;
  std::string buffer_;
};

// The calling thread's RequestMemory while a lease on it is held; a second
// lease on the same thread meanwhile (a review answered inside another) gets
// memory of its own. Given back reset.
class RequestMemoryLease : NonCopyable {
 public:
  RequestMemoryLease();
  ~RequestMemoryLease();
  // A handle: a const lease still gives the memory to allocate in.
  RequestMemory& memory() const { return *memory_; }

 private:
  std::unique_ptr<RequestMemory> own_;  // when the thread's was leased already
  RequestMemory* memory_;
};

}  // namespace aiadmit
