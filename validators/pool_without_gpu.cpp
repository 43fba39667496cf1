#include "validators/validator.h"
#include "webhook/cluster/cluster_pools.h"

namespace aiadmit {

namespace {

// Pods that serve the GPU nodes themselves (device plugins, DCGM exporters,
// driver installers) come from DaemonSets or are static: they are meant to
// run there without a GPU. A DaemonSet owner counts only where the engine
// believes the Pod's owner (a controller's object, not a bare Pod's): on the
// applied paths anyone may have written it.
bool servesTheNode(const ValidationContext& context) {
  if (!context.view.objectIsPod()) return false;
  const JsonValue* metadata = member(&context.object, "metadata");
  const JsonValue* owners = member(metadata, "ownerReferences");
  if (context.target == RuleTarget::Controller && isArray(owners)) {
    for (const JsonValue& owner : owners->GetArray()) {
      const std::string_view kind = stringMember(&owner, "kind");
      if (kind == "DaemonSet" || kind == "Node") return true;
    }
  }
  return member(member(metadata, "annotations"), "kubernetes.io/config.mirror") != nullptr;
}

// A Pod bound to a node by name that shares the node's process, network or
// IPC namespace is about that node (`kubectl debug node/NAME`, a node
// agent run by hand), not work placed on its GPUs.
bool sharesTheNodesNamespaces(const JsonValue* podSpec) {
  for (const char* field : {"hostPID", "hostNetwork", "hostIPC"}) {
    const JsonValue* value = member(podSpec, field);
    if (value != nullptr && value->IsBool() && value->GetBool()) return true;
  }
  return false;
}

struct Aim {
  const Profile* profile = nullptr;
  std::string field;    // relative to the PodSpec
  std::string problem;  // how the Pod aims at the pool
  // What to leave out instead of asking for a GPU.
  std::string_view leaveOut = "the GPU pool's selector and tolerations out";
};

// spec.nodeName skips the scheduler, and with it the pool's taints: a node
// of the pool the cluster view knows is aimed at as surely as by a selector.
bool bindsToPoolNode(const JsonValue* podSpec, const Profile& profile, const ClusterView* cluster,
                     Aim& aim) {
  const std::string_view nodeName = stringMember(podSpec, "nodeName");
  if (nodeName.empty() || cluster == nullptr || sharesTheNodesNamespaces(podSpec)) return false;
  const ClusterNode* node = cluster->node(nodeName);
  if (node == nullptr || !nodeInPool(*node, profile.placement)) return false;
  aim.profile = &profile;
  aim.field = "nodeName";
  aim.problem = "spec.nodeName \"" + std::string(nodeName) + "\" is a node of the GPU pool";
  aim.leaveOut = "spec.nodeName out and let the scheduler place it";
  return true;
}

bool aimsAtPool(const JsonValue* podSpec, const Profile& profile, const ClusterView* cluster,
                Aim& aim) {
  const Placement& pool = profile.placement;
  if (!placementDefinesPool(pool)) return false;
  const PoolVerdict verdict = relatePodToPool(podSpec, pool);
  if (verdict.relation == PoolRelation::Excludes) return false;
  if (bindsToPoolNode(podSpec, profile, cluster, aim)) return true;
  if (verdict.relation == PoolRelation::Selects) {
    aim.profile = &profile;
    aim.field = verdict.site.fieldPath();
    aim.problem = verdict.site.part == SelectionSite::Part::NodeSelector
                      ? describeRequirement(verdict.site.podRequirement) + " selects the GPU pool"
                      : "the required node affinity selects only the GPU pool";
    return true;
  }
  const JsonValue* tolerations = member(podSpec, "tolerations");
  const int index = explicitPoolToleration(tolerations, pool);
  if (index < 0) return false;
  const JsonValue& toleration = (*tolerations)[static_cast<rapidjson::SizeType>(index)];
  aim.profile = &profile;
  aim.field = "tolerations[" + std::to_string(index) + "]";
  aim.problem = "tolerating \"" + std::string(stringMember(&toleration, "key")) +
                "\" aims the Pod at the GPU pool";
  return true;
}

// AIA007: a Pod aimed at the GPU pool that asks for no GPU holds a GPU
// node's CPU and memory and leaves its GPUs idle.
void checkPoolWithoutGpu(const ValidationContext& context, std::vector<Violation>& out) {
  const JsonValue* spec = context.view.spec;
  // Cheapest exits first: this rule sees every Pod of the opted-in namespaces.
  if (!isObject(spec)) return;
  if (member(spec, "nodeSelector") == nullptr && member(spec, "affinity") == nullptr &&
      member(spec, "tolerations") == nullptr && member(spec, "nodeName") == nullptr) {
    return;
  }
  if (context.pod.asksForAccelerator() || context.pod.claimsDevices() ||
      context.pod.asksForGpuShare()) {
    return;
  }
  if (servesTheNode(context)) return;

  Aim aim;
  if (context.profile != nullptr) {
    if (!aimsAtPool(spec, *context.profile, context.cluster, aim)) return;
  } else {
    // No profile of its own: the pools of every profile that could apply in
    // this namespace count, and the strictest of their actions decides.
    const JsonValue* labels = member(member(&context.object, "metadata"), "labels");
    const JsonValue* templateLabels = member(context.view.metadata, "labels");
    context.profiles.forEachForNamespace(context.namespaceName, [&](const Profile& candidate) {
      if (aim.profile != nullptr &&
          actionSeverity(candidate.rules.of(AIA007, context.target)) <=
              actionSeverity(aim.profile->rules.of(AIA007, context.target))) {
        return;
      }
      if (!ProfileSet::scopeMatches(candidate, context.namespaceName, labels, templateLabels,
                                    nullptr)) {
        return;
      }
      Aim candidateAim;
      if (aimsAtPool(spec, candidate, context.cluster, candidateAim)) aim = std::move(candidateAim);
    });
    if (aim.profile == nullptr) return;
  }

  Violation violation{
      context.view.specFieldPath() + "." + aim.field,
      aim.problem + " but no container asks for a GPU",
      "request \"" + aim.profile->gpu.resourceName + "\", or leave " + std::string(aim.leaveOut),
      "aims at the GPU pool but asks for no GPU; request one or remove it"};
  if (context.profile == nullptr) violation.profile = aim.profile;
  out.push_back(std::move(violation));
}

}  // namespace

extern const ValidatorDeclaration kPoolWithoutGpuValidator{
    .name = "pool-without-gpu", .appliesToUnclassified = true, .eachTemplate = checkPoolWithoutGpu};

}  // namespace aiadmit
