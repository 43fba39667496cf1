#include "bench/bench_inputs.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "mutators/mutator.h"
#include "webhook/policy/profile_loader.h"

namespace aiadmit::bench {

std::string reviewPath(const std::string& name) {
  return std::string(AIADMIT_SOURCE_DIR) + "/bench/reviews/" + name + ".json";
}

std::string loadReview(const std::string& name) {
  std::ifstream in(reviewPath(name), std::ios::binary);
  if (!in) throw std::runtime_error("missing " + reviewPath(name));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string bigPodReview(size_t bytes) {
  std::string containers;
  size_t index = 0;
  while (containers.size() + 2048 < bytes) {
    if (index > 0) containers += ",";
    containers += R"({"name":"worker-)" + std::to_string(index) +
                  R"(","image":"ghcr.io/example/pipeline-stage:1.4.2","env":[)";
    for (int e = 0; e < 40; ++e) {
      if (e > 0) containers += ",";
      containers += R"({"name":"STAGE_SETTING_)" + std::to_string(e) + R"(","value":"value-)" +
                    std::to_string(index * 100 + static_cast<size_t>(e)) + R"("})";
    }
    containers += R"(],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}})";
    ++index;
  }
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
         R"("uid":"7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d","kind":{"group":"","version":"v1","kind":"Pod"},)"
         R"("resource":{"group":"","version":"v1","resource":"pods"},"name":"graph-0","namespace":"ml-serving",)"
         R"("operation":"CREATE","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},)"
         R"("object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"graph-0","namespace":"ml-serving",)"
         R"("annotations":{"aiadmit.dev/workload":"realtime"}},"spec":{"restartPolicy":"Always","containers":[)"
         R"({"name":"server","image":"ghcr.io/example/graph-server:1.0.0","ports":[{"containerPort":8080}],)"
         R"("resources":{"limits":{"nvidia.com/gpu":"1","memory":"16Gi"}}},)" +
         containers + R"(]}},"dryRun":false}})";
}

std::shared_ptr<const ProfileSet> profilesWithExtra(size_t extra) {
  const ProfileLoadResult shipped =
      loadProfileDirectory(std::string(AIADMIT_SOURCE_DIR) + "/profiles", mutationSwitches());
  if (!shipped.ok()) throw std::runtime_error("shipped profiles do not load");
  std::vector<Profile> profiles = shipped.set->profiles();
  const WorkloadClass classes[] = {WorkloadClass::Training, WorkloadClass::Batch,
                                   WorkloadClass::Realtime};
  for (size_t i = 0; i < extra; ++i) {
    Profile profile = profiles[i % shipped.set->profiles().size()];
    profile.workloadClass = classes[i % 3];
    profile.name = "team-" + std::to_string(i / 3) + "-" + std::string(className(classes[i % 3]));
    profile.scope.namespaces = {"team-" + std::to_string(i / 3)};
    profile.probes.enabled = profile.workloadClass == WorkloadClass::Realtime;
    profiles.push_back(std::move(profile));
  }
  ProfileLoadResult built = buildProfileSet(std::move(profiles), {}, "generated");
  if (!built.ok())
    throw std::runtime_error("generated profiles refused: " + built.errors[0].format());
  return built.set;
}

}  // namespace aiadmit::bench
