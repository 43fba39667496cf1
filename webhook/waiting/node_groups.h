// The cluster's GPU node groups as `aiadmit profiles init` writes pools for
// them: the nodes that offer accelerators (allocatable, or devices a DRA
// driver publishes for them), grouped by their node-group label, with what
// every node of a group shares (its lasting taints) and the most one node of
// it offers.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"

namespace aiadmit {

struct NodeGroup {
  // The label that names the group ("cloud.google.com/gke-nodepool": "a100");
  // both empty when its nodes carry none of the node-group labels.
  std::string labelKey;
  std::string labelValue;
  std::vector<std::string> nodes;  // by name
  // NoSchedule and NoExecute taints every node of the group carries (not
  // those of node conditions and cordons), sorted.
  std::vector<NodeTaint> taints;
  // Accelerator resources (nvidia.com/gpu, nvidia.com/mig-1g.10gb) and the
  // most of each that one node of the group has allocatable.
  std::map<std::string, int64_t> mostPerNode;
  // Drivers of accelerator devices that DRA publishes for its nodes.
  std::set<std::string> draDrivers;
  int64_t mostDraDevicesPerNode = 0;
  // Whose accelerators its nodes hold (webhook/model/accelerator_vendors.h):
  // the family of the resource a node has the most of ("nvidia", "amd",
  // "example.com"), else the vendor of a DRA driver; "" for devices of a
  // driver of no known vendor alone.
  std::string family;
};

// `labelKey`: the label that names a group (a preset's); empty: the first
// of the node-group labels poolOfNode reads that the node carries. Nodes of
// one label but of different vendors are different groups.
std::vector<NodeGroup> gpuNodeGroups(const ClusterView& view, std::string_view labelKey = {});

// Whether any node offers accelerators.
bool hasGpuNodes(const ClusterView& view);

}  // namespace aiadmit
