#include "validators/validator.h"
#include "webhook/policy/rule_messages.h"

#include <limits>

namespace aiadmit {

namespace {

// The field to point at: the one container that asks, when only one does;
// the one claim, when only a claim does; else the Pod's containers.
std::string askingField(const ValidationContext& context, const std::string& resource) {
  const std::string podSpec(context.view.specFieldPath());
  std::string field;
  int asking = 0;
  for (const PodContainer& container : context.pod.containers()) {
    if (PodReader::containerRequest(container, resource) == 0) continue;
    if (++asking == 1) field = resourceSectionFieldPath(context.view, container, "limits");
  }
  for (const GpuClaim& gpu : context.pod.claimedDevices().gpus) {
    if (gpu.devices > 0 && ++asking == 1) field = podSpec + "." + gpu.fieldPath;
  }
  if (const std::optional<GpuShare> share = context.pod.gpuShare(); share && ++asking == 1) {
    field = annotationFieldPath(context,
                                share->devices > 1 ? kGpuFractionDevicesAnnotation : share->key);
  }
  return asking == 1 ? field : podSpec + ".containers";
}

// What the Pod asks for, as one phrase: `"nvidia.com/gpu"`, or with DRA
// claims `GPUs (4 "nvidia.com/gpu", 4 by claim gpu of class gpu.nvidia.com)`.
std::string whatIsAsked(const ValidationContext& context, const std::string& resource,
                        int64_t extended) {
  const std::vector<GpuClaim>& gpus = context.pod.claimedDevices().gpus;
  const std::optional<GpuShare> share = context.pod.gpuShare();
  if (context.pod.claimedGpuCount() == 0 && !share) return inQuotes(resource);
  std::string parts;
  if (extended > 0) parts = std::to_string(extended) + " " + inQuotes(resource);
  if (share) {
    if (!parts.empty()) parts += ", ";
    parts += std::to_string(share->devices) + " shared by annotation " + std::string(share->key);
  }
  for (const GpuClaim& gpu : gpus) {
    if (gpu.devices == 0) continue;
    if (!parts.empty()) parts += ", ";
    parts += std::to_string(gpu.devices) + " by " +
             (gpu.claim.empty() ? gpu.resourceName : "claim " + gpu.claim) + " of class " +
             gpu.deviceClassName;
  }
  return "GPUs (" + parts + ")";
}

// AIA006: a Pod cannot ask for more GPUs than the largest node of its pool
// has (GPUs by extended resource and those its DRA claims certainly need);
// the scheduler would keep it Pending forever.
void checkGpusPerNode(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  const std::string& resource = profile->gpu.resourceName;
  const int64_t perNode = profile->gpu.gpusPerNode;
  // GPUs by extended resource, by DRA claim and by KAI share (a part of
  // each of its devices) land on the same node.
  const int64_t extended = context.pod.podRequest(resource);
  const std::optional<GpuShare> share = context.pod.gpuShare();
  const int64_t byClaim = context.pod.claimedGpuCount();
  const int64_t shared = share ? share->devices : 0;
  const int64_t claimed = byClaim > std::numeric_limits<int64_t>::max() - shared
                              ? std::numeric_limits<int64_t>::max()
                              : byClaim + shared;
  const int64_t wanted = extended > std::numeric_limits<int64_t>::max() - claimed
                             ? std::numeric_limits<int64_t>::max()
                             : extended + claimed;
  if (wanted <= perNode) return;

  RuleMessage message =
      gpusPerNodeMessage(std::to_string(wanted), whatIsAsked(context, resource, extended),
                         claimed == 0 ? inQuotes(resource) : "GPUs", perNode);
  out.push_back({askingField(context, resource), std::move(message.problem), std::move(message.fix),
                 std::move(message.brief)});
}

}  // namespace

extern const ValidatorDeclaration kGpusPerNodeValidator{.name = "gpus-per-node",
                                                        .eachTemplate = checkGpusPerNode};

}  // namespace aiadmit
