#include "validators/priority_class_exists.h"

namespace aiadmit {

void PriorityClassExistsValidator::check(const ValidationContext& context,
                                         std::vector<Violation>& out) const {
  if (context.cluster == nullptr) return;
  const std::string_view name = stringMember(context.view.spec, "priorityClassName");
  if (name.empty() || context.cluster->hasPriorityClass(name) != Presence::No) return;
  out.push_back({AIA017, context.view.specFieldPath() + ".priorityClassName",
                 "PriorityClass " + inQuotes(name) +
                     " does not exist in the cluster, so the API server refuses the Pods",
                 "create the PriorityClass, or name one that `kubectl get priorityclasses` lists",
                 "PriorityClass " + inQuotes(name) + " does not exist; create it or name one " +
                     "that exists"});
  out.back().absent = ClusterRef{ClusterKind::PriorityClass, "", std::string(name)};
}

}  // namespace aiadmit
