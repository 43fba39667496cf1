// A base for classes that own what cannot be shared by copying (a thread, a
// socket, a connection): deriving from it deletes the copy, and with it the
// move, instead of each class spelling out both deleted members.
#pragma once

namespace aiadmit {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace aiadmit
