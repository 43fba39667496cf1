#include "validators/validator.h"

#include <algorithm>
#include <tuple>

#include "webhook/codec/text.h"
#include "webhook/model/accelerator_vendors.h"
#include "webhook/model/resources.h"
#include "webhook/policy/accelerators.h"

namespace aiadmit {

namespace {

constexpr std::string_view kSharedSuffix = ".shared";

// What to write instead of a name the profile does not allow, and why that
// name when the reason is not a plain misspelling. With `pattern`, `name` is
// a glob of the profile that the right name matches.
struct NameSuggestion {
  std::string name;
  std::string why;
  bool pattern = false;
};

bool equalsIgnoringCase(std::string_view text, std::string_view lowerText) {
  return text.size() == lowerText.size() && endsWithIgnoringCase(text, lowerText);
}

bool isMigName(std::string_view name) {
  return containsWord(name, "mig", false) || migResourceName(name).has_value();
}

// The names the profile offers, its resourceName first; globs left out,
// since no manifest can ask for "nvidia.com/mig-*".
std::vector<std::string_view> offeredNames(const Profile& profile, bool migOnly) {
  std::vector<std::string_view> offered;
  if (!migOnly) offered.push_back(profile.gpu.resourceName);
  for (const std::string& allowed : profile.gpu.allowedResources) {
    if (isGlob(allowed) || allowed == profile.gpu.resourceName) continue;
    if (!migOnly || isMigName(allowed)) offered.push_back(allowed);
  }
  return offered;
}

std::string closestOffered(std::string_view name, const Profile& profile) {
  return std::string(closestName(name, offeredNames(profile, false)).name);
}

std::optional<NameSuggestion> removedGpuName(std::string_view name, const Profile& profile) {
  if (!equalsIgnoringCase(name, kRemovedNvidiaGpuResource)) return std::nullopt;
  const std::string wanted =
      profile.allowsResource("nvidia.com/gpu") ? "nvidia.com/gpu" : closestOffered(name, profile);
  return NameSuggestion{wanted,
                        "alpha.kubernetes.io/nvidia-gpu was removed in Kubernetes 1.11; "
                        "device plugins offer GPUs under their vendor's name"};
}

// NVIDIA's device plugin advertises time-sliced or MPS GPUs as
// "<name>.shared" when its renameByDefault is on, and as "<name>" otherwise.
std::optional<NameSuggestion> sharedRenaming(std::string_view name, const Profile& profile) {
  if (endsWithIgnoringCase(name, kSharedSuffix)) {
    const std::string whole(name.substr(0, name.size() - kSharedSuffix.size()));
    if (!profile.allowsResource(whole)) return std::nullopt;
    return NameSuggestion{whole, "this pool's device plugin does not rename shared GPUs to " +
                                     inQuotes(name) + ": it offers them as " + inQuotes(whole)};
  }
  const std::string renamed = std::string(name) + std::string(kSharedSuffix);
  if (!profile.allowsResource(renamed)) return std::nullopt;
  return NameSuggestion{renamed,
                        "this pool's device plugin shares its GPUs by time-slicing or MPS and "
                        "renames them, so no node offers " +
                            inQuotes(name)};
}

std::optional<NameSuggestion> migSlice(std::string_view name, const Profile& profile) {
  if (!isMigName(name)) return std::nullopt;
  const std::optional<std::string> canonical = migResourceName(name);
  if (canonical && profile.allowsResource(*canonical)) {
    return NameSuggestion{*canonical,
                          "NVIDIA's device plugin names MIG slices nvidia.com/mig-<N>g.<M>gb"};
  }
  const std::vector<std::string_view> slices = offeredNames(profile, true);
  if (!slices.empty()) {
    return NameSuggestion{std::string(closestName(name, slices).name),
                          "the MIG slices this pool offers are " + quotedList(slices, "and")};
  }
  for (const std::string& allowed : profile.gpu.allowedResources) {
    if (isGlob(allowed) && isMigName(allowed)) {
      return NameSuggestion{allowed,
                            "NVIDIA's device plugin names MIG slices "
                            "nvidia.com/mig-<N>g.<M>gb",
                            true};
    }
  }
  return NameSuggestion{profile.gpu.resourceName,
                        "this pool offers no MIG slice by name; where MIG's single strategy "
                        "runs, slices are offered as " +
                            inQuotes(profile.gpu.resourceName)};
}

// A misspelling is at most this many letters off a name the pool offers.
constexpr size_t kNearMiss = 2;

// What the name misspells among the pool's names: a name users carry over
// from elsewhere, one a few letters off, one without a domain (the API
// server refuses it in a container anyway), or the vendor's domain cut
// short. nullopt for any other name of the pool's vendor: a device plugin
// may be configured to offer it (NVIDIA's renames its resources), and only a
// view of the cluster says whether some node does.
std::optional<NameSuggestion> suggestionFor(std::string_view name, const Profile& profile) {
  for (auto* known : {removedGpuName, sharedRenaming, migSlice}) {
    if (std::optional<NameSuggestion> suggestion = known(name, profile)) return *suggestion;
  }
  const Suggestion closest = closestName(name, offeredNames(profile, false));
  if (closest.distance <= kNearMiss || name.find('/') == std::string_view::npos) {
    return NameSuggestion{std::string(closest.name), ""};
  }
  if (std::optional<std::string> meant = misspeltAcceleratorName(name);
      meant && profile.allowsResource(*meant)) {
    return NameSuggestion{*meant, ""};
  }
  return std::nullopt;
}

// Whether a node of the cluster offers `name` (anywhere, not only in the
// pool): then the name is no misspelling, and the pool's capacity for it
// is AIA016's to judge.
bool someNodeOffers(const ClusterView* cluster, std::string_view name) {
  if (cluster == nullptr) return false;
  const std::optional<NodeCapacity> largest = cluster->largestNodeForResourceAnywhere(name);
  return largest && largest->devices > 0;
}

// Who does not offer the name: the cluster, when its Nodes are known (and
// none offers it); else the pool of the profile, or the vendor whose name it
// misspells. Only a view of the cluster says what the cluster offers.
std::string offeredBy(const ValidationContext& context, std::string_view meant) {
  if (context.cluster != nullptr && context.cluster->knows(ClusterKind::Node)) {
    return "any node of this cluster";
  }
  if (const AcceleratorVendor* vendor = vendorOfResource(meant);
      vendor != nullptr &&
      (context.profile == nullptr ||
       !placesAccelerator(*context.profile, AcceleratorAsk::ofResource(meant)))) {
    return std::string(vendor->name) + "'s device plugin";
  }
  if (context.profile == nullptr) return "any device plugin";
  return "the pool of profile " + context.profile->name;
}

Violation notOffered(const ValidationContext& context, const ResourceEntry& entry,
                     const NameSuggestion& suggestion) {
  const std::string name = inQuotes(entry.name);
  const std::string meant = suggestion.pattern ? "a name matching " + inQuotes(suggestion.name)
                                               : inQuotes(suggestion.name);
  std::string fix = "did you mean " + meant + "?";
  if (!suggestion.why.empty()) fix += " (" + suggestion.why + ")";
  return {resourceSectionFieldPath(context.view, entry.container, entry.section),
          name + inContainer(context.pod, entry.container) + " is not a resource " +
              offeredBy(context, suggestion.name) + " offers",
          std::move(fix), name + " is not offered; did you mean " + meant + "?"};
}

// With a view of the cluster's Nodes: no node offers `entry`'s name now.
std::optional<Violation> offeredByNoNode(const ValidationContext& context,
                                         const ResourceEntry& entry) {
  if (context.cluster == nullptr || !context.cluster->knows(ClusterKind::Node)) return std::nullopt;
  const std::string name = inQuotes(entry.name);
  Violation violation{
      resourceSectionFieldPath(context.view, entry.container, entry.section),
      "no node of this cluster offers " + name + inContainer(context.pod, entry.container) +
          " now, nor does the pool of profile " + context.profile->name + " name it, so the Pod " +
          "waits until a node whose device plugin offers it is added",
      "use a resource the pool's nodes offer (" + context.profile->gpu.resourceName +
          "), or add nodes that offer " + name,
      "no node offers " + name + " now; use " + inQuotes(context.profile->gpu.resourceName) +
          " or add such nodes"};
  violation.mayChange = true;
  return violation;
}

// A name the selected profile places (its vendor's, a near miss of its
// names, or one without a domain) that it does not allow: what its pool
// offers instead. nullopt when the name is not the profile's to judge.
std::optional<NameSuggestion> profileSuggestion(std::string_view name, const Profile* profile) {
  if (profile == nullptr || !placesAccelerator(*profile, AcceleratorAsk::ofResource(name))) {
    return std::nullopt;
  }
  return suggestionFor(name, *profile);
}

// AIA003: a misspelt accelerator resource name. No node offers
// "nvidia.com/gpus", so such a Pod stays Pending without a word. A name the
// selected profile places (its vendor's) but does not allow is judged
// against the profile's pool; any other name only when it misspells a name a
// known vendor offers ("amd.com/gpus"), never another vendor's real name
// (webhook/model/accelerator_vendors.h). The "did you mean" knows the names
// users carry over from elsewhere: the removed alpha.kubernetes.io/nvidia-gpu,
// the ".shared" name NVIDIA's device plugin gives time-sliced and MPS GPUs,
// and MIG slices written otherwise. With a cluster view, a name some node
// offers is never reported: it is not a misspelling, whatever the profile
// lists.
void checkAcceleratorName(const ValidationContext& context, std::vector<Violation>& out) {
  const Profile* profile = context.profile;
  std::vector<std::tuple<ContainerList, size_t, std::string_view>> reported;
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (profile != nullptr && profile->allowsResource(entry.name)) return;
    // A well-formed share of a GPU where sharing is forbidden is AIA013's.
    if (profile != nullptr && !profile->gpu.sharingAllowed && isSharedGpuResource(entry.name)) {
      return;
    }
    const auto key = std::make_tuple(entry.container.list, entry.container.index, entry.name);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) return;
    reported.push_back(key);
    if (someNodeOffers(context.cluster, entry.name)) return;
    if (std::optional<NameSuggestion> suggestion = profileSuggestion(entry.name, profile)) {
      out.push_back(notOffered(context, entry, *suggestion));
      return;
    }
    if (profile != nullptr && placesAccelerator(*profile, AcceleratorAsk::ofResource(entry.name))) {
      // A name of the pool's vendor that misspells none of its names: a
      // device plugin may be configured to offer it. A view of the cluster
      // says whether any node does now; one may yet be added, so it warns.
      if (std::optional<Violation> unoffered = offeredByNoNode(context, entry)) {
        out.push_back(std::move(*unoffered));
      }
      return;
    }
    // Another vendor's name, or no profile places it: only a misspelling of
    // a name a known vendor offers is reported; a real name of another
    // vendor is never "corrected" into one of the profile's.
    if (std::optional<std::string> meant = misspeltAcceleratorName(entry.name)) {
      out.push_back(notOffered(context, entry, NameSuggestion{*meant, ""}));
    }
  });
}

}  // namespace

extern const ValidatorDeclaration kAcceleratorNameValidator{.name = "accelerator-name",
                                                            .eachTemplate = checkAcceleratorName};

}  // namespace aiadmit
