// Where a Pod made from a template may land once the API server has admitted
// it: its own nodeSelector, affinity and tolerations (PodReader::placement)
// plus what admission plugins of the API server add to every Pod on their
// own. A controller's template never carries those additions, since the
// plugins act on Pods only; a rule that judged the template as written would
// drop every node whose taint the Pods are going to tolerate.
#pragma once

#include "webhook/cluster/cluster_view.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/scheduling.h"

namespace aiadmit {

// The Pod's placement with the tolerations the ExtendedResourceToleration
// admission plugin adds: {key: <resource>, operator: Exists, effect:
// NoSchedule} for every extended resource a container or init container
// asks for (GKE taints its GPU nodes nvidia.com/gpu=present:NoSchedule and
// counts on it). The plugin may be off in a cluster; counting its
// tolerations anyway can only let more nodes match, never fewer, which is
// the side a rule that refuses on "no node can hold it" must err on.
// A Pod that names a runtimeClassName gets the RuntimeClass's
// scheduling.nodeSelector and scheduling.tolerations from its admission
// plugin; when `cluster` does not hold that class, every taint is taken as
// tolerated, since what the class tolerates cannot be seen.
Placement admittedPlacement(const PodReader& pod, const ClusterView* cluster);

}  // namespace aiadmit
