#include "validators/priority_class_exists.h"

#include "validators/priority_class.h"

namespace aiadmit {

namespace {

void judge(const ValidationContext& context, std::string_view name, std::string field,
           std::string_view refused, std::vector<Violation>& out) {
  if (context.cluster == nullptr) return;
  if (name.empty() || context.cluster->hasPriorityClass(name) != Presence::No) return;
  out.push_back({AIA017, std::move(field),
                 "PriorityClass " + inQuotes(name) + " does not exist in the cluster, so " +
                     std::string(refused),
                 "create the PriorityClass, or name one that `kubectl get priorityclasses` lists",
                 "PriorityClass " + inQuotes(name) + " does not exist; create it or name one " +
                     "that exists"});
  out.back().absent = ClusterRef{ClusterKind::PriorityClass, "", std::string(name)};
}

}  // namespace

void PriorityClassExistsValidator::check(const ValidationContext& context,
                                         std::vector<Violation>& out) const {
  judge(context, stringMember(context.view.spec, "priorityClassName"),
        context.view.specFieldPath() + ".priorityClassName", "the API server refuses the Pods",
        out);
}

void OperatorPriorityClassExistsValidator::check(const ValidationContext& context,
                                                 std::vector<Violation>& out) const {
  OperatorPriorityClass own = operatorPriorityClass(context);
  judge(context, own.name, std::move(own.field),
        "what the operator gives it to (its Pods, or their gang group) cannot be made", out);
}

}  // namespace aiadmit
