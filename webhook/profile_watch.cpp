#include "webhook/profile_watch.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace aiadmit {

ProfileWatch::ProfileWatch(std::string directory)
    : directory_(std::move(directory)), last_(snapshot()) {}

std::string ProfileWatch::snapshot() const {
  namespace fs = std::filesystem;
  std::vector<std::string> entries;
  std::error_code ec;
  for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat info {};
    // stat follows symlinks: a swapped ..data target changes inode and mtime.
    if (stat(it->path().c_str(), &info) != 0) continue;
    entries.push_back(it->path().filename().string() + ":" + std::to_string(info.st_ino) + ":" +
                      std::to_string(info.st_size) + ":" + std::to_string(info.st_mtim.tv_sec) +
                      "." + std::to_string(info.st_mtim.tv_nsec));
  }
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const std::string& entry : entries) out += entry + "\n";
  return out;
}

bool ProfileWatch::changed() {
  std::string now = snapshot();
  if (now == last_) return false;
  last_ = std::move(now);
  return true;
}

}  // namespace aiadmit
