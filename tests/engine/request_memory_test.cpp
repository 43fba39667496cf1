// The memory a thread keeps from one review to the next: reused, never shared
// by two reviews at once, and given back empty.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "webhook/engine/admission.h"
#include "webhook/engine/request_memory.h"

namespace aiadmit {
namespace {

const char* kReview = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
  "request":{"uid":"u-%","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE",
  "namespace":"ml","name":"p-%","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-%","labels":{@"last":"label"}},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}})";

// The review with each % replaced by `tag`, and `labels` before its last label.
std::string review(const std::string& tag, const std::string& labels = "") {
  std::string text = kReview;
  for (size_t at = text.find('%'); at != std::string::npos; at = text.find('%', at + tag.size()))
    text.replace(at, 1, tag);
  return text.replace(text.find('@'), 1, labels);
}

TEST(RequestMemory, OneThreadReusesItsMemoryForTheNextLease) {
  RequestMemory* first = nullptr;
  {
    RequestMemoryLease lease;
    first = &lease.memory();
    first->buffer() = "the body";
    ASSERT_NE(first->documentAllocator().Malloc(100), nullptr);
    ASSERT_NE(first->stackAllocator().Malloc(100), nullptr);
  }
  RequestMemoryLease again;
  EXPECT_EQ(&again.memory(), first);
  // Given back empty: nothing of the last review is left in it.
  EXPECT_TRUE(again.memory().buffer().empty());
  EXPECT_EQ(again.memory().documentAllocator().Size(), 0u);
  EXPECT_EQ(again.memory().stackAllocator().Size(), 0u);
}

TEST(RequestMemory, ASecondLeaseOnTheSameThreadGetsMemoryOfItsOwn) {
  RequestMemoryLease outer;
  outer.memory().buffer() = "outer body";
  RequestMemory* inner = nullptr;
  {
    RequestMemoryLease nested;
    inner = &nested.memory();
    EXPECT_NE(inner, &outer.memory());
    nested.memory().buffer() = "inner body";
  }
  // The nested lease's end neither reset nor released the outer's memory.
  EXPECT_EQ(outer.memory().buffer(), "outer body");
  RequestMemoryLease another;
  EXPECT_NE(&another.memory(), &outer.memory());
}

TEST(RequestMemory, ThreadsHaveMemoriesOfTheirOwn) {
  RequestMemoryLease here;
  RequestMemory* there = nullptr;
  std::thread([&] {
    RequestMemoryLease lease;
    there = &lease.memory();
  }).join();
  EXPECT_NE(there, &here.memory());
}

TEST(RequestMemory, ALargeBodyIsNotKeptForTheNextReview) {
  {
    RequestMemoryLease lease;
    lease.memory().buffer().assign(RequestMemory::kKeptBufferBytes + 1, 'x');
  }
  RequestMemoryLease again;
  EXPECT_LE(again.memory().buffer().capacity(), RequestMemory::kKeptBufferBytes);
}

TEST(RequestMemory, ReviewsDecodedOneAfterAnotherAndOneInsideAnotherKeepTheirOwnValues) {
  // The second review is bigger than the first chunks: the document and the
  // stack take chunks from malloc, given back at its end. (Each label is a
  // member of 32 bytes in the document, and two values of 16 on the stack
  // until its object closes.)
  std::string labels;
  for (size_t n = 0; n < RequestMemory::kDocumentBytes / 16; ++n)
    labels += "\"k" + std::to_string(n) + "\":\"v\",";
  for (const std::string tag : {"1", "2", "3"}) {
    AdmissionRequest request;
    DecodeError error;
    ASSERT_TRUE(decodeAdmissionReview(review(tag, tag == "2" ? labels : ""), request, error))
        << error.message;
    const JsonValue* labelsRead = member(member(request.subject.object, "metadata"), "labels");
    ASSERT_NE(labelsRead, nullptr);
    EXPECT_EQ(labelsRead->MemberCount(), tag == "2" ? RequestMemory::kDocumentBytes / 16 + 1 : 1);
    EXPECT_EQ(stringMember(labelsRead, "last"), "label");
    EXPECT_EQ(request.uid, "u-" + tag);
    EXPECT_EQ(request.name, "p-" + tag);

    AdmissionRequest nested;
    ASSERT_TRUE(decodeAdmissionReview(review("nested"), nested, error)) << error.message;
    EXPECT_EQ(nested.name, "p-nested");
    // The outer request's strings point into a buffer the nested one did not touch.
    EXPECT_EQ(request.uid, "u-" + tag);
    EXPECT_EQ(stringMember(member(request.subject.object, "metadata"), "name"), "p-" + tag);
  }
}

}  // namespace
}  // namespace aiadmit
