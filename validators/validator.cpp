#include "validators/validator.h"

namespace aiadmit {

std::string Violation::format() const {
  std::string out = "[";
  out += rule.name();
  out += "] ";
  out += field;
  out += ": ";
  out += problem;
  if (!fix.empty()) out += "; " + fix;
  return out;
}

namespace {

std::string_view shortFieldPath(std::string_view field) {
  for (std::string_view prefix : {"spec.jobTemplate.spec.template.spec.", "spec.template.spec."}) {
    if (field.substr(0, prefix.size()) == prefix) return field.substr(prefix.size());
  }
  return field;
}

}  // namespace

bool Violation::warningKeepsField() const {
  const size_t length = std::string_view("aiadmit: [] : ").size() + rule.name().size() +
                        shortFieldPath(field).size() + brief.size();
  return length <= kMaxWarningLength;
}

std::string Violation::warning() const {
  std::string line = "aiadmit: [";
  line += rule.name();
  line += "] ";
  const size_t head = line.size();
  line += shortFieldPath(field);
  line += ": ";
  line += brief;
  if (line.size() > kMaxWarningLength) line.erase(head, line.size() - brief.size() - head);
  return line;
}

std::string containerFieldPath(const PodTemplateView& view, ContainerList list, size_t index) {
  return view.specFieldPath() + "." + std::string(containerListName(list)) + "[" +
         std::to_string(index) + "]";
}

std::string annotationFieldPath(const ValidationContext& context, std::string_view key) {
  const std::string metadata = context.pod.annotationSite(key) == AnnotationSite::Template
                                   ? context.view.metadataFieldPath()
                                   : std::string("metadata");
  return metadata + ".annotations[" + std::string(key) + "]";
}

std::string describePool(const Placement& placement) {
  std::string out;
  auto add = [&](const std::string& part) {
    if (!out.empty()) out += ", ";
    out += part;
  };
  for (const auto& [key, value] : placement.nodeSelector) {
    add(describeRequirement(LabelRequirement::equals(key, value)));
  }
  for (const NodeSelectorRequirement& requirement : placement.requiredNodeAffinity) {
    add(describeRequirement(LabelRequirement::fromProfile(requirement)));
  }
  if (out.empty()) {
    for (const Toleration& toleration : placement.tolerations) {
      if (!toleration.key.empty()) add("taint " + describeToleration(toleration));
    }
  }
  return out;
}

}  // namespace aiadmit
