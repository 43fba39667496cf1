#include "validators/accelerator_name.h"

#include <algorithm>
#include <tuple>

#include "webhook/kube/resources.h"

#include "webhook/kube/text.h"

namespace aiadmit {

void AcceleratorNameValidator::check(const ValidationContext& context,
                                     std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  std::vector<std::tuple<ContainerList, size_t, std::string_view>> reported;
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (profile->allowsResource(entry.name)) return;
    // A well-formed share of a GPU where sharing is forbidden is AIA013's.
    if (!profile->gpu.sharingAllowed && isSharedGpuResource(entry.name)) return;
    const auto key = std::make_tuple(entry.container.list, entry.container.index, entry.name);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) return;
    reported.push_back(key);

    std::vector<std::string_view> offered{profile->gpu.resourceName};
    for (const std::string& allowed : profile->gpu.allowedResources) {
      if (allowed != profile->gpu.resourceName) offered.push_back(allowed);
    }
    const Suggestion closest = closestName(entry.name, offered);
    out.push_back(
        {AIA003,
         resourcesFieldPath(context.view, entry.container) + "." + std::string(entry.section),
         inQuotes(entry.name) + inContainer(context.pod, entry.container) +
             " is not a resource this cluster offers",
         "did you mean " + inQuotes(closest.name) + "?",
         inQuotes(entry.name) + " is not offered; did you mean " + inQuotes(closest.name) + "?"});
  });
}

}  // namespace aiadmit
