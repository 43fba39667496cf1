#include "validators/validator.h"

namespace aiadmit {

namespace {

void judge(const ValidationContext& context, std::string_view name, std::string field,
           std::string_view refused, std::vector<Violation>& out) {
  if (context.cluster == nullptr) return;
  if (name.empty() || context.cluster->hasPriorityClass(name) != Presence::No) return;
  out.push_back({std::move(field),
                 "PriorityClass " + inQuotes(name) + " does not exist in the cluster, so " +
                     std::string(refused),
                 "create the PriorityClass, or name one that `kubectl get priorityclasses` lists",
                 "PriorityClass " + inQuotes(name) + " does not exist; create it or name one " +
                     "that exists"});
  out.back().absent = ClusterRef{ClusterKind::PriorityClass, "", std::string(name)};
}

// AIA017: the Pod names a priorityClassName that the cluster does not have.
// The API server refuses such a Pod, and a controller's Pods then fail one by
// one long after the workload was applied.
void checkPriorityClassExists(const ValidationContext& context, std::vector<Violation>& out) {
  judge(context, stringMember(context.view.spec, "priorityClassName"),
        context.view.specFieldPath() + ".priorityClassName", "the API server refuses the Pods",
        out);
}

// AIA017 on the operator's own priority field (OperatorPriorityClassValidator
// names them): the operator gives the class to the Pods, or to the gang group
// Volcano ranks them by, so a class the cluster lacks fails them the same way.
void checkOperatorPriorityClassExists(const ValidationContext& context,
                                      std::vector<Violation>& out) {
  OperatorPriorityClass own = operatorPriorityClass(context);
  judge(context, own.name, std::move(own.field),
        "what the operator gives it to (its Pods, or their gang group) cannot be made", out);
}

}  // namespace

extern const ValidatorDeclaration kPriorityClassExistsValidator{.name = "priority-class-exists",
                                                                .check = checkPriorityClassExists};
extern const ValidatorDeclaration kOperatorPriorityClassExistsValidator{
    .name = "operator-priority-class-exists",
    .scope = Scope::Workload,
    .check = checkOperatorPriorityClassExists};

}  // namespace aiadmit
