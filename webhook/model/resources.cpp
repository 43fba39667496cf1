#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// What a MIG profile's parts may be written apart with: "1g.10gb", "1g-10gb".
bool isSeparator(char c) {
  return c == '.' || c == '-' || c == '_';
}

// The digits of `text` from `at` on, moving `at` past them.
std::string_view digitsAt(std::string_view text, size_t& at) {
  const size_t start = at;
  while (at < text.size() && isDigit(text[at])) ++at;
  return text.substr(start, at - start);
}

// "<C>c.<N>g.<M>gb" or "<N>g.<M>gb" from `at` to the end of `text`, the
// separators optional; nullopt otherwise.
std::optional<std::string> migProfileAt(std::string_view text, size_t at) {
  std::string_view compute;
  std::string_view slices = digitsAt(text, at);
  if (at < text.size() && text[at] == 'c') {
    compute = slices;
    ++at;
    if (at < text.size() && isSeparator(text[at])) ++at;
    slices = digitsAt(text, at);
  }
  if (slices.empty() || at >= text.size() || text[at] != 'g') return std::nullopt;
  ++at;
  if (at < text.size() && isSeparator(text[at])) ++at;
  const std::string_view memory = digitsAt(text, at);
  if (memory.empty() || text.substr(at) != "gb") return std::nullopt;
  std::string profile;
  if (!compute.empty()) profile.append(compute).append("c.");
  profile.append(slices).append("g.").append(memory).append("gb");
  return profile;
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
  // A MIG slice written otherwise ("nvidia.com/mig1g.10gb"); the suffix test
  // spares the other names the copy migResourceName makes.
  if (endsWithIgnoringCase(name, "gb") && migResourceName(name)) return true;
  for (std::string_view word : {"tpu", "neuron", "gaudi", "ascend"}) {
    if (containsWord(name, word, true)) return true;
  }
  // Xilinx's device plugin names each FPGA card's shell: every name is one.
  return name.substr(0, std::string_view("xilinx.com/").size()) == "xilinx.com/";
}

bool looksLikeAcceleratorDriver(std::string_view name) {
  if (looksLikeAccelerator(name)) return true;
  for (std::string_view word : {"mig", "npu", "xpu", "accelerator"}) {
    if (containsWord(name, word, true)) return true;
  }
  return false;
}

bool isExtendedResourceName(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  return name.substr(0, std::string_view("requests.").size()) != "requests.";
}

std::optional<std::string> migResourceName(std::string_view name) {
  std::string text(name.substr(name.find('/') == std::string_view::npos ? 0 : name.find('/') + 1));
  for (char& c : text) c = lower(c);
  for (size_t at = 0; at < text.size(); ++at) {
    if (!isDigit(text[at]) || (at > 0 && isDigit(text[at - 1]))) continue;
    if (std::optional<std::string> profile = migProfileAt(text, at)) {
      return "nvidia.com/mig-" + *profile;
    }
  }
  return std::nullopt;
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
