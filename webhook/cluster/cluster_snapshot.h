// A cluster view read from a file, for `aiadmit check --cluster` and
// `explain` and `profiles init` without an API server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"

namespace aiadmit {

// A cluster snapshot as `kubectl get nodes,resourceslices,deviceclasses,
// priorityclasses,localqueues,runtimeclasses -A -o yaml` prints it: a v1
// List (YAML or JSON), or several documents of objects or Lists. Kinds the
// view does not read are skipped and named in `skippedKinds`; a kind with at
// least one object counts as listed.
struct ClusterSnapshot {
  std::shared_ptr<const ClusterView> view;
  std::string error;  // "FILE:LINE: message" when the view could not be made
  std::vector<std::string> skippedKinds;
};
ClusterSnapshot loadClusterSnapshot(const std::string& path);
// The same from text; `name` is used in errors.
ClusterSnapshot readClusterSnapshot(std::string_view text, const std::string& name);

}  // namespace aiadmit
