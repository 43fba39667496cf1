#include "webhook/serving/profile_watch.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

namespace aiadmit {

namespace {

bool isProfileFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".yaml" || extension == ".yml";
}

// Timestamps are only as fine as the kernel's clock tick, so a file rewritten
// twice within one tick with the same size would look unchanged: profile
// files are compared by content, which is small.
std::string contentDigest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return std::to_string(std::hash<std::string>{}(text.str()));
}

}  // namespace

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
    std::string entry = it->path().filename().string() + ":" + std::to_string(info.st_ino) + ":" +
                        std::to_string(info.st_size) + ":" + std::to_string(info.st_mtim.tv_sec) +
                        "." + std::to_string(info.st_mtim.tv_nsec);
    if (S_ISREG(info.st_mode) && isProfileFile(it->path())) {
      entry.push_back(':');
      entry += contentDigest(it->path());
    }
    entries.push_back(std::move(entry));
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
