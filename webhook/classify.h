// The shape of AI work an object is: the developer's annotation wins, else the
// kind decides for objects that ask for an accelerator (PRODUCT.md, Classification).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "webhook/workload.h"

namespace aiadmit {

enum class WorkloadClass { None, Training, Batch, Realtime };

std::string_view className(WorkloadClass workloadClass);
std::optional<WorkloadClass> parseClass(std::string_view text);

inline constexpr std::string_view kWorkloadAnnotation = "aiadmit.dev/workload";
inline constexpr std::string_view kProfileAnnotation = "aiadmit.dev/profile";
inline constexpr std::string_view kGpusAnnotation = "aiadmit.dev/gpus";
inline constexpr std::string_view kGpuContainerAnnotation = "aiadmit.dev/gpu-container";
inline constexpr std::string_view kClassAnnotation = "aiadmit.dev/class";

struct Classification {
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string reason;  // one line a developer can read: why this class
  // Set when aiadmit.dev/workload holds a value that is not a class (AIA001);
  // the class then falls back to the kind's default.
  std::optional<std::string> unknownWorkloadValue;

  bool isAiWorkload() const { return workloadClass != WorkloadClass::None; }
};

Classification classify(const PodTemplateView& view);

}  // namespace aiadmit
