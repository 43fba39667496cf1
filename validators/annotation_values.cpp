#include "validators/validator.h"

#include <string>
#include <vector>

#include "webhook/model/quantity.h"

namespace aiadmit {

namespace {

void checkGpuContainer(const ValidationContext& context, std::vector<Violation>& out) {
  const auto named = context.pod.unknownGpuContainer();
  if (!named) return;
  std::vector<std::string_view> names;
  for (const PodContainer& container : context.pod.containers()) {
    if (container.list == ContainerList::Containers && !container.name.empty()) {
      names.push_back(container.name);
    }
  }
  const std::string_view meant = plausibleName(*named, names);
  std::string fix = names.empty()    ? std::string("give the Pod a container")
                    : !meant.empty() ? "did you mean " + inQuotes(meant) + "?"
                                     : "name one of " + quotedList(names, "or");
  out.push_back({annotationFieldPath(context, kGpuContainerAnnotation),
                 inQuotes(*named) + " names no container of the Pod, so nothing gets its GPUs",
                 std::move(fix), inQuotes(*named) + " is not a container of the Pod"});
}

void checkGpuCount(const ValidationContext& context, std::vector<Violation>& out) {
  const auto value = context.pod.annotation(kGpusAnnotation);
  if (!value) return;
  const auto quantity = Quantity::parse(*value);
  if (quantity && !quantity->isNegative() && !quantity->isZero() && quantity->isWholeNumber()) {
    return;
  }
  out.push_back({annotationFieldPath(context, kGpusAnnotation),
                 inQuotes(*value) + " is not a number of GPUs, so the workload would get none",
                 "write a positive whole number, such as \"1\"",
                 inQuotes(*value) + " is not a GPU count; write a whole number such as \"1\""});
}

void checkProfile(const ValidationContext& context, std::vector<Violation>& out) {
  if (context.selection.error.empty()) return;
  const std::string workloadClass(className(context.classification.workloadClass));
  Violation violation{
      annotationFieldPath(context, kProfileAnnotation), context.selection.error,
      "name a profile of class " + workloadClass +
          " that applies to this namespace, or remove the annotation",
      "the profile cannot apply; name a " + workloadClass + " profile or remove it"};
  violation.profile = context.selection.withoutAnnotation;
  out.push_back(std::move(violation));
}

// AIA001: the other aiadmit.dev annotations a developer writes must hold a
// value aiadmit can use. A gpu-container that names no container, a GPU count
// that is not a positive whole number, or a profile that cannot apply would
// otherwise be ignored, and the workload would run without what it asked for.
void checkAnnotationValues(const ValidationContext& context, std::vector<Violation>& out) {
  checkGpuContainer(context, out);
  checkGpuCount(context, out);
  checkProfile(context, out);
}

}  // namespace

extern const ValidatorDeclaration kAnnotationValuesValidator{.name = "annotation-values",
                                                             .eachTemplate = checkAnnotationValues};

}  // namespace aiadmit
