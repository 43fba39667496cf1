#include "validators/validator.h"

namespace aiadmit {

namespace {

constexpr std::string_view kKueueQueueLabel = "kueue.x-k8s.io/queue-name";

// AIA018: the kueue.x-k8s.io/queue-name label names a LocalQueue that the
// namespace does not have. Kueue then keeps the workload suspended (its Pods
// never appear) with only a condition on a Workload object to say why.
void checkLocalQueueExists(const ValidationContext& context, std::vector<Violation>& out) {
  if (context.cluster == nullptr) return;
  // Kueue reads the label on the object it manages; for Pods of a plain Pod
  // group it is the Pod's own, which is the template's for a controller.
  std::string field = "metadata.labels[" + std::string(kKueueQueueLabel) + "]";
  std::string_view queue =
      stringMember(member(member(&context.object, "metadata"), "labels"), kKueueQueueLabel);
  if (queue.empty() && context.view.metadata != member(&context.object, "metadata")) {
    queue = stringMember(member(context.view.metadata, "labels"), kKueueQueueLabel);
    field = context.view.metadataFieldPath() + ".labels[" + std::string(kKueueQueueLabel) + "]";
  }
  if (queue.empty()) return;
  if (context.cluster->hasLocalQueue(context.namespaceName, queue) != Presence::No) return;
  const std::string ns(context.namespaceName);
  out.push_back({std::move(field),
                 "LocalQueue " + inQuotes(queue) + " does not exist in namespace " + ns +
                     ", so Kueue keeps the workload suspended and it never starts",
                 "name a LocalQueue that `kubectl get localqueues -n " + ns +
                     "` lists, or create one that points at a ClusterQueue",
                 "LocalQueue " + inQuotes(queue) + " does not exist in namespace " + ns +
                     "; name one that exists"});
  out.back().absent = ClusterRef{ClusterKind::LocalQueue, ns, std::string(queue)};
}

}  // namespace

extern const ValidatorDeclaration kLocalQueueExistsValidator{.name = "local-queue-exists",
                                                             .eachTemplate = checkLocalQueueExists};

}  // namespace aiadmit
