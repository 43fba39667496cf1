#include "validators/validator.h"

#include "webhook/model/quantity.h"
#include "webhook/model/resources.h"

namespace aiadmit {

namespace {

// What the rule holds to equal requests and limits: every name the API
// server takes for an extended resource, and the accelerators the rules
// know by their look even when the name is malformed ("gpu"), so that a
// misspelt GPU is judged here as well as by AIA003.
bool cannotBeOvercommitted(const PodReader& pod, const ResourceEntry& entry) {
  return isExtendedResourceName(entry.name) || pod.isAccelerator(entry);
}

Violation requestWithoutLimit(const ValidationContext& context, const ResourceEntry& entry) {
  const std::string name = inQuotes(entry.name);
  const std::string amount = quantityText(entry.value);
  return {resourceSectionFieldPath(context.view, entry.container, "limits"),
          name + inContainer(context.pod, entry.container) + " is requested (" + amount +
              ") without a limit, and no extended resource can be overcommitted: the API server "
              "refuses it",
          "add a limit of the same number (" + amount + "), or move the request to limits",
          name + " has a request but no limit; set an equal limit"};
}

Violation requestDifferentFromLimit(const ValidationContext& context, const ResourceEntry& entry,
                                    const JsonValue& limit) {
  const std::string name = inQuotes(entry.name);
  const std::string requested = quantityText(entry.value);
  const std::string limited = quantityText(limit);
  const std::string amounts = " requests " + requested + " but limits " + limited;
  return {resourceSectionFieldPath(context.view, entry.container, "requests"),
          name + inContainer(context.pod, entry.container) + amounts +
              ", and no extended resource can be overcommitted: the API server refuses it",
          "make both " + requested + " or both " + limited +
              ", or set only the limit (the request defaults to it)",
          name + amounts + "; make them equal"};
}

// AIA005: a request of an extended resource (a GPU of any vendor, an NPU, an
// FPGA, an RDMA device) must equal its limit, and needs one. No extended
// resource can be overcommitted: the API server refuses the difference, for
// a custom resource only when its operator creates the Pods, and with a
// message that does not say which value to change.
void checkGpuLimitsMatch(const ValidationContext& context, std::vector<Violation>& out) {
  context.pod.forEachResource([&](const ResourceEntry& entry) {
    if (entry.section != "requests" || !cannotBeOvercommitted(context.pod, entry)) return;
    const auto requested = Quantity::fromJson(entry.value);
    // A quantity that is no number is AIA004's for a GPU and the API
    // server's own error for anything else.
    if (!requested) return;
    const JsonValue* limit = member(member(entry.container.resources(), "limits"), entry.name);
    if (limit == nullptr) {
      out.push_back(requestWithoutLimit(context, entry));
      return;
    }
    const auto limited = Quantity::fromJson(*limit);
    if (!limited || limited->sameValue(*requested)) return;
    out.push_back(requestDifferentFromLimit(context, entry, *limit));
  });
}

}  // namespace

extern const ValidatorDeclaration kGpuLimitsMatchValidator{.name = "gpu-limits-match",
                                                           .eachTemplate = checkGpuLimitsMatch};

}  // namespace aiadmit
