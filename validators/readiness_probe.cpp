#include "validators/readiness_probe.h"

#include "validators/gpu_requests.h"

namespace aiadmit {

namespace {

bool declaresPort(const JsonValue& container) {
  const JsonValue* ports = member(&container, "ports");
  if (!isArray(ports)) return false;
  for (const JsonValue& port : ports->GetArray()) {
    if (member(&port, "containerPort") != nullptr) return true;
  }
  return false;
}

}  // namespace

void ReadinessProbeValidator::check(const ValidationContext& context,
                                    std::vector<Violation>& out) const {
  if (context.classification.workloadClass != WorkloadClass::Realtime) return;
  if (!asksForAccelerator(context.view.spec, context.profile)) return;
  const ContainerRef serving = mainContainer(context.view);
  if (serving.container == nullptr || isObject(member(serving.container, "readinessProbe"))) {
    return;
  }
  // Where the probes mutator can add one, /mutate has (or will have) done so.
  const Profile* profile = context.profile;
  const bool probesOn = profile != nullptr && profile->probes.enabled && profile->mutations.probes;
  const bool portKnown =
      declaresPort(*serving.container) || (profile != nullptr && profile->probes.readiness.port);
  if (probesOn && portKnown) return;

  const std::string_view name = stringMember(serving.container, "name");
  const std::string server = name.empty() ? std::string("the model server") : quoted(name);
  out.push_back({AIA009, containerFieldPath(context.kind, ContainerList::Containers, serving.index),
                 server + " has no readinessProbe, so it gets traffic before its model is loaded",
                 probesOn ? "declare its port under ports so aiadmit adds one, or add one"
                          : "add a readinessProbe that passes once the model is loaded",
                 server + " has no readinessProbe; " +
                     (probesOn ? "declare its port or add one" : "add one")});
}

}  // namespace aiadmit
