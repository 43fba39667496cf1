// Reading the view's Pods, Kueue Workloads and claim allocations
// (cluster_workloads.cpp); cluster_objects.cpp calls these for their kinds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "webhook/cluster/cluster_view.h"

namespace aiadmit {

// False for a Pod that asks for no accelerator, claims nothing and belongs
// to no PodGroup: the view does not keep it.
bool readPodRecord(const JsonValue& pod, std::string namespaceName, std::string name,
                   PodRecord& out);
QueueWorkloadRecord readQueueWorkloadRecord(const JsonValue& workload, std::string_view apiVersion,
                                            std::string namespaceName, std::string name);
// A ResourceClaim's status.allocation: whether it has one, and its devices.
std::vector<AllocatedDevice> allocatedDevices(const JsonValue& claim, bool& allocated);

}  // namespace aiadmit
