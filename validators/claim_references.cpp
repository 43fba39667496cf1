#include "validators/validator.h"

namespace aiadmit {

namespace {

Violation missingDeviceClass(std::string field, std::string_view deviceClass,
                             std::string_view via) {
  Violation violation{
      std::move(field),
      "DeviceClass " + inQuotes(deviceClass) + std::string(via) +
          " does not exist in the cluster, so no claim for it can be allocated and the Pod " +
          "stays Pending",
      "name a DeviceClass that `kubectl get deviceclasses` lists (the GPU driver installs " +
          std::string("them, such as gpu.nvidia.com)"),
      "DeviceClass " + inQuotes(deviceClass) + " does not exist; name one that exists"};
  violation.absent = ClusterRef{ClusterKind::DeviceClass, "", std::string(deviceClass)};
  return violation;
}

// AIA019: a Pod's resourceClaims name a ResourceClaimTemplate the namespace
// does not have, or its device requests (through a template, or a KEP-5004
// deviceclass.resource.kubernetes.io/<class> name) a DeviceClass the cluster
// does not have. The Pod would wait for a claim that can never be made.
void checkClaimReferences(const ValidationContext& context, std::vector<Violation>& out) {
  const ClusterView* cluster = context.cluster;
  if (cluster == nullptr) return;
  const std::string podSpec(context.view.specFieldPath());
  const PodClaims& claims = context.pod.claims();
  for (const PodClaimSource& source : claims.sources) {
    const std::string& name = source.resourceClaimTemplateName;
    if (name.empty()) continue;
    const std::string field = podSpec + "." + source.fieldPath + ".resourceClaimTemplateName";
    if (cluster->hasClaimTemplate(context.namespaceName, name) == Presence::No) {
      const std::string ns(context.namespaceName);
      out.push_back({field,
                     "ResourceClaimTemplate " + inQuotes(name) + " does not exist in namespace " +
                         ns + ", so the Pod's claim is never made and the Pod stays Pending",
                     "create the template in namespace " + ns + " (apply it with the workload) " +
                         "or name one that `kubectl get resourceclaimtemplates -n " + ns +
                         "` lists",
                     "ResourceClaimTemplate " + inQuotes(name) + " does not exist in " + ns +
                         "; create it or name one that exists"});
      out.back().absent = ClusterRef{ClusterKind::ResourceClaimTemplate, ns, name};
      continue;
    }
    const ClaimTemplateRecord* record = cluster->claimTemplate(context.namespaceName, name);
    if (record == nullptr) continue;
    for (const DeviceRequest& request : record->spec.requests) {
      for (const DeviceAlternative& alternative : request.alternatives) {
        if (alternative.deviceClassName.empty() ||
            cluster->hasDeviceClass(alternative.deviceClassName) != Presence::No) {
          continue;
        }
        out.push_back(missingDeviceClass(
            field, alternative.deviceClassName,
            " (ResourceClaimTemplate " + name + ", " + alternative.fieldPath + ")"));
      }
    }
  }
  for (const ContainerDeviceClassRequest& request : claims.deviceClassRequests) {
    if (cluster->hasDeviceClass(request.deviceClassName) != Presence::No) continue;
    // An operator's annotation names the class for the Pods it makes.
    out.push_back(request.byAnnotation
                      ? missingDeviceClass(request.fieldPath, request.deviceClassName,
                                           " (the operator claims it for the Pods)")
                      : missingDeviceClass(podSpec + "." + request.fieldPath,
                                           request.deviceClassName,
                                           " (named by " + std::string(kDeviceClassResourcePrefix) +
                                               request.deviceClassName + ")"));
  }
}

}  // namespace

extern const ValidatorDeclaration kClaimReferencesValidator{.name = "claim-references",
                                                            .eachTemplate = checkClaimReferences};

}  // namespace aiadmit
