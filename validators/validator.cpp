#include "validators/validator.h"

#include "webhook/codec/json_pointer.h"
#include "webhook/codec/text.h"
#include "webhook/codec/warnings.h"

namespace aiadmit {

namespace {

// "[AIA004] <field>: <text>", the form of a denial and of a warning line,
// made at once with what comes before and after it.
std::string ruleLine(std::string_view before, RuleId rule, std::string_view field,
                     std::string_view text, std::string_view separator = "",
                     std::string_view after = "") {
  return concat(before, "[", rule.name(), "] ", field, ": ", text, separator, after);
}

// The field relative to the PodSpec, after the role when there is one.
std::string shortFieldPath(const Violation& violation) {
  std::string_view field = violation.field;
  std::string prefix = violation.role.empty() ? "" : violation.role + ": ";
  if (!violation.templateField.empty() &&
      field.substr(0, violation.templateField.size() + 1) == violation.templateField + ".") {
    return prefix + std::string(field.substr(violation.templateField.size() + 1));
  }
  for (std::string_view start : {"spec.jobTemplate.spec.template.spec.", "spec.template.spec."}) {
    if (field.substr(0, start.size()) == start) {
      return prefix + std::string(field.substr(start.size()));
    }
  }
  return prefix + std::string(field);
}

// The warning line with the field relative to the PodSpec.
std::string warningWithField(const Violation& violation) {
  return ruleLine(kWarningPrefix, violation.rule, shortFieldPath(violation), violation.brief);
}

}  // namespace

std::string Violation::format() const {
  return ruleLine("", rule, field, problem, fix.empty() ? "" : "; ", fix);
}

bool Violation::warningKeepsField() const {
  return warningWithField(*this).size() <= kMaxWarningLength;
}

std::string Violation::warning() const {
  std::string line = warningWithField(*this);
  if (line.size() <= kMaxWarningLength) return line;
  // Without the field, the role still says which template it is.
  line = warningLine("[" + rule.name() + "] ");
  if (!role.empty()) line += role + ": ";
  line += brief;
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

NamedPriorityClass templatePriorityClass(const ValidationContext& context) {
  return {stringMember(context.view.spec, "priorityClassName"),
          context.view.specFieldPath() + ".priorityClassName"};
}

NamedPriorityClass operatorPriorityClass(const ValidationContext& context) {
  const WorkloadType* type = context.view.type;
  if (type == nullptr || type->scheduling.priorityClassName.empty()) return {};
  const std::string& pointer = type->scheduling.priorityClassName;
  const std::string_view name = stringOf(valueAt(context.object, pointer));
  if (name.empty()) return {};
  return {name, fieldPathOf(context.object, pointer), true};
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
