#include "validators/validator.h"

#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

// A slice the profile offers, for a fraction that wanted part of a GPU: a
// named one when the profile lists one, else the pattern it allows.
std::string offeredSlice(const Profile* profile) {
  if (profile == nullptr || !profile->gpu.sharingAllowed) return {};
  std::string pattern;
  for (const std::string& allowed : profile->gpu.allowedResources) {
    if (!isSharedGpuResource(allowed)) continue;
    if (!isGlob(allowed)) return inQuotes(allowed) + ": 1";
    if (pattern.empty()) pattern = "a slice matching " + inQuotes(allowed);
  }
  return pattern;
}

// AIA004: an accelerator quantity must be a whole number. Devices are not
// divisible: the API server refuses "0.5", "500m" or "-1" tersely. A 0 is
// no request (a container without the resource, as the API server, the
// scheduler and the device plugin take it), and not this rule's.
void checkGpuQuantity(const ValidationContext& context, std::vector<Violation>& out) {
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    // A 0 never gets here: the reader leaves it out, as a container without GPUs.
    const auto quantity = Quantity::fromJson(entry.value);
    if (quantity && !quantity->isNegative() && quantity->isWholeNumber()) return;
    if (entry.section == "requests") {
      // The same amount in limits was reported already.
      const JsonValue* limit = member(member(entry.container.resources(), "limits"), entry.name);
      if (limit != nullptr) {
        const auto limitQuantity = Quantity::fromJson(*limit);
        if ((limitQuantity && quantity && limitQuantity->sameValue(*quantity)) ||
            (!limitQuantity && !quantity)) {
          return;
        }
      }
    }
    const std::string amount = inQuotes(entry.name) + " is " + quantityText(entry.value);
    std::string problem = inQuotes(entry.name) + inContainer(context.pod, entry.container) +
                          " is " + quantityText(entry.value);
    std::string fix = "ask for a whole number of GPUs, such as 1";
    std::string brief = amount + "; ask for a whole number, such as 1";
    if (!quantity) {
      problem += ", which is not a quantity";
    } else if (quantity->isNegative()) {
      problem += ", but GPUs cannot be negative";
    } else {
      problem += ", but GPUs cannot be split into fractions";
      brief = amount + "; GPUs are whole, ask for 1 or more";
      if (const std::string slice = offeredSlice(context.profile); !slice.empty()) {
        fix =
            "ask for whole GPUs, or for " + (slice[0] == '"' ? "a slice such as " + slice : slice);
      }
    }
    out.push_back({resourceSectionFieldPath(context.view, entry.container, entry.section),
                   std::move(problem), std::move(fix), std::move(brief)});
  });
}

}  // namespace

extern const ValidatorDeclaration kGpuQuantityValidator{.name = "gpu-quantity",
                                                        .eachTemplate = checkGpuQuantity};

}  // namespace aiadmit
