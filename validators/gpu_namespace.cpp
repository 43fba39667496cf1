#include "validators/validator.h"

#include <algorithm>

namespace aiadmit {

namespace {

// AIA012: GPUs requested in a namespace the profile does not allow.
void checkGpuNamespace(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  const std::vector<std::string>& allowed = profile->gpu.allowedNamespaces;
  if (allowed.empty()) return;
  if (std::any_of(allowed.begin(), allowed.end(), [&](const std::string& pattern) {
        return globMatch(pattern, context.namespaceName);
      })) {
    return;
  }
  if (!context.pod.asksForAccelerator() && !context.pod.asksForGpuShare()) return;

  std::string namespaces;
  for (const std::string& pattern : allowed) {
    namespaces += (namespaces.empty() ? "" : ", ") + pattern;
  }
  out.push_back({"metadata.namespace",
                 "namespace " + std::string(context.namespaceName) + " may not use GPUs under " +
                     "profile " + profile->name,
                 "run it in " + namespaces + ", or ask the platform team for GPU access",
                 "no GPUs in namespace " + std::string(context.namespaceName) + " (profile " +
                     profile->name + ")"});
}

}  // namespace

extern const ValidatorDeclaration kGpuNamespaceValidator{.name = "gpu-namespace",
                                                         .eachTemplate = checkGpuNamespace};

}  // namespace aiadmit
