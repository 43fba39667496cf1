#include "validators/validator.h"

namespace aiadmit {

namespace {

// AIA017: the workload names a priority class that the cluster does not
// have. The API server refuses a Pod that names one, and a controller's Pods
// then fail one by one long after the workload was applied; the operator gives
// the class in its own field to the Pods, or to the gang group Volcano ranks
// them by, so a class the cluster lacks fails them the same way.
void judge(const ValidationContext& context, NamedPriorityClass named,
           std::vector<Violation>& out) {
  const std::string_view refused =
      named.byOperator
          ? "what the operator gives it to (its Pods, or their gang group) cannot be made"
          : "the API server refuses the Pods";
  const std::string_view name = named.name;
  if (context.cluster == nullptr) return;
  if (name.empty() || context.cluster->hasPriorityClass(name) != Presence::No) return;
  out.push_back({std::move(named.field),
                 "PriorityClass " + inQuotes(name) + " does not exist in the cluster, so " +
                     std::string(refused),
                 "create the PriorityClass, or name one that `kubectl get priorityclasses` lists",
                 "PriorityClass " + inQuotes(name) + " does not exist; create it or name one " +
                     "that exists"});
  out.back().absent = ClusterRef{ClusterKind::PriorityClass, "", std::string(name)};
}

}  // namespace

extern constinit const ValidatorDeclaration kPriorityClassExistsValidator =
    priorityClassDeclaration<judge>("priority-class-exists");

}  // namespace aiadmit
