// Gives the serving container of a realtime workload (the main container)
// the readiness and startup probes it lacks, so that a model server takes
// traffic only once its model is loaded, and is not restarted while it loads.
// The probes check the port the profile names, else the port the container
// serves on (PodReader::servingPort: one named for serving, else its first
// TCP port); a container with neither gets none (validation then explains,
// AIA009). Nor do the ranks of one multi-node server that share a template
// (ranksOfOneServer): only one of them serves, and a notice says so. The
// startup probe allows the profile's startup budget:
// failureThreshold = ceil(startupBudgetSeconds / periodSeconds).
#include "mutators/mutator.h"

#include <algorithm>
#include <optional>

#include "mutators/template_parts.h"

namespace aiadmit {

namespace {

JsonValue probeToJson(const ProbeSpec& spec, int port, int failureThreshold, JsonAllocator& alloc) {
  JsonValue probe(rapidjson::kObjectType);
  JsonValue handler(rapidjson::kObjectType);
  if (spec.handler == ProbeSpec::Handler::HttpGet) {
    setString(handler, "path", spec.path, alloc);
    handler.AddMember("port", port, alloc);
    setString(handler, "scheme", spec.scheme, alloc);
    probe.AddMember("httpGet", handler, alloc);
  } else {
    handler.AddMember("port", port, alloc);
    probe.AddMember("tcpSocket", handler, alloc);
  }
  probe.AddMember("periodSeconds", spec.periodSeconds, alloc);
  probe.AddMember("timeoutSeconds", spec.timeoutSeconds, alloc);
  probe.AddMember("failureThreshold", failureThreshold, alloc);
  return probe;
}

std::string describeProbe(const ProbeSpec& spec, int port) {
  if (spec.handler == ProbeSpec::Handler::HttpGet) {
    return (spec.scheme == "HTTPS" ? "https GET " : "http GET ") + spec.path + " on port " +
           std::to_string(port);
  }
  return "tcp on port " + std::to_string(port);
}

// Whether the template's Pods are the ranks of one multi-node server, where
// a probe would run on every rank and never pass on those that do not serve:
// then none is added, and a notice says why and what to add instead.
bool leftToRanks(MutationContext& context, const JsonValue& container) {
  const bool lacksOne =
      isUnset(member(&container, "readinessProbe")) || isUnset(member(&container, "startupProbe"));
  if (!lacksOne) return false;
  const std::optional<std::string> ranks = ranksOfOneServer(context.view(), context.pod());
  if (!ranks) return false;
  context.notice("no probes added, as its Pods are ranks (" + *ranks +
                 "): add probes that pass on every rank");
  return true;
}

bool addProbes(MutationContext& context) {
  const Profile& profile = context.profile;
  if (!profile.probes.enabled) return false;
  if (context.classification.workloadClass != WorkloadClass::Realtime) return false;
  JsonValue* container = mainContainer(context);
  if (container == nullptr || leftToRanks(context, *container)) return false;

  const Probes& probes = profile.probes;
  const std::string containerName(stringMember(container, "name"));
  bool changed = false;
  if (isUnset(member(container, "readinessProbe"))) {
    const std::optional<int> port =
        probes.readiness.port ? probes.readiness.port : PodReader::servingPort(*container);
    if (port) {
      setMember(
          *container, "readinessProbe",
          probeToJson(probes.readiness, *port, probes.readiness.failureThreshold, context.alloc),
          context.alloc);
      context.report("added readiness probe " + describeProbe(probes.readiness, *port) +
                     " to container " + containerName);
      changed = true;
    }
  }
  if (isUnset(member(container, "startupProbe"))) {
    const std::optional<int> port =
        probes.startup.port ? probes.startup.port : PodReader::servingPort(*container);
    if (port) {
      const int period = std::max(probes.startup.periodSeconds, 1);
      const int failureThreshold = std::max((probes.startupBudgetSeconds + period - 1) / period, 1);
      setMember(*container, "startupProbe",
                probeToJson(probes.startup, *port, failureThreshold, context.alloc), context.alloc);
      context.report("added startup probe " + describeProbe(probes.startup, *port) +
                     " to container " + containerName + ", " +
                     std::to_string(failureThreshold * period) + "s to start");
      changed = true;
    }
  }
  return changed;
}

}  // namespace

extern const MutatorDeclaration kRealtimeProbesMutator{
    "realtime-probes", {{"probes"}}, kInjectProbes, Runs::OnWorkloads, addProbes};

}  // namespace aiadmit
