#include "validators/gpus_per_node.h"

namespace aiadmit {

void GpusPerNodeValidator::check(const ValidationContext& context,
                                 std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  const std::string& resource = profile->gpu.resourceName;
  const int64_t perNode = profile->gpu.gpusPerNode;
  const int64_t wanted = context.pod.podRequest(resource);
  if (wanted <= perNode) return;

  // Point at the one container that asks, when only one does.
  std::string field = context.view.specFieldPath() + ".containers";
  int asking = 0;
  for (const PodContainer& container : context.pod.containers()) {
    if (PodReader::containerRequest(*container.json, resource) == 0) continue;
    if (++asking == 1) {
      field =
          containerFieldPath(context.view, container.list, container.index) + ".resources.limits";
    }
  }
  if (asking > 1) field = context.view.specFieldPath() + ".containers";

  out.push_back({AIA006, std::move(field),
                 "the Pod asks for " + std::to_string(wanted) + " \"" + resource +
                     "\" but the largest node of the GPU pool has " + std::to_string(perNode) +
                     ", so it would stay Pending forever",
                 "ask for at most " + std::to_string(perNode) +
                     " per Pod and spread larger runs over several Pods",
                 std::to_string(wanted) + " " + inQuotes(resource) +
                     " in one Pod, but GPU nodes have " + std::to_string(perNode) +
                     "; ask for at most " + std::to_string(perNode)});
}

}  // namespace aiadmit
