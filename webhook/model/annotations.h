// The aiadmit.dev annotations: the one place that spells their keys, for the
// code that reads and writes them and for the messages that name them.
#pragma once

#include <string>
#include <string_view>

namespace aiadmit {

// What every key of aiadmit's own begins with.
inline constexpr std::string_view kAnnotationPrefix = "aiadmit.dev/";

// "aiadmit.dev/workload=training": the annotation set to `value`, as
// messages name it.
inline std::string annotationSetting(std::string_view key, std::string_view value) {
  std::string setting(key);
  setting += '=';
  setting += value;
  return setting;
}

inline constexpr std::string_view kWorkloadAnnotation = "aiadmit.dev/workload";
inline constexpr std::string_view kProfileAnnotation = "aiadmit.dev/profile";
inline constexpr std::string_view kGpusAnnotation = "aiadmit.dev/gpus";
inline constexpr std::string_view kGpuContainerAnnotation = "aiadmit.dev/gpu-container";
inline constexpr std::string_view kClassAnnotation = "aiadmit.dev/class";

// On the profiles ConfigMap: the aiadmit release its profiles were written
// for (profiles/Kustomization sets it to the release's version). A replica of
// an earlier release cannot judge them: a field or value it does not know may
// be the later release's.
inline constexpr std::string_view kReleaseAnnotation = "aiadmit.dev/release";

// Every key a developer or aiadmit's stamp puts on a workload.
inline constexpr std::string_view kWorkloadAnnotationKeys[] = {
    kWorkloadAnnotation, kProfileAnnotation, kGpusAnnotation, kGpuContainerAnnotation,
    kClassAnnotation};

static_assert(
    [] {
      for (std::string_view key : kWorkloadAnnotationKeys) {
        if (!key.starts_with(kAnnotationPrefix)) return false;
      }
      return true;
    }(),
    "every key is one of aiadmit's own, which UPDATEs compare by the prefix");

}  // namespace aiadmit
