#include "validators/validator.h"

namespace aiadmit {

namespace {

// AIA009: a realtime GPU server without a readiness probe takes traffic
// before its model is loaded. Only where aiadmit could not inject one, and
// never on Pods that serve no traffic: an operator's workers (the table's
// roles without probes) or the ranks of a multi-node server that share its
// template (ranksOfOneServer).
void checkReadinessProbe(const ValidationContext& context, std::vector<Violation>& out) {
  if (context.classification.workloadClass != WorkloadClass::Realtime) return;
  // A 0 of a GPU asks for none: such a Pod is no GPU server.
  if (!context.pod.asksForAccelerator()) return;
  // Where the operator owns the Pods' readiness (KubeRay, KServe) or they
  // serve no traffic (an LWS group's workers), aiadmit does not ask for one.
  if (!context.view.allows(kInjectProbes)) return;
  const PodContainer* serving = context.pod.mainContainer().container;
  if (serving == nullptr || isObject(member(serving->json, "readinessProbe"))) return;
  // Nor where the template's Pods are the ranks of one multi-node server:
  // only one of them serves, and a probe on the template would never pass
  // on the others (the probes mutator leaves a notice instead).
  if (ranksOfOneServer(context.view, context.pod)) return;
  // Where the probes mutator can add one, /mutate has (or will have) done so.
  const Profile* profile = context.profile;
  const bool probesOn =
      profile != nullptr && profile->probes.enabled && profile->mutations.on("probes");
  // The probes mutator probes the port it serves on (a UDP-only server gets none).
  const bool portKnown = PodReader::servingPort(*serving->json).has_value() ||
                         (profile != nullptr && profile->probes.readiness.port);
  if (probesOn && portKnown) return;

  const std::string_view name = serving->name;
  const std::string server = name.empty() ? std::string("the model server") : inQuotes(name);
  out.push_back({containerFieldPath(context.view, *serving),
                 server + " has no readinessProbe, so it gets traffic before its model is loaded",
                 probesOn ? "declare its TCP port under ports so aiadmit adds one, or add one"
                          : "add a readinessProbe that passes once the model is loaded",
                 server + " has no readinessProbe; " +
                     (probesOn ? "declare its TCP port or add one" : "add one")});
}

}  // namespace

extern const ValidatorDeclaration kReadinessProbeValidator{.name = "readiness-probe",
                                                           .eachTemplate = checkReadinessProbe};

}  // namespace aiadmit
