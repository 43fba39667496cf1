#include "validators/gpu_limits_match.h"

#include "webhook/kube/quantity.h"

namespace aiadmit {

void GpuLimitsMatchValidator::check(const ValidationContext& context,
                                    std::vector<Violation>& out) const {
  context.pod.forEachAccelerator([&](const ResourceEntry& entry) {
    if (entry.section != "requests") return;
    const auto requested = Quantity::fromJson(entry.value);
    if (!requested) return;  // AIA004
    const JsonValue* limit = member(member(entry.container.resources(), "limits"), entry.name);
    if (limit != nullptr) {
      const auto limited = Quantity::fromJson(*limit);
      if (!limited || limited->sameValue(*requested)) return;
    }

    const std::string path = resourcesFieldPath(context.view, entry.container);
    const std::string name = inQuotes(entry.name);
    const std::string where = inContainer(context.pod, entry.container);
    if (limit == nullptr) {
      out.push_back(
          {AIA005, path + ".limits",
           name + where + " is requested (" + quantityText(entry.value) + ") without a limit",
           "set the limit to the same number; accelerators cannot be overcommitted",
           name + " has a request but no limit; set an equal limit"});
      return;
    }
    const std::string amounts =
        " requests " + quantityText(entry.value) + " but limits " + quantityText(*limit);
    out.push_back({AIA005, path + ".requests", name + where + amounts,
                   "make them equal, or set only the limit", name + amounts + "; make them equal"});
  });
}

}  // namespace aiadmit
