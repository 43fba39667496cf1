#include "webhook/profile.h"

#include <algorithm>

namespace aiadmit {

bool Profile::allowsResource(std::string_view resourceName) const {
  return resourceName == gpu.resourceName ||
         std::find(gpu.allowedResources.begin(), gpu.allowedResources.end(), resourceName) !=
             gpu.allowedResources.end();
}

bool Profile::allowsPriorityClass(std::string_view priorityClass) const {
  if (priorityClass == scheduling.priorityClassName) return true;
  return std::find(scheduling.allowedPriorityClasses.begin(),
                   scheduling.allowedPriorityClasses.end(),
                   priorityClass) != scheduling.allowedPriorityClasses.end();
}

bool globMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, starP = std::string_view::npos, starT = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      starP = p++;
      starT = t;
    } else if (starP != std::string_view::npos) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace aiadmit
