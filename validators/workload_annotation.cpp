#include "validators/validator.h"

#include <algorithm>
#include <utility>

#include "webhook/codec/text.h"

namespace aiadmit {

namespace {

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && editDistance(a, b) == 0;
}

// Words developers write for a shape, and the class that means it.
std::string_view classForSynonym(std::string_view value) {
  static constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
      {"inference", "realtime"},      {"serving", "realtime"},
      {"online", "realtime"},         {"server", "realtime"},
      {"real-time", "realtime"},      {"online-inference", "realtime"},
      {"offline", "batch"},           {"batch-inference", "batch"},
      {"offline-inference", "batch"}, {"job", "batch"},
      {"train", "training"},          {"fine-tuning", "training"},
      {"finetuning", "training"},     {"fine-tune", "training"},
      {"finetune", "training"},       {"pretraining", "training"},
      {"pre-training", "training"},
  };
  for (const auto& [word, workloadClass] : kSynonyms) {
    if (equalsIgnoringCase(value, word)) return workloadClass;
  }
  return {};
}

// AIA001: aiadmit.dev/workload must name a class. A typo would otherwise
// silently fall back to the kind's default class and its profile.
void checkWorkloadAnnotation(const ValidationContext& context, std::vector<Violation>& out) {
  if (!context.classification.unknownWorkloadValue) return;
  const std::string& value = *context.classification.unknownWorkloadValue;

  std::string_view meant = classForSynonym(value);
  if (meant.empty()) {
    const Suggestion closest = closestName(value, {"training", "batch", "realtime"});
    if (closest.distance <= std::max<size_t>(2, value.size() / 3)) meant = closest.name;
  }
  const std::string classes = "training, batch or realtime";
  out.push_back(
      {annotationFieldPath(context, kWorkloadAnnotation),
       inQuotes(value) + " is not a workload class",
       meant.empty() ? "use " + classes : "did you mean " + inQuotes(meant) + "? (" + classes + ")",
       inQuotes(value) + " is not a class; use " + (meant.empty() ? classes : inQuotes(meant))});
}

}  // namespace

extern const ValidatorDeclaration kWorkloadAnnotationValidator{
    .name = "workload-annotation", .eachTemplate = checkWorkloadAnnotation};

}  // namespace aiadmit
