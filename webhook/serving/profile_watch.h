// Notices that a profile directory changed: a file added, removed or
// rewritten, or a ConfigMap volume's ..data symlink swapped. Polled (the
// server asks once a second), because a ConfigMap update is a symlink swap
// that inotify on the files themselves would not report.
#pragma once

#include <string>

namespace aiadmit {

class ProfileWatch {
 public:
  explicit ProfileWatch(std::string directory);
  // True once per change since the last call (or since construction).
  bool changed();

 private:
  std::string snapshot() const;
  std::string directory_;
  std::string last_;
};

}  // namespace aiadmit
