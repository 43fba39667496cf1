#include "webhook/kube/resources.h"

namespace aiadmit {

namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool startsSegment(std::string_view text, size_t at) {
  if (at == 0) return true;
  const char before = text[at - 1];
  return before == '/' || before == '.' || before == '-' || before == '_';
}

}  // namespace

bool containsWord(std::string_view text, std::string_view word, bool atSegmentStart) {
  if (word.size() > text.size()) return false;
  for (size_t at = 0; at + word.size() <= text.size(); ++at) {
    if (atSegmentStart && !startsSegment(text, at)) continue;
    bool equal = true;
    for (size_t k = 0; k < word.size() && equal; ++k) equal = lower(text[at + k]) == word[k];
    if (equal) return true;
  }
  return false;
}

bool endsWithIgnoringCase(std::string_view text, std::string_view lowerSuffix) {
  if (lowerSuffix.size() > text.size()) return false;
  for (size_t k = 0; k < lowerSuffix.size(); ++k) {
    if (lower(text[text.size() - lowerSuffix.size() + k]) != lowerSuffix[k]) return false;
  }
  return true;
}

bool looksLikeAccelerator(std::string_view name) {
  // cpu and memory are by far the most common names: answer them first.
  if (name == "cpu" || name == "memory") return false;
  if (containsWord(name, "gpu", false) || containsWord(name, "mig-", false)) return true;
  for (std::string_view word : {"tpu", "neuron", "gaudi"}) {
    if (containsWord(name, word, true)) return true;
  }
  return false;
}

bool isSharedGpuResource(std::string_view name) {
  if (containsWord(name, "mig-", false) || endsWithIgnoringCase(name, ".shared")) return true;
  if (!containsWord(name, "gpu", false)) return false;
  for (std::string_view word : {"share", "gpumem", "gpu-mem", "gpucores", "gpu-core"}) {
    if (containsWord(name, word, false)) return true;
  }
  return false;
}

bool isSharedGpuNodeLabel(std::string_view key, std::string_view value) {
  if (key == "cloud.google.com/gke-gpu-sharing-strategy" ||
      key == "cloud.google.com/gke-max-shared-clients-per-gpu" ||
      key == "cloud.google.com/gke-gpu-partition-size") {
    return true;
  }
  return key == "nvidia.com/gpu.sharing-strategy" && value != "none";
}

}  // namespace aiadmit
