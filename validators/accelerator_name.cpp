#include "validators/accelerator_name.h"

#include <algorithm>
#include <tuple>

#include "validators/gpu_requests.h"
#include "validators/suggestion.h"

namespace aiadmit {

void AcceleratorNameValidator::check(const ValidationContext& context,
                                     std::vector<Violation>& out) const {
  const Profile* profile = context.profile;
  if (profile == nullptr) return;
  std::vector<std::tuple<ContainerList, size_t, std::string_view>> reported;
  forEachAcceleratorEntry(context.view.spec, profile, [&](const AcceleratorEntry& entry) {
    if (profile->allowsResource(entry.name)) return;
    // A well-formed share of a GPU where sharing is forbidden is AIA013's.
    if (!profile->gpu.sharingAllowed && isSharedGpuResource(entry.name)) return;
    const auto key = std::make_tuple(entry.list, entry.index, entry.name);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) return;
    reported.push_back(key);

    std::vector<std::string_view> offered{profile->gpu.resourceName};
    for (const std::string& allowed : profile->gpu.allowedResources) {
      if (allowed != profile->gpu.resourceName) offered.push_back(allowed);
    }
    const Suggestion closest = closestName(entry.name, offered);
    out.push_back(
        {AIA003,
         containerFieldPath(context.kind, entry.list, entry.index) + ".resources." +
             std::string(entry.section),
         quoted(entry.name) + inContainer(context.view.spec, entry.container) +
             " is not a resource this cluster offers",
         "did you mean " + quoted(closest.name) + "?",
         quoted(entry.name) + " is not offered; did you mean " + quoted(closest.name) + "?"});
  });
}

}  // namespace aiadmit
