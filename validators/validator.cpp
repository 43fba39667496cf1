#include "validators/validator.h"

namespace aiadmit {

std::string Violation::format() const {
  std::string out = "[" + rule.name() + "] " + field + ": " + problem;
  if (!fix.empty()) out += "; " + fix;
  return out;
}

std::string containerFieldPath(WorkloadKind kind, ContainerList list, size_t index) {
  return std::string(podSpecFieldPath(kind)) + "." + std::string(containerListName(list)) + "[" +
         std::to_string(index) + "]";
}

}  // namespace aiadmit
